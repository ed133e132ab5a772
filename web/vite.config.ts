// The web app's build: three pages (the gallery, the operator page, a public link's page) and their workers, into
// web/dist, served by the server (src/http/web-app.ts). Hashed file names under assets/ are
// what lets the server cache them for a year. No inline script or style anywhere: the CSP
// (WEB_CSP) refuses both.
import react from '@vitejs/plugin-react'
import { createHash } from 'node:crypto'
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { defineConfig, type Plugin } from 'vite'

const web = import.meta.dirname

/**
 * The service worker (web/src/sw/sw.ts) is built as its own entry at the stable URL /sw.js, and
 * this writes into it the app shell it caches: `/`, the gallery's files under /assets/ (not the
 * operator page's, the link page's or the grid lab's), the manifest and the icons (web/public); and a version
 * made of them, so that every build whose files differ is a new worker (docs/decisions/0057).
 */
function shellList(): Plugin {
  return {
    name: 'coffer-shell-list',
    enforce: 'post',
    generateBundle(_options, bundle) {
      const worker = bundle['sw.js']
      const page = bundle['index.html']
      if (worker?.type !== 'chunk' || page?.type !== 'asset') throw new Error('the build has no sw.js or index.html')
      const assets = Object.keys(bundle)
        .filter((name) => name.startsWith('assets/') && !/^assets\/(admin|grid-lab|link)[-.]/.test(name) && !name.endsWith('.map'))
        .sort()
      const icons = readdirSync(path.join(web, 'public/icons'))
        .sort()
        .map((name) => `/icons/${name}`)
      const paths = ['/', ...assets.map((name) => `/${name}`), '/manifest.webmanifest', ...icons]
      const version = createHash('sha256').update(String(page.source)).update(paths.join('\n')).digest('hex').slice(0, 16)
      const shell = JSON.stringify({ version, paths })
      const code = worker.code.replace(/(["'`])__COFFER_SHELL__\1/, () => JSON.stringify(shell))
      if (code === worker.code) throw new Error('sw.js has no __COFFER_SHELL__ to replace')
      worker.code = code
    },
  }
}

export default defineConfig({
  root: web,
  base: '/',
  plugins: [react(), shellList()],
  build: {
    outDir: path.join(web, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    // Vite's preload polyfill is inline-free, but every browser the app supports has modulepreload.
    modulePreload: { polyfill: false },
    // Never inline an asset as a data: URL (the CSP's img-src and font-src refuse them).
    assetsInlineLimit: 0,
    // grid-lab.html: the grid alone over a synthetic album, for the browser tests (docs/web.md); no route serves it.
    // sw: the service worker, at /sw.js (its scope is the whole site), every other file under assets/ with its hash.
    rollupOptions: {
      input: {
        index: path.join(web, 'index.html'),
        admin: path.join(web, 'admin.html'),
        link: path.join(web, 'link.html'),
        'grid-lab': path.join(web, 'grid-lab.html'),
        sw: path.join(web, 'src/sw/sw.ts'),
      },
      output: { entryFileNames: (chunk) => (chunk.name === 'sw' ? 'sw.js' : 'assets/[name]-[hash].js') },
    },
    chunkSizeWarningLimit: 2048,
  },
  worker: { format: 'es' },
  server: { fs: { allow: [path.join(web, '..')] } },
})
