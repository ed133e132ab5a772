// The service worker (/sw.js; docs/decisions/0057-phone-and-installable.md). Three jobs, and no
// other:
//
// - The app shell offline: at install it caches index.html and the gallery's built files (the
//   list the build writes into this file, SHELL below), under a cache named by the build. The
//   page `/` comes from the network when it can, else from that cache; a file under /assets/ from
//   the cache, else the network. Nothing else is ever answered from or put into the Cache API:
//   no API answer, no blob, nothing of the person's, encrypted or not.
// - Streamed downloads (lib/save.ts; decision 0062): the page hands over one end of a
//   MessageChannel for a download id, then follows a link to /download/<id>; the answer is a
//   stream that asks the page for each next chunk. Held in this worker's memory while the
//   download runs, never cached; an id serves once.
// - Videos that play as they download and seek without fetching what they skip (lib/video.ts;
//   decision 0069): the page hands over one end of a MessageChannel for a video id, and sets a
//   video element's src to /video/<id>. Each range request the element makes is answered here
//   with at most VIDEO_ANSWER_MAX bytes (206), which the page fetches and decrypts: only the
//   chunks holding them. Held in memory while the page keeps the video open, never cached.
// - The share target: the manifest's `share_target` posts the shared files to /share. The POST
//   is answered here (it never reaches the server): the files are kept in this worker's memory
//   only (no storage), and the page is sent to #/share, which asks for them by postMessage. A
//   worker the browser stopped meanwhile has forgotten them, and the page says so.
//
// Typed by hand: the web app's TypeScript knows the DOM's types, not a service worker's.

interface ExtendableEvent extends Event {
  waitUntil(promise: Promise<unknown>): void
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request
  respondWith(response: Response | Promise<Response>): void
}
interface MessageFromPage extends ExtendableEvent {
  readonly data: unknown
  /** The page's end of a MessageChannel, when it asks for the shared files. */
  readonly ports: readonly MessagePort[]
}
interface WorkerScope {
  readonly location: Location
  skipWaiting(): Promise<void>
  readonly clients: { claim(): Promise<void> }
  addEventListener(type: 'install' | 'activate', listener: (event: ExtendableEvent) => void): void
  addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void
  addEventListener(type: 'message', listener: (event: MessageFromPage) => void): void
}

const scope = self as unknown as WorkerScope

/** Written by the build (web/vite.config.ts, shellList): the shell's paths and the build's version. */
const SHELL: { readonly version: string; readonly paths: readonly string[] } = JSON.parse('__COFFER_SHELL__')

const CACHE = `coffer-shell-${SHELL.version}`

scope.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE)
      await cache.addAll(SHELL.paths.map((shellPath) => new Request(shellPath, { cache: 'no-store' })))
      // A new build's worker takes over at once: the pages open now keep their files, the next load uses the new ones.
      await scope.skipWaiting()
    })(),
  )
})

scope.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name)
      await scope.clients.claim()
    })(),
  )
})

/** The files shared last, until the page has queued them (memory only). */
let shared: File[] | null = null

async function receiveShare(request: Request): Promise<Response> {
  try {
    const form = await request.formData()
    shared = form.getAll('photos').filter((entry): entry is File => entry instanceof File && entry.size > 0)
  } catch {
    shared = []
  }
  return Response.redirect(new URL('/#/share', scope.location.origin).href, 303)
}

async function shellPage(request: Request): Promise<Response> {
  try {
    return await fetch(request)
  } catch (error) {
    const cached = await caches.match('/', { cacheName: CACHE })
    if (cached === undefined) throw error
    return cached
  }
}

async function shellFile(request: Request): Promise<Response> {
  return (await caches.match(request, { cacheName: CACHE })) ?? fetch(request)
}

interface Download {
  readonly port: MessagePort
  readonly name: string
  readonly contentType: string
}

/** Downloads the page announced, until their link is followed (memory only). */
const downloads = new Map<string, Download>()

/** What the page sends on a download's channel (lib/save.ts). */
type FromPage =
  | { readonly type: 'chunk'; readonly chunk: Uint8Array<ArrayBuffer> }
  | { readonly type: 'end' }
  | { readonly type: 'error'; readonly message: string }

function download(id: string): Response {
  const announced = downloads.get(id)
  if (announced === undefined) return new Response('No such download.', { status: 404 })
  downloads.delete(id)
  const { port, name, contentType } = announced
  let answered: (() => void) | null = null
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        port.onmessage = (event: MessageEvent<FromPage>) => {
          const message = event.data
          if (message.type === 'chunk') controller.enqueue(message.chunk)
          else if (message.type === 'end') controller.close()
          else controller.error(new Error(message.message))
          answered?.()
        }
      },
      // One chunk asked for at a time: the next is asked once this one was taken.
      pull() {
        port.postMessage({ type: 'pull' })
        return new Promise<void>((resolve) => (answered = resolve))
      },
      cancel() {
        port.postMessage({ type: 'cancel' })
        port.close()
      },
    },
    { highWaterMark: 0 },
  )
  return new Response(body, {
    headers: {
      'content-type': contentType,
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    },
  })
}

/** A video the page opened, until it says done: its channel, size and type, and the range requests awaiting bytes. */
interface Video {
  readonly port: MessagePort
  readonly size: number
  readonly contentType: string
  readonly waiting: Map<number, { resolve: (bytes: Uint8Array<ArrayBuffer>) => void; reject: (error: Error) => void }>
  next: number
}

const videos = new Map<string, Video>()

