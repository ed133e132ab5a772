// The trash in the client library (src/client/trash.ts): trashFile signs the delete deleteFile
// would and the server holds it (the photo still restores), listTrash lists it checked,
// restoreFromTrash brings it back, deleteForGood applies the held delete at once. A server that
// lies about the trash (an entry whose manifest's signature fails, or another asset's genuine
// delete listed under this one) is caught: the entry is reported, never treated as trashed, so
// the photo stays in the library.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { liveEntries, openAlbum, type Library } from '../../src/client/albums.ts'
import { deleteFile } from '../../src/client/edits.ts'
import type { FileSource } from '../../src/client/files.ts'
import { deleteForGood, listTrash, restoreFromTrash, trashedIds, trashFile } from '../../src/client/trash.ts'
import { backupFile } from '../../src/client/upload.ts'
import { photoLibrary } from '../support/albums.ts'
import { writeRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let library: Library
beforeAll(async () => {
  server = await startServer()
  library = await photoLibrary(server, 'trash-client')
})
afterAll(() => server.close())

const sourceOf = (name: string): FileSource => {
  const bytes = randomBytes(3000)
  return { name, size: bytes.length, type: 'image/jpeg', modified: 1_700_000_000_000, open: () => [bytes] }
}

async function photosIn(albumName: string, count: number) {
  const album = await openAlbum(library, albumName)
  const ids: string[] = []
  for (let i = 0; i < count; i++) ids.push((await backupFile({ ...library, albumId: album.albumId }, sourceOf(`IMG_${i}.jpg`))).assetId)
  return { albumId: album.albumId, ids }
}

const liveIds = async (albumId: string) => (await liveEntries(library.client, albumId)).map((e) => e.asset_id)

describe('the trash, through the client library', () => {
  it('trashes, lists, restores and deletes for good', async () => {
    const { albumId, ids } = await photosIn('Trash', 2)
    const [kept, gone] = ids as [string, string]
    const now = server.clock.now()
    expect(await trashFile(library, albumId, kept)).toEqual({ albumId, assetId: kept, trashedAt: now, purgeAt: now + 30 * 86_400_000 })
    await trashFile(library, albumId, gone)
    const listed = await listTrash(library, { pageSize: 1 })
    expect(listed.refused).toEqual([])
    expect(listed.files.map((f) => f.assetId)).toEqual([kept, gone])
    expect(await liveIds(albumId)).toEqual(expect.arrayContaining([kept, gone]))

    await restoreFromTrash(library, albumId, kept)
    await deleteForGood(library, listed.files[1]!)
    expect(await trashedIds(library)).toEqual(new Set())
    expect(await liveIds(albumId)).toContain(kept)
    expect(await liveIds(albumId)).not.toContain(gone)
    // deleteFile still deletes at once, from the trash too.
    await trashFile(library, albumId, kept)
    await deleteFile(library, albumId, kept)
    expect((await listTrash(library)).files).toEqual([])
  })

  it('refuses an entry whose signature fails and another asset’s delete listed under this one', async () => {
    const { albumId, ids } = await photosIn('Lying trash', 3)
    const [genuine, altered, invented] = ids as [string, string, string]
    await trashFile(library, albumId, genuine)
    await trashFile(library, albumId, altered)
    const manifest = (await listTrash(library)).files.find((f) => f.assetId === altered)!.deletion.manifest_cbor
    const flipped = Buffer.from(manifest, 'base64')
    flipped[flipped.length - 1]! ^= 1
    await writeRows(server.database, 'update trash set manifest_cbor = ? where file_id = ?', [flipped, altered])
    await writeRows(
      server.database,
      `insert into trash (user_id, album_id, file_id, manifest_hash, manifest_cbor, manifest_envelope, trashed_at, purge_at)
       select user_id, album_id, ?, manifest_hash, manifest_cbor, manifest_envelope, trashed_at, purge_at from trash where file_id = ?`,
      [invented, genuine],
    )

    const listed = await listTrash(library)
    expect(listed.files.map((f) => f.assetId)).toEqual([genuine])
    expect(listed.refused).toEqual([
      { albumId, assetId: altered, reason: expect.stringMatching(/not one this account signed/) },
      { albumId, assetId: invented, reason: 'its manifest deletes another asset' },
    ])
    expect(await trashedIds(library)).toEqual(new Set([genuine]))
  })
})
