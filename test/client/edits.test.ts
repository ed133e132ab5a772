// deleteFile and replaceFile (src/client/edits.ts) and the protocol handling of every write
// (src/client/protocol.ts), against a real server: a replace keeps the asset id and restores
// the new bytes, a delete takes the asset out of the album, a write someone else made meanwhile
// is continued from, a retained asset is refused with its date, and a 426 or an upgrade window
// on the way is carried out without anyone doing anything.
import { randomBytes } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { feedEntries, findAssetEntry, liveEntries, openAlbum, type Library } from '../../src/client/albums.ts'
import { AssetNotFoundError, AssetRetainedError, deleteFile, replaceFile } from '../../src/client/edits.ts'
import { FileTransferError, restoreFile, type FileSource } from '../../src/client/files.ts'
import { backupFile } from '../../src/client/upload.ts'
import { ProtocolUnsupportedError } from '../../src/client/protocol.ts'
import { backupAll, type BackupEvent, type Candidate, type SyncState } from '../../src/client/sync.ts'
import { verifyAlbum } from '../../src/client/verify.ts'
import { encodeCanonical } from '../../src/codec/cbor.ts'
import { fromBase64 } from '../../src/sdk/bytes.ts'
import type { CofferClient } from '../../src/sdk/client.ts'
import { readManifest } from '../../src/sdk/manifest.ts'
import { photoLibrary } from '../support/albums.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let library: Library
let defaults: TestServer['deps']['config']['protocol']

beforeAll(async () => {
  server = await startServer()
  library = await photoLibrary(server, 'edits')
  defaults = server.deps.config.protocol
})
afterAll(() => server.close())
afterEach(() => setProtocolRange(defaults))

/** Moves the server's protocol range, as an operator's new PROTOCOL_MIN / PROTOCOL_MAX would. */
function setProtocolRange(range: { min: string; current: string; max: string }): void {
  ;(server.deps.config as { protocol: typeof range }).protocol = range
}

const sourceOf = (name: string, bytes: Uint8Array): FileSource => ({
  name,
  size: bytes.length,
  type: 'image/jpeg',
  modified: 1_700_000_000_000,
  open: () => [bytes],
})

async function restoredBytes(lib: Library, albumId: string, assetId: string): Promise<{ bytes: Buffer; name: string; action: string }> {
  const entry = await findAssetEntry(lib.client, albumId, assetId)
  if (entry === null) throw new Error('not live')
  const file = await restoreFile({ ...lib, albumId }, entry)
  const chunks: Uint8Array[] = []
  for await (const chunk of file.bytes) chunks.push(chunk)
  return { bytes: Buffer.concat(chunks), name: file.metadata.name, action: entry.action }
}

async function pinnedOf(albumId: string): Promise<string | undefined> {
  return (await library.client.listAlbums()).albums.find((a) => a.album_id === albumId)?.protocol_version
}

async function photoIn(albumName: string, name = 'IMG_0001.jpg', size = 5000) {
  const album = await openAlbum(library, albumName)
  const bytes = randomBytes(size)
  const stored = await backupFile({ ...library, albumId: album.albumId }, sourceOf(name, bytes))
  return { album, bytes, assetId: stored.assetId }
}