/**
 * The most bytes one answer carries (a 206 shorter than asked is what a video element expects of
 * any server: it asks again from where the answer ended). 2 MiB: a few seconds of a phone's video,
 * 32 chunks of 64 KiB decrypted in one go; a seek fetches no more than this past where it lands.
 */
const VIDEO_ANSWER_MAX = 2 * 2 ** 20

/** What the page sends on a video's channel (lib/video.ts). */
type VideoFromPage =
  | { readonly type: 'bytes'; readonly request: number; readonly bytes: Uint8Array<ArrayBuffer> }
  | { readonly type: 'error'; readonly request: number; readonly message: string }
  | { readonly type: 'done' }

function askForBytes(video: Video, start: number, end: number): Promise<Uint8Array<ArrayBuffer>> {
  const request = video.next++
  return new Promise((resolve, reject) => {
    video.waiting.set(request, { resolve, reject })
    video.port.postMessage({ type: 'range', request, start, end })
  })
}

/** A Range header's first range (bytes=a-b, bytes=a-, bytes=-n), within the size; 'unsatisfiable', or null without one. */
function rangeOf(header: string | null, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (header === null) return null
  const match = /^bytes=(\d*)-(\d*)/.exec(header.trim())
  if (match === null || (match[1] === '' && match[2] === '')) return null
  const [start, end] =
    match[1] === '' ? [Math.max(0, size - Number(match[2])), size - 1] : [Number(match[1]), match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1)]
  return start > end || start >= size ? 'unsatisfiable' : { start, end }
}

async function video(id: string, request: Request): Promise<Response> {
  const open = videos.get(id)
  if (open === undefined) return new Response('This video is no longer open here: open it again.', { status: 404 })
  const headers = { 'content-type': open.contentType, 'accept-ranges': 'bytes', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }
  const range = rangeOf(request.headers.get('range'), open.size)
  if (range === 'unsatisfiable') return new Response(null, { status: 416, headers: { ...headers, 'content-range': `bytes */${open.size}` } })
  if (range === null) {
    // No Range header (a video element always sends one): the whole video, asked for piece by piece as it is read.
    let at = 0
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (at >= open.size) return controller.close()
          const bytes = await askForBytes(open, at, Math.min(open.size, at + VIDEO_ANSWER_MAX) - 1)
          at += bytes.length
          controller.enqueue(bytes)
        },
      },
      { highWaterMark: 0 },
    )
    return new Response(open.size === 0 ? null : body, { status: 200, headers: { ...headers, 'content-length': String(open.size) } })
  }
  const end = Math.min(range.end, range.start + VIDEO_ANSWER_MAX - 1)
  try {
    const bytes = await askForBytes(open, range.start, end)
    return new Response(bytes, {
      status: 206,
      headers: { ...headers, 'content-length': String(bytes.length), 'content-range': `bytes ${range.start}-${range.start + bytes.length - 1}/${open.size}` },
    })
  } catch (error) {
    return new Response((error as Error).message, { status: 502 })
  }
}

scope.addEventListener('fetch', (event) => {
  const { request } = event
  const url = new URL(request.url)
  if (url.origin !== scope.location.origin) return
  if (url.pathname === '/share' && request.method === 'POST') return event.respondWith(receiveShare(request))
  if (request.method !== 'GET') return
  if (url.pathname.startsWith('/download/')) return event.respondWith(download(url.pathname.slice('/download/'.length)))
  if (url.pathname.startsWith('/video/')) return event.respondWith(video(url.pathname.slice('/video/'.length), request))
  if (url.pathname === '/' && request.mode === 'navigate') return event.respondWith(shellPage(request))
  if (url.pathname.startsWith('/assets/') && SHELL.paths.includes(url.pathname)) return event.respondWith(shellFile(request))
  // Everything else (the API, blobs, the operator page): the network, never the cache.
})

// A 'keep-alive' message needs no answer: receiving it keeps the worker running through a long download.
scope.addEventListener('message', (event) => {
  const message = event.data as { readonly type?: string; readonly id?: string; readonly name?: string; readonly contentType?: string } | null
  const port = event.ports[0]
  if (message?.type === 'download' && port !== undefined && typeof message.id === 'string') {
    const id = message.id
    downloads.set(id, { port, name: String(message.name), contentType: String(message.contentType) })
    // Given up before its link was followed (its source refused): forgotten.
    port.onmessage = () => downloads.delete(id)
    port.postMessage({ type: 'ready' })
  } else if (message?.type === 'video' && port !== undefined && typeof message.id === 'string') {
    const id = message.id
    const size = Number((message as { size?: unknown }).size)
    const open: Video = { port, size, contentType: String(message.contentType), waiting: new Map(), next: 0 }
    videos.set(id, open)
    port.onmessage = (answer: MessageEvent<VideoFromPage>) => {
      const data = answer.data
      if (data.type === 'done') {
        videos.delete(id)
        for (const waiter of open.waiting.values()) waiter.reject(new Error('The video was closed.'))
        port.close()
        return
      }
      const waiter = open.waiting.get(data.request)
      open.waiting.delete(data.request)
      if (data.type === 'bytes') waiter?.resolve(data.bytes)
      else waiter?.reject(new Error(data.message))
    }
    port.postMessage({ type: 'ready' })
  } else if (message?.type === 'claim') {
    // A page this worker does not control (loaded while it was being installed, after its
    // activation had claimed the pages then open; or force-reloaded) asks to be taken over.
    event.waitUntil(scope.clients.claim())
  } else if (message?.type === 'shared-files') event.ports[0]?.postMessage({ type: 'shared-files', files: shared })
  else if (message?.type === 'shared-done') shared = null
})
