// Copying, moving and favourites (src/client/organise.ts, decision 0061) against a real server:
// a copy sends no byte of the photo (no PUT at all), restores byte-identical from the target
// album and verifies there; copying twice makes one; a move leaves the source deleted and the
// target holding the photo, and moving back works; a favourite is a replace that keeps the
// original. A lying server (a swapped original while copying, a metadata blob of another album,
// another asset's entry) is noticed and nothing is written.
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { feedEntries, findAssetEntry, openAlbum, type Library } from '../../src/client/albums.ts'
import { AssetMovedOnError, deleteFile } from '../../src/client/edits.ts'
import { restoreFile, type FileSource } from '../../src/client/files.ts'
import { copyToAlbum, moveToAlbum, setFavourite } from '../../src/client/organise.ts'
import { backupFile } from '../../src/client/upload.ts'
import { verifyAlbum } from '../../src/client/verify.ts'
import { fromBase64, sha256Hex } from '../../src/sdk/bytes.ts'
import { CofferClient } from '../../src/sdk/client.ts'
import { collectGarbage } from '../../src/features/maintenance/gc.service.ts'
import { photoLibrary } from '../support/albums.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let library: Library

beforeAll(async () => {
  server = await startServer()
  library = await photoLibrary(server, 'organise')
})
afterAll(() => server.close())

/** A client on the same session whose fetch goes through `through` (counting, or lying), and the methods and paths it saw. */
function clientVia(through: (url: string, init: RequestInit | undefined) => Promise<Response | null> | null): { lib: Library; seen: string[] } {
  const seen: string[] = []
  const via: typeof fetch = async (input, init) => {
    const url = String(input)
    seen.push(`${init?.method ?? 'GET'} ${new URL(url).pathname}`)
    return (await through(url, init)) ?? fetch(input, init)
  }
  return { lib: { ...library, client: new CofferClient({ baseUrl: library.client.baseUrl, tokens: library.client.tokens, fetch: via }) }, seen }
}

async function photoIn(albumName: string, name = 'IMG_0001.jpg') {
  const album = await openAlbum(library, albumName)
  const bytes = randomBytes(150_000)
  const thumbnail = randomBytes(2_000)
  const source: FileSource = { name, size: bytes.length, type: 'image/jpeg', modified: 1_700_000_000_000, open: () => [bytes] }
  const stored = await backupFile({ ...library, albumId: album.albumId }, source, {
    describe: async () => ({ captured: null, width: 40, height: 30, derivatives: [{ kind: 'thumbnail', type: 'image/webp', bytes: thumbnail }] }),
  })
  return { albumId: album.albumId, bytes, thumbnail, assetId: stored.assetId, ciphertextHash: stored.ciphertextHash! }
}

async function restored(albumId: string, assetId: string) {
  const entry = await findAssetEntry(library.client, albumId, assetId)
  if (entry === null) return null
  const file = await restoreFile({ ...library, albumId }, entry)
  const chunks: Uint8Array[] = []
  for await (const chunk of file.bytes) chunks.push(chunk)
  return { bytes: Buffer.concat(chunks), metadata: file.metadata, envelope: file.envelope, thumbnail: await file.derivative('thumbnail') }
}

const entriesOf = async (albumId: string, assetId: string) => {
  const found = []
  for await (const entry of feedEntries(library.client, albumId)) if (entry.asset_id === assetId) found.push(entry.action)
  return found
}