describe('replaceFile', () => {
  it('uploads the new version under the same asset id; the feed shows a replace; restore gives the new bytes', async () => {
    const { album, assetId } = await photoIn('Replace')
    const edited = randomBytes(7777)
    const result = await replaceFile({ ...library, albumId: album.albumId }, assetId, sourceOf('IMG_0001.jpg', edited))
    expect(result).toMatchObject({ status: 'stored', assetId, sentBytes: expect.any(Number) })
    expect((await liveEntries(library.client, album.albumId)).map((e) => e.asset_id).filter((id) => id === assetId)).toHaveLength(1)
    const restored = await restoredBytes(library, album.albumId, assetId)
    expect(restored).toMatchObject({ name: 'IMG_0001.jpg', action: 'replace' })
    expect(restored.bytes.equals(edited)).toBe(true)
    // A second replace continues from the first.
    const again = randomBytes(300)
    await replaceFile({ ...library, albumId: album.albumId }, assetId, sourceOf('IMG_0001.jpg', again))
    expect((await restoredBytes(library, album.albumId, assetId)).bytes.equals(again)).toBe(true)
    // verifyAlbum checks the receipts of the earlier versions too, and finds nothing wrong.
    const reports = await verifyAlbum(library, album.albumId, { deep: true })
    expect(reports.find((r) => r.assetId === assetId)).toMatchObject({ problems: [], receipts: 9 }) // three versions of three blobs each (original, metadata, provenance)
  })

  it('refuses an asset the album does not hold, before sending anything', async () => {
    const album = await openAlbum(library, 'Replace missing')
    const missing = '00000000-0000-4000-8000-000000000000'
    await expect(replaceFile({ ...library, albumId: album.albumId }, missing, sourceOf('x.jpg', randomBytes(10)))).rejects.toBeInstanceOf(AssetNotFoundError)
  })

  it('continues from a write another device made meanwhile (409 stale_revival, read again once)', async () => {
    const { album, assetId } = await photoIn('Replace race')
    const theirs = randomBytes(1200)
    let raced = false
    // The other device's replace lands between this one's read of the chain head and its write.
    const racing = new Proxy(library.client, {
      get(target, key, receiver) {
        if (key === 'applyManifest') {
          return async (albumId: string, write: Parameters<CofferClient['applyManifest']>[1]) => {
            if (!raced) {
              raced = true
              await replaceFile({ ...library, albumId }, assetId, sourceOf('IMG_0001.jpg', theirs))
            }
            return target.applyManifest(albumId, write)
          }
        }
        const value = Reflect.get(target, key, receiver)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const mine = randomBytes(900)
    await replaceFile({ ...library, client: racing, albumId: album.albumId }, assetId, sourceOf('IMG_0001.jpg', mine))
    expect(raced).toBe(true)
    expect((await restoredBytes(library, album.albumId, assetId)).bytes.equals(mine)).toBe(true)
    const actions = []
    for await (const entry of feedEntries(library.client, album.albumId)) if (entry.asset_id === assetId) actions.push(entry.action)
    expect(actions).toEqual(['create', 'replace', 'replace'])
  })
})

describe('deleteFile', () => {
  it('takes the asset out of the album: the feed gains a delete, nothing restores it, its blobs stop downloading', async () => {
    const { album, assetId } = await photoIn('Delete')
    const entry = (await findAssetEntry(library.client, album.albumId, assetId))!
    const original = readManifest(fromBase64(entry.manifest_cbor), library.identityPublicKey).envelope.ciphertext_hash
    const result = await deleteFile(library, album.albumId, assetId)
    expect(result).toMatchObject({ assetId, replayed: false, syncSeq: expect.any(Number) })
    expect(await findAssetEntry(library.client, album.albumId, assetId)).toBeNull()
    expect((await liveEntries(library.client, album.albumId)).some((e) => e.asset_id === assetId)).toBe(false)
    await expect(library.client.downloadBlob(original)).rejects.toMatchObject({ status: 404 })
    await expect(deleteFile(library, album.albumId, assetId)).rejects.toBeInstanceOf(AssetNotFoundError)
  })

  it('deletes a replaced asset (continuing from the replace)', async () => {
    const { album, assetId } = await photoIn('Delete replaced')
    await replaceFile({ ...library, albumId: album.albumId }, assetId, sourceOf('IMG_0001.jpg', randomBytes(100)))
    await deleteFile(library, album.albumId, assetId)
    expect(await findAssetEntry(library.client, album.albumId, assetId)).toBeNull()
  })

  it('reads the asset again and deletes it when someone replaced it meanwhile (409 stale_revival)', async () => {
    const { album, assetId } = await photoIn('Delete race')
    let raced = false
    const racing = new Proxy(library.client, {
      get(target, key, receiver) {
        if (key === 'deleteAsset') {
          return async (...args: Parameters<CofferClient['deleteAsset']>) => {
            if (!raced) {
              raced = true
              await replaceFile({ ...library, albumId: album.albumId }, assetId, sourceOf('IMG_0001.jpg', randomBytes(64)))
            }
            return target.deleteAsset(...args)
          }
        }
        const value = Reflect.get(target, key, receiver)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    await deleteFile({ ...library, client: racing }, album.albumId, assetId)
    expect(raced).toBe(true)
    expect(await findAssetEntry(library.client, album.albumId, assetId)).toBeNull()
  })

  it('refuses a retained asset with its date (AssetRetainedError)', async () => {
    const album = await openAlbum(library, 'Delete retained')
    const until = new Date(server.clock.now() + 30 * 86_400_000).toISOString()
    const { assetId } = await backupFile({ ...library, albumId: album.albumId }, sourceOf('kept.jpg', randomBytes(100)), { retentionUntil: until })
    const refused = await deleteFile(library, album.albumId, assetId).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(AssetRetainedError)
    expect((refused as AssetRetainedError).retainedUntil).toBe(until)
    expect((refused as Error).message).toBe(`asset ${assetId} is retained until ${until}: it cannot be deleted before then`)
    expect(await findAssetEntry(library.client, album.albumId, assetId)).not.toBeNull()
  })
})

describe('backupAll after a delete', () => {
  it('does not store the deleted content again: reported deleted, no upload session, whether recorded or found by content', async () => {
    const album = await openAlbum(library, 'Sync after delete')
    const target = { ...library, albumId: album.albumId }
    const bytes = randomBytes(2000)
    const candidate: Candidate = { path: 'a/IMG_1.jpg', size: bytes.length, modified: 1_700_000_000_000, source: async () => sourceOf('a/IMG_1.jpg', bytes) }
    const recorded = new Map<string, string>()
    const state: SyncState = {
      knownAsset: async (_album, path) => recorded.get(path) ?? null,
      lastBackedUp: async () => null,
      remember: async (entry) => void recorded.set(entry.path, entry.assetId),
      uploadOpened: async () => {},
      uploadEnded: async () => {},
      openUploads: async () => [],
      pendingUpload: async () => null,
      savePendingUpload: async () => {},
      dropPendingUpload: async () => {},
      storedOriginal: async () => null,
      rememberOriginal: async () => {},
      storesOriginalOfSize: async () => false,
    }
    expect(await backupAll({ target, state }, [candidate])).toMatchObject({ stored: 1 })
    await deleteFile(library, album.albumId, recorded.get('a/IMG_1.jpg')!)
    const events: BackupEvent[] = []
    expect(await backupAll({ target, state, onEvent: (e) => events.push(e) }, [candidate])).toMatchObject({ stored: 0, deleted: 1, sentBytes: 0 })
    expect(events.find((e) => e.type === 'file')).toMatchObject({ outcome: 'deleted', assetId: recorded.get('a/IMG_1.jpg') })
    recorded.clear() // another device, or this one with its state lost: found by content
    expect(await backupAll({ target, state }, [candidate])).toMatchObject({ stored: 0, deleted: 1, sentBytes: 0 })
    expect((await library.client.readUpgrade(album.albumId)).in_flight).toBe(0)
    expect(await liveEntries(library.client, album.albumId)).toHaveLength(1) // the album's record only
  })
})

describe('protocol versions (426) and the upgrade ceremony', () => {
  it.each(['backup', 'replace', 'delete'] as const)(
    'a %s meeting a 426 is written again at the newest version both speak, and the album is pinned there',
    async (write) => {
      const { album, assetId } = await photoIn(`Protocol moved ${write}`)
      expect(await pinnedOf(album.albumId)).toBe('2026-06-01')
      // The server stops taking the album's version: a write stating it meets a 426.
      setProtocolRange({ min: '2026-09-01', current: '2026-09-01', max: '2026-11-01' })
      const target = { ...library, albumId: album.albumId, protocolVersion: '2026-06-01' }
      let stated: string | null = null
      if (write === 'backup') {
        const stored = await backupFile(target, sourceOf('IMG_0002.jpg', randomBytes(3000)))
        expect(stored.status).toBe('stored')
        stated = readManifest(fromBase64((await findAssetEntry(library.client, album.albumId, stored.assetId))!.manifest_cbor), library.identityPublicKey)
          .envelope.protocol_version
      } else if (write === 'replace') {
        const edited = randomBytes(2000)
        await replaceFile(target, assetId, sourceOf('IMG_0001.jpg', edited))
        expect((await restoredBytes(library, album.albumId, assetId)).bytes.equals(edited)).toBe(true)
        stated = readManifest(fromBase64((await findAssetEntry(library.client, album.albumId, assetId))!.manifest_cbor), library.identityPublicKey).envelope
          .protocol_version
      } else {
        await deleteFile(library, album.albumId, assetId)
        expect(await findAssetEntry(library.client, album.albumId, assetId)).toBeNull()
        let last = null
        for await (const entry of feedEntries(library.client, album.albumId)) last = entry
        expect(last!.action).toBe('delete')
        stated = readManifest(fromBase64(last!.manifest_cbor), library.identityPublicKey).envelope.protocol_version
      }
      expect(stated).toBe('2026-11-01')
      expect(await pinnedOf(album.albumId)).toBe('2026-11-01')
      // The next write of this client states the new version at once.
      const next = await backupFile(target, sourceOf('IMG_0003.jpg', randomBytes(100)))
      expect(
        readManifest(fromBase64((await findAssetEntry(library.client, album.albumId, next.assetId))!.manifest_cbor), library.identityPublicKey).envelope
          .protocol_version,
      ).toBe('2026-11-01')
    },
  )

  it("a delete after another device pinned the album to a newer version states the pin, not its last write's version", async () => {
    const { album, assetId } = await photoIn('Protocol delete')
    const intentId = crypto.randomUUID()
    await library.client.startUpgrade(album.albumId, encodeCanonical({ intent_id: intentId, to_protocol_version: '2026-09-01' }))
    await library.client.commitUpgrade(album.albumId, intentId, encodeCanonical({ tombstone: intentId }))
    expect(await pinnedOf(album.albumId)).toBe('2026-09-01')
    await deleteFile(library, album.albumId, assetId)
    expect(await findAssetEntry(library.client, album.albumId, assetId)).toBeNull()
  })

  it('a 426 because another device pinned the album newer: written again, and the pin is left where that device put it', async () => {
    const { album } = await photoIn('Pinned elsewhere')
    const intentId = crypto.randomUUID()
    await library.client.startUpgrade(album.albumId, encodeCanonical({ intent_id: intentId, to_protocol_version: '2026-09-01' }))
    await library.client.commitUpgrade(album.albumId, intentId, encodeCanonical({ tombstone: intentId }))
    const stored = await backupFile({ ...library, albumId: album.albumId, protocolVersion: '2026-06-01' }, sourceOf('after.jpg', randomBytes(500)))
    expect(stored.status).toBe('stored')
    expect(
      readManifest(fromBase64((await findAssetEntry(library.client, album.albumId, stored.assetId))!.manifest_cbor), library.identityPublicKey).envelope
        .protocol_version,
    ).toBe('2026-11-01')
    expect(await pinnedOf(album.albumId)).toBe('2026-09-01')
  })

  it("a write meeting another device's upgrade window waits for it to close, then goes on at the new version", async () => {
    const album = await openAlbum(library, 'Upgrade window')
    const intentId = crypto.randomUUID()
    await library.client.startUpgrade(album.albumId, encodeCanonical({ intent_id: intentId, to_protocol_version: '2026-10-01' }))
    const writing = backupFile({ ...library, albumId: album.albumId, protocolVersion: album.protocolVersion }, sourceOf('during.jpg', randomBytes(4000)))
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect((await library.client.readUpgrade(album.albumId)).in_flight).toBe(0) // the waiting write holds no session
    await library.client.commitUpgrade(album.albumId, intentId, encodeCanonical({ tombstone: intentId }))
    const stored = await writing
    expect(stored.status).toBe('stored')
    const entry = (await findAssetEntry(library.client, album.albumId, stored.assetId))!
    expect(readManifest(fromBase64(entry.manifest_cbor), library.identityPublicKey).envelope.protocol_version).toBe('2026-10-01')
  })

  it('an album that needs a version newer than the client speaks: ProtocolUnsupportedError, nothing written', async () => {
    const album = await openAlbum(library, 'Too new')
    setProtocolRange({ min: '2027-01-01', current: '2027-01-01', max: '2027-06-01' })
    const failed = await backupFile({ ...library, albumId: album.albumId }, sourceOf('new.jpg', randomBytes(100))).catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(FileTransferError)
    expect((failed as Error).cause).toBeInstanceOf(ProtocolUnsupportedError)
    expect((failed as Error).message).toMatch(/takes protocol versions 2027-01-01 to 2027-06-01, and this client speaks 2025-01-01 to 2026-11-01: update it/)
    expect((await library.client.readUpgrade(album.albumId)).in_flight).toBe(0)
  })

  it('a backup of a folder stops at the first such file and throws ProtocolUnsupportedError itself: every other file would meet it', async () => {
    const album = await openAlbum(library, 'Too new for a folder')
    setProtocolRange({ min: '2027-01-01', current: '2027-01-01', max: '2027-06-01' })
    const candidates: Candidate[] = ['a.jpg', 'b.jpg', 'c.jpg'].map((name) => {
      const bytes = randomBytes(300)
      return { path: name, size: bytes.length, modified: null, source: async () => sourceOf(name, bytes) }
    })
    const state: SyncState = {
      knownAsset: async () => null,
      lastBackedUp: async () => null,
      remember: async () => {},
      uploadOpened: async () => {},
      uploadEnded: async () => {},
      openUploads: async () => [],
      pendingUpload: async () => null,
      savePendingUpload: async () => {},
      dropPendingUpload: async () => {},
      storedOriginal: async () => null,
      rememberOriginal: async () => {},
      storesOriginalOfSize: async () => false,
    }
    const events: BackupEvent[] = []
    const thrown = await backupAll(
      { target: { ...library, albumId: album.albumId }, state, concurrency: 1, onEvent: (event) => events.push(event) },
      candidates,
    ).catch((error: unknown) => error)
    expect(thrown).toBeInstanceOf(ProtocolUnsupportedError)
    expect(events.filter((event) => event.type === 'file')).toEqual([]) // no file reported failed one by one
    expect(await liveEntries(library.client, album.albumId)).toHaveLength(1) // the album's record only
  })
})
