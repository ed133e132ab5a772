// The web app's build: two pages (the gallery and the operator page) and their workers, into
// web/dist, served by the server (src/http/web-app.ts). Hashed file names under assets/ are
// what lets the server cache them for a year. No inline script or style anywhere: the CSP
// (WEB_CSP) refuses both.
import react from '@vitejs/plugin-react'
import path from 'node:path'
import { defineConfig } from 'vite'

const web = import.meta.dirname

export default defineConfig({
  root: web,
  base: '/',
  plugins: [react()],
  build: {
    outDir: path.join(web, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    // Vite's preload polyfill is inline-free, but every browser the app supports has modulepreload.
    modulePreload: { polyfill: false },
    // Never inline an asset as a data: URL (the CSP's img-src and font-src refuse them).
    assetsInlineLimit: 0,
    // grid-lab.html: the grid alone over a synthetic album, for the browser tests (docs/web.md); no route serves it.
    rollupOptions: { input: { index: path.join(web, 'index.html'), admin: path.join(web, 'admin.html'), 'grid-lab': path.join(web, 'grid-lab.html') } },
    chunkSizeWarningLimit: 2048,
  },
  worker: { format: 'es' },
  server: { fs: { allow: [path.join(web, '..')] } },
})