describe('copyToAlbum', () => {
  it('creates the photo in the other album without sending its bytes; it restores and verifies there; a second copy is the same asset', async () => {
    const photo = await photoIn('Copy from')
    await setFavourite(library, photo.albumId, photo.assetId, true)
    const to = await openAlbum(library, 'Copy to')
    const counted = clientVia(() => null)
    const copy = await copyToAlbum(counted.lib, photo.albumId, photo.assetId, to.albumId)
    expect(copy.status).toBe('stored')
    expect(copy.assetId).not.toBe(photo.assetId)
    expect(counted.seen.filter((call) => call.startsWith('PUT '))).toEqual([])

    const there = (await restored(to.albumId, copy.assetId))!
    expect(there.bytes.equals(photo.bytes)).toBe(true)
    expect(Buffer.from(there.thumbnail!).equals(photo.thumbnail)).toBe(true)
    expect(there.metadata).toMatchObject({ name: 'IMG_0001.jpg', favourite: true, width: 40 })
    expect(there.envelope).toMatchObject({ album_id: to.albumId, file_id: copy.assetId, ciphertext_hash: photo.ciphertextHash })
    const reports = await verifyAlbum(library, to.albumId)
    expect(reports.find((report) => report.assetId === copy.assetId)?.problems).toEqual([])

    const again = await copyToAlbum(library, photo.albumId, photo.assetId, to.albumId)
    expect(again).toMatchObject({ status: 'present', assetId: copy.assetId })
    expect(await entriesOf(to.albumId, copy.assetId)).toEqual(['create'])
    // A backup of the same file into that album finds it there: the copy took the id a backup takes.
    const backedUp = await backupFile(
      { ...library, albumId: to.albumId },
      { name: 'IMG_0001.jpg', size: photo.bytes.length, type: 'image/jpeg', modified: null, open: () => [photo.bytes] },
    )
    expect(backedUp).toMatchObject({ status: 'present', assetId: copy.assetId })
    expect((await library.client.storageUsage()).open_uploads).toBe(0)
    await expect(copyToAlbum(library, photo.albumId, photo.assetId, photo.albumId)).rejects.toThrow(/another album/)
  })

  it("given the content hash and the feed entry (an import), downloads nothing, and refuses a wrong hash or another asset's entry", async () => {
    const photo = await photoIn('Known from')
    const other = await photoIn('Known from', 'IMG_0002.jpg')
    const to = await openAlbum(library, 'Known to')
    const entry = (await findAssetEntry(library.client, photo.albumId, photo.assetId))!
    const otherEntry = (await findAssetEntry(library.client, other.albumId, other.assetId))!
    const content = createHash('sha256').update(photo.bytes).digest()
    // The server's feed lies: the other photo's manifest under this photo's id, or its own entry for this id.
    await expect(
      copyToAlbum(library, photo.albumId, photo.assetId, to.albumId, { contentSha256: content, entry: { ...otherEntry, asset_id: photo.assetId } }),
    ).rejects.toThrow(/carries a manifest of another asset/)
    await expect(copyToAlbum(library, photo.albumId, photo.assetId, to.albumId, { contentSha256: content, entry: otherEntry })).rejects.toThrow(
      /is not in the album/,
    )
    // A hash that is not this photo's content: never a copy under another content's id.
    await expect(copyToAlbum(library, photo.albumId, photo.assetId, to.albumId, { contentSha256: new Uint8Array(32).fill(1), entry })).rejects.toThrow(
      /not the content given/,
    )
    const counted = clientVia(() => null)
    const copy = await copyToAlbum(counted.lib, photo.albumId, photo.assetId, to.albumId, { contentSha256: content, entry })
    expect(copy).toMatchObject({ status: 'stored', contentHash: content.toString('hex') })
    // Neither the album's feed read nor the original downloaded: the entry and the hash were given.
    expect(counted.seen.filter((call) => call.includes('/feed'))).toEqual([])
    expect(counted.seen.filter((call) => call.startsWith('GET ') && call.includes(photo.ciphertextHash))).toEqual([])
    expect(counted.seen.filter((call) => call.startsWith('PUT '))).toEqual([])
    expect((await restored(to.albumId, copy.assetId))!.bytes.equals(photo.bytes)).toBe(true)
  })
})

describe('moveToAlbum', () => {
  it('leaves the photo in the target album and deletes it from the source; moving it back works; a source changed meanwhile is kept', async () => {
    const photo = await photoIn('Move from', 'IMG_0002.jpg')
    const to = await openAlbum(library, 'Move to')
    const moved = await moveToAlbum(library, photo.albumId, photo.assetId, to.albumId)
    expect(moved.status).toBe('stored')
    expect(await findAssetEntry(library.client, photo.albumId, photo.assetId)).toBeNull()
    expect(await entriesOf(photo.albumId, photo.assetId)).toEqual(['create', 'delete'])
    // The source's blobs are the copy's: a collection keeps them.
    await collectGarbage(server.deps)
    expect((await restored(to.albumId, moved.assetId))!.bytes.equals(photo.bytes)).toBe(true)

    // Back again: the source's content id is a deleted asset there, so the photo takes its named id.
    const back = await moveToAlbum(library, to.albumId, moved.assetId, photo.albumId)
    expect(back.status).toBe('stored')
    expect(back.assetId).not.toBe(photo.assetId)
    expect((await restored(photo.albumId, back.assetId))!.bytes.equals(photo.bytes)).toBe(true)
    expect(await findAssetEntry(library.client, to.albumId, moved.assetId)).toBeNull()

    // The deletion is bound to the version copied: a newer one is kept, and deleting it needs a new read.
    const head = (await findAssetEntry(library.client, photo.albumId, back.assetId))!
    await setFavourite(library, photo.albumId, back.assetId, true)
    await expect(deleteFile(library, photo.albumId, back.assetId, { head: sha256Hex(fromBase64(head.manifest_cbor)) })).rejects.toBeInstanceOf(
      AssetMovedOnError,
    )
    expect(await findAssetEntry(library.client, photo.albumId, back.assetId)).not.toBeNull()
  })
})

