// A video played from its encrypted original as it downloads, seeking without fetching what it
// skips (docs/decisions/0069-video.md). The service worker (sw/sw.ts) answers the video element's
// range requests for /video/<id>; for each it asks this page, over a MessageChannel, for a range
// of the plaintext, which OriginalRanges (src/client/ranges.ts) fetches from the server with an
// HTTP Range request for only the chunks holding it and decrypts, each chunk authenticated at its
// place. The keys never leave the page; the worker holds bytes only while it hands them over.
import type { OpenedAsset } from '#photos/files.ts'
import { ClientFormatError } from '#photos/format/errors.ts'
import { OriginalRanges, type CiphertextRange } from '#photos/ranges.ts'
import { registerWorker } from '../app/installed.ts'

/**
 * How long the worker has to take the page over and the video: it answers at once when it runs,
 * but a slow phone (or a machine this busy: CI saw 3 s pass) can take seconds to start it, and
 * giving up means reading the whole original before it plays, far worse for a long video.
 */
const WORKER_WAIT_MS = 10_000
/** A paused video makes no requests: this keeps the worker (and what it holds of the video) running. */
const KEEP_ALIVE_MS = 20_000

export interface StreamedVideo {
  /** The element's src: the worker's /video/<id>. */
  readonly src: string
  /** Tells the worker the video is closed (the viewer moved on). */
  close(): void
}

/** What the worker sends on a video's channel (sw/sw.ts). */
type FromWorker = { readonly type: 'ready' } | { readonly type: 'range'; readonly request: number; readonly start: number; readonly end: number }

/** Why a video stopped: its bytes from the server are not the ones backed up. */
export class VideoTamperedError extends Error {
  override readonly name = 'VideoTamperedError'
}

/**
 * Opens a video for playing through the service worker; null when none controls this page (a
 * first visit before it took over, a browser without one): the caller then plays the whole
 * original, downloaded and decrypted first. `onError` hears of a range that could not be served
 * (the server's bytes failed to authenticate, the network failed); the element then stops with a
 * network error.
 */
export async function streamedVideo(asset: OpenedAsset, fetchCiphertext: CiphertextRange, onError: (error: Error) => void): Promise<StreamedVideo | null> {
  const worker = await controller()
  if (worker === null) return null
  const ranges = new OriginalRanges(asset, fetchCiphertext)
  const channel = new MessageChannel()
  const port = channel.port1
  let taken: (ready: boolean) => void = () => {}
  const ready = new Promise<boolean>((resolve) => {
    taken = resolve
    setTimeout(() => resolve(false), WORKER_WAIT_MS)
  })
  port.onmessage = async (event: MessageEvent<FromWorker>) => {
    const message = event.data
    if (message.type === 'ready') return taken(true)
    try {
      const bytes = (await ranges.read(message.start, message.end)).slice()
      port.postMessage({ type: 'bytes', request: message.request, bytes }, [bytes.buffer])
    } catch (caught) {
      const error =
        caught instanceof ClientFormatError
          ? new VideoTamperedError(`This video's bytes from the server are not the ones backed up (${caught.message}): playing stopped there.`, {
              cause: caught,
            })
          : (caught as Error)
      onError(error)
      port.postMessage({ type: 'error', request: message.request, message: error.message })
    }
  }
  const id = crypto.randomUUID()
  worker.postMessage({ type: 'video', id, size: ranges.size, contentType: asset.metadata.type }, [channel.port2])
  if (!(await ready)) {
    port.close()
    return null
  }
  const keepAlive = setInterval(() => worker.postMessage({ type: 'keep-alive' }), KEEP_ALIVE_MS)
  return {
    src: `/video/${id}`,
    close() {
      clearInterval(keepAlive)
      port.postMessage({ type: 'done' })
      port.close()
    },
  }
}

/**
 * The worker controlling this page; on a first visit, the one registered as it takes over (a
 * moment after the page loaded). A page that has none registered (its install failed: a file of
 * the shell it caches could not be fetched) registers it again: the browser never retries it
 * before the next load. A page an active worker does not control (loaded while the worker was
 * being installed, after its activation claimed the pages open then; or force-reloaded) asks it
 * to take the page over.
 */
async function controller(): Promise<ServiceWorker | null> {
  if (!('serviceWorker' in navigator)) return null
  const { serviceWorker } = navigator
  if (serviceWorker.controller !== null) return serviceWorker.controller
  // Listened for first: the worker may take over while the registration is read.
  const takenOver = new Promise((resolve) => {
    serviceWorker.addEventListener('controllerchange', resolve, { once: true })
    setTimeout(resolve, WORKER_WAIT_MS)
  })
  const registration = await serviceWorker.getRegistration()
  if (registration === undefined && !(await registerWorker())) return null
  registration?.active?.postMessage({ type: 'claim' })
  await takenOver
  return serviceWorker.controller
}

export const isVideo = (type: string): boolean => type.startsWith('video/')
