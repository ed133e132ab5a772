import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import '../styles.css'

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <main className="narrow">
      <h1>Coffer operator</h1>
    </main>
  </StrictMode>,
)
