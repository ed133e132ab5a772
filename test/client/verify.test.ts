// verifyAlbum (src/client/verify.ts) against a real server: an album backed up verifies with
// every receipt; a byte flipped in a blob on the server's disk is caught by the deep check,
// naming the file; a blob that is gone from the server is caught by the plain one.
import { randomBytes } from 'node:crypto'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { liveEntries, openAlbum, type Library } from '../../src/client/albums.ts'
import { deleteFile } from '../../src/client/edits.ts'
import { backupFile } from '../../src/client/upload.ts'
import { verifyAlbum } from '../../src/client/verify.ts'
import { CofferClient } from '../../src/sdk/client.ts'
import { photoLibrary } from '../support/albums.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { folderOf } from '../support/blobs.ts'

let server: TestServer
let work: string
let library: Library

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-verify-'))
  library = await photoLibrary(server, 'verify')
})
afterAll(async () => {
  await server.close()
  await rm(work, { recursive: true, force: true })
})

/** An album with `count` files of random bytes, each with a thumbnail; answers the album id and what was stored. */
async function albumWith(name: string, count: number) {
  const album = await openAlbum(library, name)
  const stored = []
  for (let i = 0; i < count; i++) {
    const bytes = randomBytes(5000 + i)
    const result = await backupFile(
      { ...library, albumId: album.albumId },
      { name: `photo-${i}.jpg`, size: bytes.length, type: 'image/jpeg', modified: 0, open: () => [bytes] },
      { describe: async () => ({ captured: null, width: 10, height: 10, derivatives: [{ kind: 'thumbnail', type: 'image/webp', bytes: randomBytes(300) }] }) },
    )
    stored.push({ name: `photo-${i}.jpg`, ...result })
  }
  return { albumId: album.albumId, stored }
}

describe('verifyAlbum', () => {
  it('verifies every file and the album record, each blob with its receipt', async () => {
    const { albumId } = await albumWith('Verify ok', 3)
    const reports = await verifyAlbum(library, albumId, { deep: true })
    expect(reports).toHaveLength(4)
    expect(reports.filter((r) => r.record)).toHaveLength(1)
    for (const report of reports) expect(report.problems).toEqual([])
    // original, thumbnail, metadata, provenance: four blobs, four receipts each
    expect(reports.filter((r) => !r.record).map((r) => [r.blobs, r.receipts])).toEqual([
      [4, 4],
      [4, 4],
      [4, 4],
    ])
  })

  it('catches a flipped byte with --deep, naming the file', async () => {
    const { albumId, stored } = await albumWith('Verify flipped', 2)
    const file = folderOf(server).pathOf(stored[1]!.ciphertextHash!)
    const bytes = await readFile(file)
    bytes[40] = bytes[40]! ^ 0x80
    await writeFile(file, bytes)
    const shallow = await verifyAlbum(library, albumId)
    expect(shallow.every((r) => r.problems.length === 0)).toBe(true) // structure alone cannot see it
    const deep = await verifyAlbum(library, albumId, { deep: true })
    const bad = deep.filter((r) => r.problems.length > 0)
    expect(bad.map((r) => r.name)).toEqual(['photo-1.jpg'])
    expect(bad[0]!.problems.join('\n')).toMatch(/original blob .* corrupt on the server's disk/)
    expect(bad[0]!.problems.join('\n')).toMatch(/downloaded, it fails: restore of "photo-1.jpg"/)
  })

  it('catches a blob gone from the server without --deep', async () => {
    const { albumId, stored } = await albumWith('Verify gone', 1)
    await rm(folderOf(server).pathOf(stored[0]!.ciphertextHash!))
    const reports = await verifyAlbum(library, albumId)
    const bad = reports.filter((r) => r.problems.length > 0)
    expect(bad.map((r) => r.name)).toEqual(['photo-0.jpg'])
    expect(bad[0]!.problems.join('\n')).toMatch(/original blob .* is not stored/)
  })

  it('an album larger than one window of assets: each live asset reported once, in feed order, a deleted one left out, a problem in the last window found', async () => {
    const { albumId, stored } = await albumWith('Verify many', 70)
    await deleteFile(library, albumId, stored[3]!.assetId)
    await rm(folderOf(server).pathOf(stored[69]!.ciphertextHash!))
    const seen: string[] = []
    const reports = await verifyAlbum(library, albumId, { onAsset: (report) => seen.push(report.assetId) })
    const live = (await liveEntries(library.client, albumId)).map((entry) => entry.asset_id)
    expect(live).toHaveLength(70) // 69 files and the album record
    expect(reports.map((r) => r.assetId)).toEqual(live)
    expect(seen.sort()).toEqual([...live].sort())
    expect(reports.filter((r) => r.problems.length > 0).map((r) => r.name)).toEqual(['photo-69.jpg'])
  })

  it('checks the receipts of every page as one chain, and notices a receipt a server leaves out at a page boundary', async () => {
    const { albumId, stored } = await albumWith('Verify pages', 1)
    // Four receipts a photo and three the album record, two a page: a page boundary falls
    // between the photo's thumbnail and metadata receipts, and before the record's provenance one.
    const paged = await verifyAlbum(library, albumId, { receiptsPageSize: 2 })
    expect(paged.map((r) => [r.record, r.receipts, r.problems])).toEqual([
      [true, 3, []],
      [false, 4, []],
    ])
    // A server that drops the first receipt of every page after the first.
    const dropping: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      const url = new URL(String(input))
      if (!url.pathname.endsWith('/receipts') || url.searchParams.get('after') === '0') return response
      const body = (await response.json()) as { receipts: unknown[] }
      return Response.json({ ...body, receipts: body.receipts.slice(1) })
    }
    const lying = { ...library, client: new CofferClient({ baseUrl: server.url, now: server.clock.now, tokens: library.client.tokens, fetch: dropping }) }
    const reports = await verifyAlbum(lying, albumId, { receiptsPageSize: 2 })
    expect(reports.map((r) => [r.record, r.receipts, r.problems])).toEqual([
      [true, 2, [expect.stringMatching(/^the provenance blob .* has no custody receipt$/)]],
      [false, 3, [expect.stringMatching(/^the metadata blob .* has no custody receipt$/)]],
    ])
    expect(reports[1]!.assetId).toBe(stored[0]!.assetId)
  })
})
