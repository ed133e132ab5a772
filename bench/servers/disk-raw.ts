// The ceiling of the upload scenario: raw disk writes in a child of their own. Each of
// `concurrency` loops writes files of `bytesPerFile` bytes (64 KiB chunks of random bytes,
// the chunk size the uploads are streamed in) through an fs write stream that fsyncs each
// file before closing it (`flush: true`), into `directory` (beside the server's blob store:
// the same filesystem). The files go after the measurement, outside the measured time.
import { randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { once } from 'node:events'
import { serveParent, startOrDie } from '../lib/child-side.ts'

export interface DiskRun {
  readonly seconds: number
  readonly concurrency: number
  readonly bytesPerFile: number
  readonly directory: string
}

export interface DiskRunResult {
  readonly bytes: number
  readonly files: number
  readonly seconds: number
  readonly p50Ms: number
  readonly p99Ms: number
}

const CHUNK = 64 * 1024

function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0)
}

await startOrDie(async () => {
  const base = randomBytes(1024 * 1024)
  let fileNumber = 0

  async function writeFile(file: string, bytes: number): Promise<void> {
    // `flush`: the stream fsyncs the file before it closes it.
    const stream = createWriteStream(file, { flags: 'wx', mode: 0o600, highWaterMark: CHUNK, flush: true })
    const closed = once(stream, 'close')
    for (let written = 0; written < bytes; written += CHUNK) {
      const offset = written % base.length
      if (!stream.write(base.subarray(offset, offset + Math.min(CHUNK, bytes - written)))) await once(stream, 'drain')
    }
    stream.end()
    await closed
  }

  const run = async ({ seconds, concurrency, bytesPerFile, directory }: DiskRun): Promise<DiskRunResult> => {
    const folder = path.join(directory, `run-${process.pid}-${fileNumber}`)
    await mkdir(folder, { recursive: true })
    const started = performance.now()
    const deadline = started + seconds * 1000
    const latencies: number[] = []
    const ends: number[] = []
    const loop = async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now()
        await writeFile(path.join(folder, `file-${fileNumber++}`), bytesPerFile)
        const t1 = performance.now()
        latencies.push(t1 - t0)
        ends.push(t1)
      }
    }
    try {
      await Promise.all(Array.from({ length: concurrency }, loop))
    } finally {
      await rm(folder, { recursive: true, force: true })
    }
    // The clock stopped when the last file was fsynced; the removal above is not timed.
    const elapsed = (Math.max(...ends, started) - started) / 1000
    latencies.sort((a, b) => a - b)
    return { bytes: latencies.length * bytesPerFile, files: latencies.length, seconds: elapsed, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) }
  }

  serveParent({}, { onRequest: (body) => run(body as DiskRun) })
})
