import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { registerServiceWorker } from '../app/installed.ts'
import { LinkPage } from './LinkPage.tsx'
import '../styles.css'

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <LinkPage />
  </StrictMode>,
)

// For videos that play as they download (lib/video.ts): the worker answers their range requests.
registerServiceWorker()
