import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { Operator } from './Operator.tsx'
import '../styles.css'
import './admin.css'

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Operator />
  </StrictMode>,
)
