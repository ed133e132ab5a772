// coffer blobs migrate --to s3://bucket/prefix, run as operators run it, from a blob folder
// into an S3-compatible bucket (s3rver): every blob arrives byte-identical; a second run copies
// nothing and does not read the folder's files again; blobs already in the bucket (an
// interrupted run) are skipped; a damaged or unreadable file is reported and not copied, the
// others are, and the exit status is 1. The database plays no part: the command reads none.
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openLocalFolderBlobStore, type LocalFolderBlobStore } from '../../src/blob-store/local-folder.ts'
import type { BlobStore } from '../../src/blob-store/port.ts'
import { openS3BlobStore } from '../../src/blob-store/s3.ts'
import { bytesText } from '../../src/cli/progress.ts'
import { sha256Hex } from '../../src/sdk/client.ts'
import { ciphertext } from '../support/albums.ts'
import { startBucket, type TestBucket } from '../support/bucket.ts'
import { coffer } from '../support/cli.ts'
import { testEngine } from '../support/database.ts'

let bucket: TestBucket
let directory: string
beforeAll(async () => {
  bucket = await startBucket()
  directory = await mkdtemp(path.join(tmpdir(), 'coffer-blobs-migrate-'))
})
afterAll(async () => {
  await bucket?.close()
  if (directory !== undefined) await rm(directory, { recursive: true, force: true })
})

interface Setup {
  /** The folder (DATA_DIR/blobs) and the blobs written into it, by hash. */
  readonly folder: LocalFolderBlobStore
  readonly blobs: ReadonlyMap<string, Buffer>
  /** The bucket's prefix, opened as a store. */
  readonly target: BlobStore
  /** The servers' environment while they still run on the folder: no BLOB_STORE_URL. */
  readonly env: Record<string, string>
  /** The command's --to. */
  readonly to: string
}

/** A data folder of its own holding `count` blobs, and a prefix of the bucket of its own. */
async function setUp(name: string, count: number): Promise<Setup> {
  const dataDir = path.join(directory, name)
  const folder = await openLocalFolderBlobStore(path.join(dataDir, 'blobs'))
  const blobs = new Map<string, Buffer>()
  for (let i = 0; i < count; i++) {
    const bytes = ciphertext(1_000 + i * 37_000)
    const hash = sha256Hex(bytes)
    expect(await folder.put(hash, bytes.length, [bytes])).toEqual({ kind: 'stored' })
    blobs.set(hash, bytes)
  }
  const { BLOB_STORE_URL: to, ...s3 } = bucket.env(name)
  return {
    folder,
    blobs,
    target: openS3BlobStore(bucket.settings(name)),
    env: { DATA_DIR: dataDir, ...s3, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' },
    to: to!,
  }
}

async function read(store: BlobStore, hash: string): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of await store.open(hash)) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

async function listed(store: BlobStore): Promise<string[]> {
  const hashes: string[] = []
  for await (const hash of store.list()) hashes.push(hash)
  return hashes
}

/** How the command writes the bytes of `blobs`. */
const bytesOf = (blobs: readonly Buffer[]): string => bytesText(blobs.reduce((sum, bytes) => sum + bytes.length, 0))

