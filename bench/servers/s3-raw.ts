// The ceiling of the upload scenario's bucket row: the same bytes PUT straight to the same
// bucket by one process. Each of `concurrency` loops uploads objects of `bytesPerObject` bytes
// (64 KiB chunks of random bytes, the chunk size the uploads are streamed in) with lib-storage's
// Upload, the part size and parts in flight of the server's store, over a client configured as
// the store configures its own. No hashing, no staging copy: one multipart upload per object.
// Its environment has the bucket's credentials (servers/s3rver.ts); the objects go after the
// measurement, outside the measured time.
import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { DeleteObjectCommand } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { openS3BlobStore, PART_SIZE, PARTS_IN_FLIGHT } from '../../src/blob-store/s3.ts'
import type { BucketSettings } from '../../src/config.ts'
import { serveParent, startOrDie, timedLoops, type LoopRun } from '../lib/child-side.ts'

/** Its result counts bytes (`units`), objects (`operations`). */
export interface BucketRun extends LoopRun {
  readonly bytesPerObject: number
  readonly settings: BucketSettings
}

const CHUNK = 64 * 1024

await startOrDie(async () => {
  const base = randomBytes(1024 * 1024)
  let objectNumber = 0

  async function* chunks(bytes: number): AsyncGenerator<Buffer> {
    for (let written = 0; written < bytes; written += CHUNK) {
      const offset = written % base.length
      yield base.subarray(offset, offset + Math.min(CHUNK, bytes - written))
    }
  }

  const run = async ({ bytesPerObject, settings, ...loops }: BucketRun) => {
    // Only its client: the store's own put (staging, hashing, copy) is the subject's.
    const { client, bucket } = openS3BlobStore(settings)
    const keys: string[] = []
    try {
      // The clock stops when the last upload is complete; the removal below is not timed.
      return await timedLoops(loops, async () => {
        const key = `${settings.prefix}object-${process.pid}-${objectNumber++}`
        keys.push(key)
        const upload = new Upload({
          client,
          params: { Bucket: bucket, Key: key, Body: Readable.from(chunks(bytesPerObject)), ContentType: 'application/octet-stream' },
          partSize: PART_SIZE,
          queueSize: PARTS_IN_FLIGHT,
        })
        await upload.done()
        return bytesPerObject
      })
    } finally {
      for (const key of keys) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }))
      client.destroy()
    }
  }

  serveParent({}, { onRequest: (body) => run(body as BucketRun) })
})
