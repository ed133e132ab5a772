// The client library end to end (docs/client-library.md): backupFile encrypts a file on disk and
// creates its asset; restoreFile + writeRestored bring it back byte for byte with its mtime, and
// refuse a tampered blob without leaving anything under the file's final name.
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findAssetEntry } from '../../src/client/albums.ts'
import { FileTransferError, restoreFile, type BackupTarget, type RestoreSource } from '../../src/client/files.ts'
import { backupFile } from '../../src/client/upload.ts'
import { generateMasterKey } from '../../src/client/format/keys.ts'
import { fileSource, writeRestored } from '../../src/client/node/files.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { flipStoredByte } from '../support/blobs.ts'

let server: TestServer
let work: string
let member: Uploader
let target: BackupTarget
let from: RestoreSource

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-client-library-'))
  member = await uploader(server, 'library')
  const albumId = await album(member)
  const masterKey = generateMasterKey()
  target = { client: member.client, identity: member.identity, userId: member.userId, deviceId: member.deviceId, masterKey, albumId }
  from = { client: member.client, masterKey, albumId, identityPublicKey: member.identity.publicKey }
})
afterAll(async () => {
  await server.close()
  await rm(work, { recursive: true, force: true })
})

/** A file of `size` random bytes with a random name, modified within a random millisecond (`mtimeMs`). */
async function randomFile(size: number): Promise<{ file: string; name: string; bytes: Buffer; mtimeMs: number }> {
  const folder = await mkdtemp(path.join(work, 'src-'))
  const name = `photo ${randomUUID().slice(0, 8)} é.jpg`
  const file = path.join(folder, name)
  const bytes = randomBytes(size)
  await writeFile(file, bytes)
  const mtimeMs = 946_684_800_000 + Math.floor(Math.random() * 1_000_000_000_000)
  await utimes(file, new Date(), (mtimeMs + 0.5) / 1000) // seconds in a double: the middle of the ms, clear of rounding
  return { file, name, bytes, mtimeMs }
}

describe('backupFile and restoreFile', () => {
  it.each([0, 1, 65_536, 1_048_576 + 12_345])('round-trips a file of %i bytes: same bytes, name, type and mtime', async (size) => {
    const original = await randomFile(size)
    const backedUp = await backupFile(target, await fileSource(original.file))
    const ciphertextSize = 22 + size + 16 * Math.max(1, Math.ceil(size / 65_536))
    expect(backedUp).toMatchObject({ status: 'stored', sentBytes: ciphertextSize, contentHash: createHash('sha256').update(original.bytes).digest('hex') })
    expect(await server.deps.blobs.size(backedUp.ciphertextHash!)).toBe(ciphertextSize)

    const entry = await findAssetEntry(member.client, target.albumId, backedUp.assetId)
    expect(entry).not.toBeNull()
    const restored = await restoreFile(from, entry!)
    expect(restored.metadata).toMatchObject({ name: original.name, size, type: 'image/jpeg', modified: original.mtimeMs })
    expect(restored.envelope).toMatchObject({ key_mode: 'wrapped', plaintext_size: size, chunk_size: 65_536, amk_version: 1, file_id: backedUp.assetId })

    const out = await mkdtemp(path.join(work, 'out-'))
    const written = await writeRestored(restored, out)
    expect(written).toBe(path.join(out, original.name))
    expect((await readFile(written)).equals(original.bytes)).toBe(true)
    expect(Math.floor((await stat(written)).mtimeMs)).toBe(original.mtimeMs)
    expect(await readdir(out)).toEqual([original.name])
  })

  it('refuses a flipped byte in the stored original, naming the file, and leaves nothing under its name', async () => {
    const original = await randomFile(200_000)
    const backedUp = await backupFile(target, await fileSource(original.file))
    await flipStoredByte(server, backedUp.ciphertextHash!, 100_000)

    const entry = await findAssetEntry(member.client, target.albumId, backedUp.assetId)
    const out = await mkdtemp(path.join(work, 'out-'))
    const error = await writeRestored(await restoreFile(from, entry!), out).then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(FileTransferError)
    expect((error as FileTransferError).fileName).toBe(original.name)
    expect((error as Error).message).toContain(`restore of "${original.name}"`)
    expect((error as Error).message).toMatch(/authenticat/)
    expect(await readdir(out)).toEqual([])
  })

  it('names the same content in the same album the same asset, and stores it once, with or without being told', async () => {
    const original = await randomFile(70_000)
    const first = await backupFile(target, await fileSource(original.file))
    // A second run that lost its record of the first: the server refuses the create as existing.
    const again = await backupFile(target, await fileSource(original.file))
    expect(again).toMatchObject({ status: 'present', assetId: first.assetId, sentBytes: 0, ciphertextHash: null })
    // A run that knows the album's assets does not even open an upload session.
    const before = (await member.client.storageUsage()).open_uploads
    const told = await backupFile(target, await fileSource(original.file), { isStored: (id) => id === first.assetId })
    expect(told).toMatchObject({ status: 'present', assetId: first.assetId })
    expect((await member.client.storageUsage()).open_uploads).toBe(before)
    const entries = (await member.client.feed(target.albumId, 0, 1000)).entries.filter((e) => e.asset_id === first.assetId)
    expect(entries).toHaveLength(1)
  })

  it('uploads derivatives under the file key and lists them in the metadata; keeps a relative path', async () => {
    const original = await randomFile(5_000)
    const thumbnail = randomBytes(3_000)
    const backedUp = await backupFile(
      target,
      { ...(await fileSource(original.file)), name: `2024/summer/${original.name}` },
      {
        describe: async () => ({
          captured: 1_700_000_000_000,
          width: 4000,
          height: 3000,
          derivatives: [{ kind: 'thumbnail', type: 'image/webp', bytes: thumbnail }],
        }),
      },
    )
    const restored = await restoreFile(from, (await findAssetEntry(member.client, target.albumId, backedUp.assetId))!)
    expect(restored.metadata).toMatchObject({ captured: 1_700_000_000_000, width: 4000, height: 3000, name: `2024/summer/${original.name}` })
    const entry = restored.metadata.blobs.find((b) => b.kind === 'thumbnail')
    expect(entry).toMatchObject({ type: 'image/webp', size: 3_000 })
    expect(Buffer.from((await restored.derivative('thumbnail'))!).equals(thumbnail)).toBe(true)
    expect(await restored.derivative('preview')).toBeNull()
    const out = await mkdtemp(path.join(work, 'out-'))
    expect(await writeRestored(restored, out)).toBe(path.join(out, '2024', 'summer', original.name))
    await expect(writeRestored({ ...restored, metadata: { ...restored.metadata, name: '../escape.jpg' } }, out)).rejects.toThrow(/not a relative path/)
  })

  it('refuses to restore under another master key, naming the asset', async () => {
    const original = await randomFile(10)
    const backedUp = await backupFile(target, await fileSource(original.file))
    const entry = await findAssetEntry(member.client, target.albumId, backedUp.assetId)
    const error = await restoreFile({ ...from, masterKey: generateMasterKey() }, entry!).then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(FileTransferError)
    expect((error as Error).message).toContain(`asset ${backedUp.assetId}`)
    expect((error as Error).message).toContain('authentication')
  })
})