describe(`coffer blobs migrate (from the folder into a bucket) on ${testEngine}`, () => {
  it('copies every blob byte-identical; a second run copies none and reads no file again', async () => {
    const { folder, blobs, target, env, to } = await setUp('whole', 6)
    const first = await coffer(env, 'blobs', 'migrate', '--to', to)
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toContain(`blobs migrate: 6 copied (`)
    expect(first.stdout).toContain(`, 0 already there, 0 damaged; ${folder.root} to s3://coffer-test/whole/ in `)
    expect(first.stdout).toContain(`run it once more right before switching (it copies only what is new), then set BLOB_STORE_URL=${to} on every instance`)
    expect(first.stdout).not.toContain('problem:')
    expect(await listed(target)).toEqual([...blobs.keys()].sort())
    for (const [hash, bytes] of blobs) expect((await read(target, hash)).equals(bytes), hash).toBe(true)

    // Same size, other bytes: a run that read the file again would find it damaged.
    const [rewritten] = blobs.keys()
    await writeFile(folder.pathOf(rewritten!), ciphertext(blobs.get(rewritten!)!.length))
    const second = await coffer(env, 'blobs', 'migrate', '--to', to)
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toContain('blobs migrate: 0 copied (0 B), 6 already there, 0 damaged;')
    expect((await read(target, rewritten!)).equals(blobs.get(rewritten!)!)).toBe(true)
  })

  it('resumes: blobs already in the bucket are skipped, the rest copied; blobs written since are copied by the next run', async () => {
    const { folder, blobs, target, env, to } = await setUp('resumed', 5)
    const entries = [...blobs]
    // What an interrupted run had copied.
    for (const [hash, bytes] of entries.slice(0, 2)) expect(await target.put(hash, bytes.length, [bytes])).toEqual({ kind: 'stored' })
    const ran = await coffer(env, 'blobs', 'migrate', '--to', to)
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain(`blobs migrate: 3 copied (${bytesOf(entries.slice(2).map(([, bytes]) => bytes))}), 2 already there, 0 damaged;`)
    expect(await listed(target)).toEqual([...blobs.keys()].sort())
    for (const [hash, bytes] of blobs) expect((await read(target, hash)).equals(bytes), hash).toBe(true)

    // A server still on the folder stores one more blob; the run before switching copies it alone.
    const later = ciphertext(4_321)
    expect(await folder.put(sha256Hex(later), later.length, [later])).toEqual({ kind: 'stored' })
    const again = await coffer(env, 'blobs', 'migrate', '--to', to)
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain('blobs migrate: 1 copied (4.2 KiB), 5 already there, 0 damaged;')
    expect((await read(target, sha256Hex(later))).equals(later)).toBe(true)
  })

  it('reports a damaged and an unreadable file, copies the others, and exits 1', async () => {
    const { folder, blobs, target, env, to } = await setUp('damaged', 5)
    const [damaged, unreadable, ...intact] = [...blobs.keys()]
    await writeFile(folder.pathOf(damaged!), ciphertext(blobs.get(damaged!)!.length))
    // A folder where the file was: it opens, and every read of it fails.
    await unlink(folder.pathOf(unreadable!))
    await mkdir(folder.pathOf(unreadable!))
    const ran = await coffer(env, 'blobs', 'migrate', '--to', to)
    expect(ran.code, ran.stderr).toBe(1)
    expect(ran.stdout).toContain(
      `problem: blob ${damaged}: its bytes do not match its name (the SHA-256 of the bytes differs from the declared hash); not copied\n`,
    )
    expect(ran.stdout).toMatch(new RegExp(`problem: blob ${unreadable}: it cannot be read: .*EISDIR.*; not copied\n`))
    expect(ran.stdout).toContain(`blobs migrate: 3 copied (${bytesOf(intact.map((hash) => blobs.get(hash)!))}), 0 already there, 2 damaged;`)
    expect(ran.stdout).toContain('blobs migrate: 2 blobs were not copied (damaged in the folder): run coffer fsck --deep')
    expect(await listed(target)).toEqual([...intact].sort())
    for (const hash of intact) expect((await read(target, hash)).equals(blobs.get(hash)!), hash).toBe(true)
  })

  it('refuses a missing --to, a --to that is not s3://bucket/prefix (exit 2), and a BLOB_DIR that does not exist (exit 1)', async () => {
    const { env, to } = await setUp('refused', 0)
    const usages = [
      ['blobs', 'migrate'],
      ['blobs', 'migrate', '--to', 'https://example.com/x'],
      ['blobs', 'copy', '--to', to],
    ]
    for (const [i, ran] of (await Promise.all(usages.map((args) => coffer(env, ...args)))).entries()) {
      expect(ran.code, usages[i]!.join(' ')).toBe(2)
      expect(ran.stderr).toContain('usage: coffer <command> [arguments]')
    }
    const missing = path.join(directory, 'no-such-folder')
    const ran = await coffer({ ...env, BLOB_DIR: missing }, 'blobs', 'migrate', '--to', to)
    expect(ran.code).toBe(1)
    expect(ran.stderr).toBe(`coffer: BLOB_DIR=${missing} does not exist; run this with the servers' environment (DATA_DIR, BLOB_DIR)\n`)
  })
})
