// The blob store of a test server, seen the same way whichever store it runs on (folder or
// bucket), for the suites that run a third time on S3; and the folder itself, for the tests
// that look at files.
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3'
import { readdir, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { LocalFolderBlobStore } from '../../src/blob-store/local-folder.ts'
import type { S3BlobStore } from '../../src/blob-store/s3.ts'
import type { TestServer } from './server.ts'

/** The server's folder store; a test that looks at files runs on the folder only. */
export function folderOf(server: Pick<TestServer, 'deps'>): LocalFolderBlobStore {
  const store = server.deps.blobs
  if (store.kind !== 'folder') throw new Error(`this test looks at the blob folder's files; the server stores blobs in ${store.location}`)
  return store as LocalFolderBlobStore
}

/** The bytes stored under `hash`, or null when the store has no such blob. */
export async function storedBytes(server: Pick<TestServer, 'deps'>, hash: string): Promise<Buffer | null> {
  if ((await server.deps.blobs.size(hash)) === null) return null
  const chunks: Buffer[] = []
  for await (const chunk of await server.deps.blobs.open(hash)) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

export async function isStored(server: Pick<TestServer, 'deps'>, hash: string): Promise<boolean> {
  return (await server.deps.blobs.size(hash)) !== null
}

/**
 * The account still has the blob: its owner row, and its bytes in the store or, for a
 * provenance blob, in the database (decision 0038).
 */
export async function isKept(server: Pick<TestServer, 'deps'>, ownerId: string, hash: string): Promise<boolean> {
  if (!(await server.deps.storage.ownedBlobHashes(ownerId, [hash])).has(hash)) return false
  return (await isStored(server, hash)) || (await server.deps.storage.heldManifests([hash], ownerId)).has(hash)
}

/** The hash of every stored blob, in hash order (the store's own list). */
export async function storedHashes(server: Pick<TestServer, 'deps'>): Promise<string[]> {
  const hashes: string[] = []
  for await (const hash of server.deps.blobs.list()) hashes.push(hash)
  return hashes
}

/** The names of the writes in progress (or left behind): a folder's tmp/ files, a bucket's staging objects. */
export async function writesInProgress(server: Pick<TestServer, 'deps'>): Promise<string[]> {
  const store = server.deps.blobs
  if (store.kind === 'folder') return readdir(`${(store as LocalFolderBlobStore).root}/tmp`)
  const bucket = store as S3BlobStore
  const listed = await bucket.client.send(new ListObjectsV2Command({ Bucket: bucket.bucket, Prefix: bucket.stagingPrefix }))
  return (listed.Contents ?? []).map((object) => (object.Key ?? '').slice(bucket.stagingPrefix.length))
}

/** The parts the store holds (decision 0034), as `<upload id>/<hash>/<name>`, sorted. */
export async function partFiles(server: Pick<TestServer, 'deps'>): Promise<string[]> {
  const store = server.deps.blobs
  if (store.kind === 'folder') {
    const root = `${(store as LocalFolderBlobStore).root}/parts`
    const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return []
      throw error
    })
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
      .sort()
  }
  const bucket = store as S3BlobStore
  const listed = await bucket.client.send(new ListObjectsV2Command({ Bucket: bucket.bucket, Prefix: bucket.partsPrefix }))
  return (listed.Contents ?? []).map((object) => (object.Key ?? '').slice(bucket.partsPrefix.length)).sort()
}

/**
 * The blob's size and when the store last wrote it: a file's modification time, an object's
 * LastModified and metadata (the publish stamp, in ms). A blob written again reads differently.
 */
export async function storedVersion(server: Pick<TestServer, 'deps'>, hash: string): Promise<string> {
  const store = server.deps.blobs
  if (store.kind === 'folder') {
    const file = await stat((store as LocalFolderBlobStore).pathOf(hash))
    return `${file.size}:${file.mtimeMs}`
  }
  const bucket = store as S3BlobStore
  const object = await bucket.client.send(new HeadObjectCommand({ Bucket: bucket.bucket, Key: bucket.keyOf(hash) }))
  return `${object.ContentLength}:${object.LastModified?.getTime()}:${JSON.stringify(object.Metadata)}`
}

/** Replaces what the store holds under `hash` with other bytes (damage, as a failing disk or a bad copy would do it). */
export async function overwriteStored(server: Pick<TestServer, 'deps'>, hash: string, bytes: Uint8Array): Promise<void> {
  const store = server.deps.blobs
  if (store.kind === 'folder') return writeFile((store as LocalFolderBlobStore).pathOf(hash), bytes)
  const bucket = store as S3BlobStore
  await bucket.client.send(new PutObjectCommand({ Bucket: bucket.bucket, Key: bucket.keyOf(hash), Body: bytes }))
}

/** Inverts every bit of the stored byte at `position` (twice restores it). */
export async function flipStoredByte(server: Pick<TestServer, 'deps'>, hash: string, position: number): Promise<void> {
  const bytes = await storedBytes(server, hash)
  if (bytes === null) throw new Error(`blob ${hash} is not in the store`)
  bytes[position] = bytes[position]! ^ 0xff
  await overwriteStored(server, hash, bytes)
}

/** Deletes the blob behind the server's back (a file lost, an object removed by hand). */
export async function deleteStored(server: Pick<TestServer, 'deps'>, hash: string): Promise<void> {
  if (!(await server.deps.blobs.remove(hash))) throw new Error(`blob ${hash} is not in the store`)
}
