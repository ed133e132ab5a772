// Saving a stream as a file without holding it (docs/decisions/0062-selection-and-zip-downloads.md):
// - where the browser has the File System Access API (Chromium), the save picker: the bytes go
//   to a FileSystemWritableFileStream as they come (the browser writes a temporary file and puts
//   it under the chosen name only once it is closed, so a failed save leaves nothing);
// - elsewhere, a streamed download through the app's service worker (sw/sw.ts, /download/<id>):
//   the page hands the worker one end of a MessageChannel, a link to /download/<id> starts the
//   browser's download, and the worker's answer is a stream that asks the page for each next
//   chunk, so no more than a chunk is ever in flight; an error ends the download as failed;
// - with no service worker (a private window in some browsers), the bytes gathered as a Blob (the
//   browser may page it to disk) and saved from an object URL: the one path that is not bounded.
// The picker needs the click's user activation: chooseTarget is called first, before any request.

/** Where a save went: a file the person chose, or the browser's downloads. */
export type SavedWhere = 'file' | 'downloads'

export interface SaveTarget {
  readonly where: SavedWhere
  readonly writable: WritableStream<Uint8Array>
}

/** Chromium's save picker (not in TypeScript's DOM types). */
type SavePicker = (options: {
  suggestedName: string
  types?: { description: string; accept: Record<string, string[]> }[]
}) => Promise<{ createWritable(): Promise<WritableStream<Uint8Array>> }>

/** How long a download waits for the service worker to start (the app's first visit installs it). */
const WORKER_WAIT_MS = 5000
/** A message to the worker this often keeps a browser from stopping it in the middle of a long download. */
const KEEP_ALIVE_MS = 20_000

/**
 * Asks where to save `name` (the picker, where there is one): null when the person cancelled.
 * Call it in the click's task, before anything is awaited.
 */
export async function chooseTarget(name: string, type: string): Promise<SaveTarget | null> {
  const picker = (globalThis as { showSaveFilePicker?: SavePicker }).showSaveFilePicker
  if (picker !== undefined) {
    const extension = name.slice(name.lastIndexOf('.'))
    try {
      const handle = await picker({ suggestedName: name, types: [{ description: name, accept: { [type]: [extension] } }] })
      return { where: 'file', writable: await handle.createWritable() }
    } catch (error) {
      if (error instanceof DOMException && error.name === 'AbortError') return null
      throw error
    }
  }
  const worker = await activeWorker()
  return { where: 'downloads', writable: worker === null ? blobDownload(name, type) : await workerDownload(worker, name, type) }
}

/**
 * Saves what `open` gives to a target chosen first (chooseTarget): the bytes written, or null
 * when the person cancelled the picker. A source that fails aborts the target: nothing is kept.
 */
export async function saveStream(
  name: string,
  type: string,
  open: () => Promise<ReadableStream<Uint8Array>>,
): Promise<{ where: SavedWhere; bytes: number } | null> {
  const target = await chooseTarget(name, type)
  if (target === null) return null
  let source: ReadableStream<Uint8Array>
  try {
    source = await open()
  } catch (error) {
    await target.writable.abort(error).catch(() => {})
    throw error
  }
  let bytes = 0
  const counted = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      bytes += chunk.length
      controller.enqueue(chunk)
    },
  })
  await source.pipeThrough(counted).pipeTo(target.writable)
  return { where: target.where, bytes }
}

/** An async iterable of bytes as a ReadableStream read only as fast as its reader takes it. */
export function streamOf(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await iterator.next()
        if (done) controller.close()
        else controller.enqueue(value)
      },
      async cancel(reason) {
        await iterator.return?.(reason)
      },
    },
    { highWaterMark: 0 },
  )
}

async function activeWorker(): Promise<ServiceWorker | null> {
  if (!('serviceWorker' in navigator)) return null
  const registration = await Promise.race([navigator.serviceWorker.ready, new Promise<null>((resolve) => setTimeout(() => resolve(null), WORKER_WAIT_MS))])
  return registration?.active ?? null
}

/** What the worker says on the channel (sw/sw.ts). */
type FromWorker = { readonly type: 'ready' } | { readonly type: 'pull' } | { readonly type: 'cancel' }

/** The page's side of a download the service worker answers: each write waits for the worker to ask for it. */
async function workerDownload(worker: ServiceWorker, name: string, type: string): Promise<WritableStream<Uint8Array>> {
  const id = crypto.randomUUID()
  const channel = new MessageChannel()
  const port = channel.port1
  let asked = 0
  let cancelled = false
  let wake: (() => void) | null = null
  const ready = new Promise<void>((resolve) => {
    port.onmessage = (event: MessageEvent<FromWorker>) => {
      if (event.data.type === 'ready') resolve()
      else if (event.data.type === 'pull') asked++
      else cancelled = true
      wake?.()
    }
  })
  worker.postMessage({ type: 'download', id, name, contentType: type }, [channel.port2])
  await ready
  const keepAlive = setInterval(() => worker.postMessage({ type: 'keep-alive' }), KEEP_ALIVE_MS)
  // The download starts with the first bytes: a source refused before them (a rate limit) leaves no failed download behind.
  let started = false
  const start = () => {
    if (started) return
    started = true
    // A plain navigation, not <a download>: Chromium sends a download link's request past the
    // service worker; the answer's Content-Disposition makes the navigation a download instead.
    const link = document.createElement('a')
    link.href = `/download/${id}`
    link.click()
  }
  const done = () => {
    clearInterval(keepAlive)
    port.close()
  }
  return new WritableStream<Uint8Array>({
    async write(chunk) {
      start()
      while (asked === 0 && !cancelled) await new Promise<void>((resolve) => (wake = resolve))
      if (cancelled) throw new Error('The download was cancelled.')
      asked--
      // A copy the port can take whole: the chunk may be a view into a larger buffer still in use.
      const copy = chunk.slice()
      port.postMessage({ type: 'chunk', chunk: copy }, [copy.buffer])
    },
    close() {
      start()
      port.postMessage({ type: 'end' })
      done()
    },
    abort(reason) {
      port.postMessage({ type: 'error', message: String(reason) })
      done()
    },
  })
}

/** Without a service worker: the bytes gathered in a Blob, then saved as a download. */
function blobDownload(name: string, type: string): WritableStream<Uint8Array> {
  const parts: Uint8Array<ArrayBuffer>[] = []
  return new WritableStream<Uint8Array>({
    write(chunk) {
      parts.push(chunk.slice())
    },
    close() {
      const url = URL.createObjectURL(new Blob(parts, { type }))
      const link = document.createElement('a')
      link.href = url
      link.download = name
      link.click()
      // The download has its own copy once started.
      setTimeout(() => URL.revokeObjectURL(url), 60_000)
    },
  })
}
