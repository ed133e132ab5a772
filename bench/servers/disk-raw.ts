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
import { serveParent, startOrDie, timedLoops, type LoopRun } from '../lib/child-side.ts'

/** Its result counts bytes (`units`), files (`operations`). */
export interface DiskRun extends LoopRun {
  readonly bytesPerFile: number
  readonly directory: string
}

const CHUNK = 64 * 1024

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

  const run = async ({ bytesPerFile, directory, ...loops }: DiskRun) => {
    const folder = path.join(directory, `run-${process.pid}-${fileNumber}`)
    await mkdir(folder, { recursive: true })
    try {
      // The clock stops when the last file is fsynced; the removal below is not timed.
      return await timedLoops(loops, async () => {
        await writeFile(path.join(folder, `file-${fileNumber++}`), bytesPerFile)
        return bytesPerFile
      })
    } finally {
      await rm(folder, { recursive: true, force: true })
    }
  }

  serveParent({}, { onRequest: (body) => run(body as DiskRun) })
})
