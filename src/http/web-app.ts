// The web app (web/, built by Vite into web/dist when the project is installed): the gallery at
// `/`, the operator page at `/admin` and a public link's page at `/s/<link id>`, each an HTML page that is never cached (a new release
// must be picked up at once), and the files they load under `/assets/`, whose names carry their
// content hash and are therefore cached for a year. Every page answers with WEB_CSP. None of
// this is an API operation: the routes are left out of the OpenAPI document. Beside them, what
// makes the gallery installable (docs/decisions/0057): its manifest, its icons and its service
// worker at /sw.js, none of them cached (a new release's worker is picked up at the next load).
import fastifyStatic from '@fastify/static'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { existsSync } from 'node:fs'
import path from 'node:path'

/** Where `npm install` (the prepare script) builds the app. */
export const WEB_DIST = path.resolve(import.meta.dirname, '../../web/dist')

/**
 * Only this origin's scripts, styles, workers and connections; no inline script or style, no
 * eval, no plug-ins, no framing. Images may be `blob:` URLs: thumbnails and photos are decrypted
 * in the page and shown from object URLs. Media the same: a video plays from /video/<id>, which
 * the app's service worker answers (decrypted in the page), or from an object URL; a video picked
 * for upload is read from one for its poster. `form-action 'none'`: every form is handled by script.
 */
export const WEB_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** Headers of every page and asset besides Cache-Control (http/response-headers.ts sets that). */
const PAGE_HEADERS = {
  'content-security-policy': WEB_CSP,
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
} as const

const hidden = { schema: { hide: true } }

function page(reply: FastifyReply, file: string): FastifyReply {
  return reply.headers(PAGE_HEADERS).sendFile(file, { cacheControl: false })
}

/**
 * Serves the built app from `root`. When it is not built (installed with --ignore-scripts, or
 * a checkout that never ran `npm install`), says so once and serves nothing: `/` is then the
 * usual 404 problem, and the API is unaffected.
 */
export async function registerWebApp(app: FastifyInstance, root: string = WEB_DIST): Promise<void> {
  if (!existsSync(path.join(root, 'index.html'))) {
    app.log.warn({ web_dist: root }, 'the web app is not built, so / serves nothing: run `npm run build:web` (npm install does it)')
    return
  }
  await app.register(fastifyStatic, { root, serve: false, index: false, wildcard: false })
  app.get('/', hidden, (_request, reply) => page(reply, 'index.html'))
  app.get('/admin', hidden, (_request, reply) => page(reply, 'admin.html'))
  // A public link's page (decision 0068): its id in the path, its key in the fragment, which never comes here.
  app.get('/s/:link_id', hidden, (_request, reply) => page(reply, 'link.html'))
  app.get('/sw.js', hidden, (_request, reply) => page(reply, 'sw.js'))
  app.get('/manifest.webmanifest', hidden, (_request, reply) => page(reply, 'manifest.webmanifest'))
  app.get<{ Params: { name: string } }>('/icons/:name', hidden, (request, reply) => page(reply, `icons/${request.params.name}`))
  app.get<{ Params: { '*': string } }>('/assets/*', { ...hidden, config: { cache: 'immutable' } }, (request, reply) =>
    page(reply, `assets/${request.params['*']}`),
  )
}
