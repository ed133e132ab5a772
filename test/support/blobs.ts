// The blob store of a test server, seen the same way whichever store it runs on (folder or
// bucket), for the suites that run a third time on S3; and the folder itself, for the tests
// that look at files.
import { PutObjectCommand } from '@aws-sdk/client-s3'
import { writeFile } from 'node:fs/promises'
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

/** Replaces what the store holds under `hash` with other bytes (damage, as a failing disk or a bad copy would do it). */
export async function overwriteStored(server: Pick<TestServer, 'deps'>, hash: string, bytes: Uint8Array): Promise<void> {
  const store = server.deps.blobs
  if (store.kind === 'folder') return writeFile((store as LocalFolderBlobStore).pathOf(hash), bytes)
  const bucket = store as S3BlobStore
  await bucket.client.send(new PutObjectCommand({ Bucket: bucket.bucket, Key: bucket.keyOf(hash), Body: bytes }))
}