describe('setFavourite', () => {
  it('replaces the metadata only (nothing sent): on, on again (unchanged), off', async () => {
    const photo = await photoIn('Favourites')
    const counted = clientVia(() => null)
    expect(await setFavourite(counted.lib, photo.albumId, photo.assetId, true)).toMatchObject({ status: 'stored', syncSeq: expect.any(Number) })
    expect(counted.seen.filter((call) => call.startsWith('PUT '))).toEqual([])
    const marked = (await restored(photo.albumId, photo.assetId))!
    expect(marked.metadata.favourite).toBe(true)
    expect(marked.envelope).toMatchObject({ action: 'replace', ciphertext_hash: photo.ciphertextHash })
    expect(marked.bytes.equals(photo.bytes)).toBe(true)
    expect(await setFavourite(library, photo.albumId, photo.assetId, true)).toEqual({ status: 'unchanged', syncSeq: null })
    await setFavourite(library, photo.albumId, photo.assetId, false)
    expect((await restored(photo.albumId, photo.assetId))!.metadata).not.toHaveProperty('favourite')
    expect(await entriesOf(photo.albumId, photo.assetId)).toEqual(['create', 'replace', 'replace'])
  })
})

describe('a lying server', () => {
  it('is noticed: another original served while copying, another asset’s entry, a metadata blob of another album; nothing is written', async () => {
    const photo = await photoIn('Tamper from', 'IMG_0003.jpg')
    const other = await photoIn('Tamper from', 'IMG_0004.jpg')
    const to = await openAlbum(library, 'Tamper to')
    const before = (await library.client.feed(to.albumId, 0, 1000)).entries.length

    // The original's download answers another photo's original.
    const swapped = clientVia((url) =>
      url.endsWith(`/v1/blobs/${photo.ciphertextHash}`)
        ? fetch(url.replace(photo.ciphertextHash, other.ciphertextHash), { headers: { authorization: `Bearer ${library.client.tokens!.access_token}` } })
        : null,
    )
    await expect(copyToAlbum(swapped.lib, photo.albumId, photo.assetId, to.albumId)).rejects.toThrow(/SHA-256|authenticat/)

    // The feed answers the other photo's entry under this photo's id.
    const otherEntry = (await findAssetEntry(library.client, photo.albumId, other.assetId))!
    const relabelled = clientVia(async (url) => {
      if (!url.includes(`/v1/albums/${photo.albumId}/feed`)) return null
      const page = (await (await fetch(url, { headers: { authorization: `Bearer ${library.client.tokens!.access_token}` } })).json()) as {
        entries: { asset_id: string }[]
      }
      page.entries = page.entries.map((entry) => (entry.asset_id === other.assetId ? { ...otherEntry, asset_id: photo.assetId } : entry))
      return Response.json(page)
    })
    await expect(copyToAlbum(relabelled.lib, photo.albumId, photo.assetId, to.albumId)).rejects.toThrow(/another asset/)
    expect((await library.client.feed(to.albumId, 0, 1000)).entries).toHaveLength(before)
    expect((await library.client.storageUsage()).open_uploads).toBe(0)

    // Once copied, the copy's metadata blob answered with the source's: refused.
    const copy = await copyToAlbum(library, photo.albumId, photo.assetId, to.albumId)
    const copyEntry = (await findAssetEntry(library.client, to.albumId, copy.assetId))!
    const sourceEntry = (await findAssetEntry(library.client, photo.albumId, photo.assetId))!
    const crossed = clientVia((url) =>
      url.endsWith(`/v1/blobs/${copyEntry.metadata_blob_hash}`)
        ? fetch(url.replace(copyEntry.metadata_blob_hash!, sourceEntry.metadata_blob_hash!), {
            headers: { authorization: `Bearer ${library.client.tokens!.access_token}` },
          })
        : null,
    )
    await expect(restoreFile({ ...crossed.lib, albumId: to.albumId }, copyEntry)).rejects.toThrow(/metadata blob is not the one the manifest commits/)
  })
})
