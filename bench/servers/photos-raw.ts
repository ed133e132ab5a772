// The ceiling of the backup and restore scenarios: what any client has to do with the same
// files, in one process of its own and nothing more. `encrypt` reads each file through an fs
// read stream in 64 KiB chunks, seals each chunk with AES-256-GCM (node:crypto, a random key per
// file, the chunk's index in the nonce), writes the sealed chunks to a file of its own in
// `directory`, fsyncs and closes it. `decrypt` reads those files back in sealed chunks, opens
// each (the tag checked) and writes the plaintext to `directory`, fsynced per file. Both work
// through their whole list once, `concurrency` files at a time. No hashing, no metadata, no
// network; and no thumbnails unless `derivatives`: then `encrypt` also describes each file as
// coffer-photos does (src/client/node/media.ts describeMedia: EXIF, a thumbnail and, for a large
// photo, a preview, made with sharp) and seals the derivatives after the original, in its file.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open } from 'node:fs/promises'
import path from 'node:path'
import { mediaTypeOf } from '../../src/client/node/files.ts'
import { describeMedia } from '../../src/client/node/media.ts'
import type { LoopRunResult } from '../lib/child-side.ts'
import { serveParent, startOrDie } from '../lib/child-side.ts'
import { inParallel } from '../lib/loop.ts'
import { percentile } from '../lib/stats.ts'

export interface PhotosRawRun {
  readonly kind: 'encrypt' | 'decrypt'
  /** encrypt: the library's files; decrypt: files an earlier `encrypt` of this child wrote. */
  readonly files: readonly string[]
  /** Where the output goes, one file per input (made if missing). */
  readonly directory: string
  readonly concurrency: number
  /** encrypt: make and seal the derivatives too. */
  readonly derivatives?: boolean
}

/** What a run answers: `operations` and `units` files, `bytes` of plaintext, each output file in the order of `files`. */
export type PhotosRawResult = LoopRunResult & { readonly bytes: number; readonly outputs: readonly string[] }

/** Plaintext bytes per sealed chunk, as coffer-photos' default chunk size. */
const CHUNK = 64 * 1024
const TAG_BYTES = 16

function nonce(index: number): Buffer {
  const bytes = Buffer.alloc(12)
  bytes.writeUInt32BE(index, 8)
  return bytes
}

await startOrDie(async () => {
  /** The key each encrypted file was sealed with, by its path. */
  const keys = new Map<string, Buffer>()

  async function transform(input: string, output: string, kind: PhotosRawRun['kind'], derivatives: boolean): Promise<number> {
    const key = kind === 'encrypt' ? randomBytes(32) : keys.get(input)
    if (key === undefined) throw new Error(`${input} was not encrypted by this child`)
    const handle = await open(output, 'w', 0o600)
    let plaintext = 0
    let index = 0
    try {
      for await (const piece of createReadStream(input, { highWaterMark: kind === 'encrypt' ? CHUNK : CHUNK + TAG_BYTES })) {
        const chunk = piece as Buffer
        if (kind === 'encrypt') {
          const cipher = createCipheriv('aes-256-gcm', key, nonce(index++))
          await handle.write(Buffer.concat([cipher.update(chunk), cipher.final(), cipher.getAuthTag()]))
          plaintext += chunk.length
        } else {
          const decipher = createDecipheriv('aes-256-gcm', key, nonce(index++))
          decipher.setAuthTag(chunk.subarray(chunk.length - TAG_BYTES))
          const plain = Buffer.concat([decipher.update(chunk.subarray(0, chunk.length - TAG_BYTES)), decipher.final()])
          await handle.write(plain)
          plaintext += plain.length
        }
      }
      if (derivatives) {
        for (const derivative of (await describeMedia(input, mediaTypeOf(input))).derivatives) {
          const cipher = createCipheriv('aes-256-gcm', key, nonce(index++))
          await handle.write(Buffer.concat([cipher.update(derivative.bytes), cipher.final(), cipher.getAuthTag()]))
        }
      }
      await handle.sync()
    } finally {
      await handle.close()
    }
    if (kind === 'encrypt') keys.set(output, key)
    return plaintext
  }

  const run = async ({ kind, files, directory, concurrency, derivatives = false }: PhotosRawRun): Promise<PhotosRawResult> => {
    await mkdir(directory, { recursive: true })
    const started = performance.now()
    const latencies: number[] = []
    let bytes = 0
    const outputs = await inParallel(files, concurrency, async (file, i) => {
      const t0 = performance.now()
      const output = path.join(directory, `${kind}-${i}`)
      const plaintext = await transform(file, output, kind, derivatives)
      bytes += plaintext // not `bytes += await ...`: that reads `bytes` before the await, losing the other lanes' counts
      latencies.push(performance.now() - t0)
      return output
    })
    const seconds = (performance.now() - started) / 1000
    latencies.sort((a, b) => a - b)
    return { operations: files.length, units: files.length, bytes, seconds, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), outputs }
  }

  serveParent({}, { onRequest: (body) => run(body as PhotosRawRun) })
})
