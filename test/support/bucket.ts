// A real S3-compatible endpoint for the tests: s3rver (from the npm registry) on a free port,
// its objects in a folder of its own. `COFFER_TEST_BLOBS=s3` runs the suites that touch blobs
// with every test server's blobs in such a bucket (server.ts).
import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, mkdtemp, rm, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import S3rver from 's3rver'
import type { BucketSettings } from '../../src/config.ts'

export const TEST_BUCKET = 'coffer-test'

export interface TestBucket {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string
  readonly port: number
  /** The server environment that stores blobs in this bucket under `prefix`. */
  env(prefix?: string): Record<string, string>
  /** The same as settings, for a store opened directly. */
  settings(prefix?: string): BucketSettings
  close(): Promise<void>
}

/** s3rver's fixed credentials, as the AWS SDK's own chain reads them (the server never reads them itself). */
export const S3RVER_CREDENTIALS_ENV = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' } as const

function setS3rverCredentials(): void {
  process.env.AWS_ACCESS_KEY_ID ??= S3RVER_CREDENTIALS_ENV.AWS_ACCESS_KEY_ID
  process.env.AWS_SECRET_ACCESS_KEY ??= S3RVER_CREDENTIALS_ENV.AWS_SECRET_ACCESS_KEY
}

/**
 * s3rver takes a range ending at byte 0 for one without an end (`options.end || Infinity`), so
 * it serves `bytes=0-0` whole where S3 answers one byte: that case gets its one byte.
 */
function servingFirstByteRanges(server: S3rver): void {
  const store = server.store
  const getObject = store.getObject.bind(store)
  store.getObject = async (bucket, key, options) => {
    if (options?.end !== 0) return getObject(bucket, key, options)
    const object = await getObject(bucket, key, { start: 0, end: 1 })
    if (object?.content == null) return object
    object.content.destroy()
    object.content = createReadStream(store.getResourcePath(bucket, key, 'object'), { start: 0, end: 0 })
    object.range = { start: 0, end: 0 }
    return object
  }
}

/**
 * s3rver answers a PUT once the body has passed through its hashing transform, before the file
 * that holds the object is written (its putObject resolves on the transform's 'finish', not the
 * file's): a copy or a read right after the answer can find the object empty or short, which is
 * how a blob just stored (staged, then copied to its address) was seen missing its bytes under
 * load. S3 answers a PUT once the object is stored: here the put answers once its file is
 * written and closed, then its metadata.
 */
function storingBeforeAnswering(server: S3rver): void {
  const store = server.store
  store.putObject = async (object) => {
    const file = store.getResourcePath(object.bucket, object.key, 'object')
    await mkdir(path.dirname(file), { recursive: true })
    const md5 = createHash('md5')
    let size = 0
    const content = Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content
    await pipeline(
      content,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          md5.update(chunk)
          size += chunk.length
          yield chunk
        }
      },
      createWriteStream(file),
    )
    const digest = md5.digest('hex')
    await store.putMetadata(object.bucket, object.key, object.metadata, digest)
    return { size, md5: digest }
  }
}

/**
 * s3rver copies into the destination file in place, so two copies to one key at once (two
 * puts of the same blob) fail with a 500, where S3's copies are atomic (the last one wins):
 * copies to one key take turns.
 */
function copyingOneAtATime(server: S3rver): void {
  const store = server.store
  const copyObject = store.copyObject.bind(store)
  const turns = new Map<string, Promise<unknown>>()
  store.copyObject = (srcBucket, srcKey, destBucket, destKey, replacementMetadata) => {
    const key = `${destBucket}/${destKey}`
    const copied = (turns.get(key) ?? Promise.resolve()).catch(() => {}).then(() => copyObject(srcBucket, srcKey, destBucket, destKey, replacementMetadata))
    turns.set(key, copied)
    void copied
      .finally(() => {
        if (turns.get(key) === copied) turns.delete(key)
      })
      .catch(() => {})
    return copied
  }
}

/**
 * s3rver removes the folders a delete leaves empty, and a write into one of them at that moment
 * (another put's staging object) fails to open its file, an error s3rver does not catch. S3 has
 * no folders: a delete removes the object's files only.
 */
function deletingWithoutFolders(server: S3rver): void {
  const store = server.store
  store.deleteObject = async (bucket, key) => {
    const files = (['object', 'object.md5', 'metadata.json'] as const).map((resource) => store.getResourcePath(bucket, key, resource))
    await Promise.all(files.map((file) => unlink(file).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error)))))
  }
}

export async function startBucket(): Promise<TestBucket> {
  setS3rverCredentials()
  const directory = await mkdtemp(path.join(tmpdir(), 'coffer-s3rver-'))
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: TEST_BUCKET }] })
  servingFirstByteRanges(server)
  storingBeforeAnswering(server)
  copyingOneAtATime(server)
  deletingWithoutFolders(server)
  const { port } = await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  return {
    endpoint,
    port,
    env: (prefix = '') => ({ BLOB_STORE_URL: `s3://${TEST_BUCKET}/${prefix}`, S3_ENDPOINT: endpoint, S3_REGION: 'us-east-1', S3_FORCE_PATH_STYLE: 'true' }),
    settings: (prefix = '') => ({
      bucket: TEST_BUCKET,
      prefix: prefix === '' ? '' : `${prefix.replace(/\/$/, '')}/`,
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
    }),
    async close() {
      await server.close()
      await rm(directory, { recursive: true, force: true })
    },
  }
}

/** Whether this run stores the test servers' blobs in a bucket (the `s3` project of vitest.config.ts). */
export const testBlobsInBucket = process.env.COFFER_TEST_BLOBS === 's3'
