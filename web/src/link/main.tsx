import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { LinkPage } from './LinkPage.tsx'
import '../styles.css'

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <LinkPage />
  </StrictMode>,
)
