// What the web app reads of a video it backs up (docs/decisions/0069-video.md): its length, its
// frame size and a poster frame, by the browser's own player. A video element exists only on the
// page (a worker has none), so the frame is read here and handed to a gallery worker, which
// encodes the thumbnail and preview from it as it does a photo's. The player reads only what it
// needs of the file (its index and the frames about the poster's time), however large it is.
import type { MediaFacts } from '#photos/files.ts'
import { inWorker, transfer } from './pool.ts'

/** How long the player has to read the video's index, then to find the poster frame: past it, the video goes without. */
const STEP_TIMEOUT_MS = 15_000
/** The poster's time: one second in, or a tenth of a shorter video (a first frame is often black). */
const POSTER_AT_S = 1

const NO_FACTS: MediaFacts = {
  captured: null,
  capturedSource: null,
  capturedOffset: null,
  camera: null,
  width: null,
  height: null,
  duration: null,
  derivatives: [],
}

/** Resolves at the element's `event`, rejects at its error or after STEP_TIMEOUT_MS. */
function next(video: HTMLVideoElement, event: 'loadedmetadata' | 'seeked'): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (outcome: () => void) => () => {
      clearTimeout(timer)
      video.removeEventListener(event, onEvent)
      video.removeEventListener('error', onError)
      outcome()
    }
    const onEvent = done(resolve)
    const onError = done(() => reject(new Error(`the browser cannot read this video (${video.error?.message ?? 'unknown format'})`)))
    const timer = setTimeout(
      done(() => reject(new Error('the video took too long to read'))),
      STEP_TIMEOUT_MS,
    )
    video.addEventListener(event, onEvent)
    video.addEventListener('error', onError)
  })
}

/**
 * A video's length, dimensions and derivatives made from its poster frame. A video the browser
 * cannot decode (HEVC in Chromium, say) gets what could be read (its length, when the index was
 * read) and no derivatives: the grid shows the generic poster, and it is backed up all the same.
 */
export async function describeVideo(file: Blob): Promise<MediaFacts> {
  const url = URL.createObjectURL(file)
  const video = document.createElement('video')
  video.muted = true
  video.preload = 'metadata'
  video.playsInline = true
  let facts: MediaFacts = NO_FACTS
  try {
    const read = next(video, 'loadedmetadata')
    video.src = url
    await read
    const duration = Number.isFinite(video.duration) ? Math.round(video.duration * 1000) : null
    facts = { ...NO_FACTS, duration, width: video.videoWidth || null, height: video.videoHeight || null }
    if (video.videoWidth === 0) return facts // sound only
    const seeked = next(video, 'seeked')
    video.currentTime = Math.min(POSTER_AT_S, video.duration / 10) || 0
    await seeked
    const frame = await createImageBitmap(video)
    const derivatives = await inWorker((worker) => worker.derive(transfer(frame, [frame])))
    return { ...facts, derivatives }
  } catch {
    return facts
  } finally {
    video.removeAttribute('src')
    video.load()
    URL.revokeObjectURL(url)
  }
}
