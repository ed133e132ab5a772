// The trash (decision 0059): POST .../trash takes the delete route's body and runs its checks in
// its order, writing nothing when one fails; it holds the signed delete instead of applying it
// (the asset stays live) and answers the entry, the same one for the same manifest again, 409
// error.asset.trashed for another. DELETE .../trash restores (404 when not there); GET /v1/trash
// pages the caller's entries as receipts page. The delete route deletes at once and takes the
// entry; a replace of an asset in the trash is refused. After purge_at the maintenance pass
// applies the held delete as the delete route would, once however many passes race; one that
// no longer applies stays. Deleting the account removes its trash.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { maintain } from '../../src/features/maintenance/sweep.service.ts'
import { purgeDueTrash } from '../../src/features/lifecycle/trash.service.ts'
import { sha256Hex } from '../../src/sdk/client.ts'
import { PASSWORD, problemOf, raw } from '../support/actors.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import {
  bearer,
  blobFiles,
  deletionFor,
  downloaded,
  intent,
  iso,
  openBundle,
  tombstone,
  writeFor,
  type DeletionOptions,
  type DeletionTarget,
  type WriteOptions,
} from '../support/bundles.ts'
import { everyRow } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

const RETENTION_S = 3_600
const DAY = 86_400_000

let server: TestServer
let member: Uploader
beforeAll(async () => {
  server = await startServer({ TRASH_RETENTION_S: String(RETENTION_S), UPGRADE_WINDOW_S: String(2 * RETENTION_S) })
  member = await uploader(server, 'trash')
})
afterAll(() => server.close())

interface Asset extends DeletionTarget {
  readonly blobs: readonly string[]
}

/** Uploads a bundle and applies its create (or a replace of `previous`). */
async function written(albumId: string, options: WriteOptions & { previous?: Asset } = {}, who: Uploader = member): Promise<Asset> {
  const { previous, ...writeOptions } = options
  const bundle = await openBundle(who, albumId)
  const chain = previous === undefined ? {} : { fileId: previous.fileId, action: 'replace' as const, prior: previous.head, originalBlobHash: previous.original }
  const write = await writeFor(who, bundle, { ...chain, ...writeOptions })
  await who.client.applyManifest(albumId, write.request)
  return {
    albumId,
    fileId: write.envelope.file_id,
    head: write.manifestHash,
    original: bundle.hashes.ciphertextHash,
    blobs: [bundle.original, ...bundle.derivatives].map((bytes) => sha256Hex(bytes)),
  }
}

async function trashed(target: DeletionTarget, options: DeletionOptions = {}, who: Uploader = member) {
  const deletion = await deletionFor(who, target, options)
  return { deletion, entry: await who.client.trashAsset(target.albumId, target.fileId, deletion.request) }
}

function trashRaw(who: Uploader, target: { albumId: string; fileId: string }, body: unknown) {
  return raw(server, 'POST', `/v1/albums/${target.albumId}/assets/${target.fileId}/trash`, {
    headers: { ...bearer(who), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

/** Sends `body` to the trash route and expects the refusal, with nothing written. */
async function expectRefused(target: { albumId: string; fileId: string }, body: unknown, status: number, code: string, who: Uploader = member) {
  const before = { rows: await everyRow(server.database), files: await blobFiles(server) }
  const answer = await trashRaw(who, target, body)
  expect(answer.status, answer.text).toBe(status)
  expect(answer.json?.code).toBe(code)
  expect({ rows: await everyRow(server.database), files: await blobFiles(server) }).toEqual(before)
  return answer.json!
}

/** Every entry of the member's trash, page after page of `limit`. */
async function trashList(who: Uploader = member, limit = 1000) {
  const entries = []
  for (let after = 0; ; ) {
    const page = await who.client.trashPage(after, limit)
    entries.push(...page.entries)
    if (page.entries.length < limit) return entries
    after = page.next_after
  }
}

const actions = async (albumId: string) => (await member.client.feed(albumId)).entries.map((e) => [e.asset_id, e.action])

/** Moves the server's clock, and the member's tokens along. */
async function clockAt(ms: number, who: Uploader = member): Promise<void> {
  server.clock.set(ms)
  await who.client.getProfile()
}

describe('putting an asset in the trash', () => {
  it('holds the delete: the entry answers, the asset stays live, the feed is unchanged; the same manifest again answers the same entry', async () => {
    const asset = await written(await album(member))
    const now = server.clock.now()
    const { deletion, entry } = await trashed(asset)
    expect(entry).toEqual({
      trash_seq: expect.any(Number),
      album_id: asset.albumId,
      file_id: asset.fileId,
      trashed_at: iso(now),
      purge_at: iso(now + RETENTION_S * 1000),
    })
    expect(await member.client.trashAsset(asset.albumId, asset.fileId, deletion.request)).toEqual(entry)
    expect(await actions(asset.albumId)).toEqual([[asset.fileId, 'create']])
    for (const hash of asset.blobs) expect(await downloaded(member, hash)).toBeInstanceOf(Buffer)
    const listed = (await trashList()).find((e) => e.file_id === asset.fileId)
    expect(listed).toEqual({ ...entry, manifest_cbor: deletion.manifest.toString('base64') })
  })

  it('refuses another delete of an asset in the trash, and a replace of it (409 asset.trashed), until it is restored', async () => {
    const asset = await written(await album(member))
    await trashed(asset)
    await expectRefused(asset, (await deletionFor(member, asset, { overrides: { client_version: 'another' } })).request, 409, 'error.asset.trashed')
    const problem = await problemOf(written(asset.albumId, { previous: asset }))
    expect([problem.status, problem.code]).toEqual([409, 'error.asset.trashed'])

    await member.client.restoreAsset(asset.albumId, asset.fileId)
    expect((await trashList()).some((e) => e.file_id === asset.fileId)).toBe(false)
    expect((await problemOf(member.client.restoreAsset(asset.albumId, asset.fileId))).status).toBe(404)
    await written(asset.albumId, { previous: asset })
  })

  it('runs the delete route’s checks in its order: 404, 422, 426, 409 upgrade, 409 chain, 409 retained, writing nothing', async () => {
    const other = await uploader(server, 'trash-other')
    const theirs = await written(await album(other), {}, other)
    await expectRefused(theirs, (await deletionFor(other, theirs)).request, 404, 'error.not_found')
    await expectRefused({ albumId: randomUUID(), fileId: theirs.fileId }, (await deletionFor(member, theirs)).request, 404, 'error.not_found')

    const asset = await written(await album(member))
    await expectRefused(asset, { ...(await deletionFor(member, asset)).request, unknown: true }, 422, 'error.request.invalid')
    await expectRefused(asset, (await deletionFor(member, asset, { overrides: { action: 'replace' } })).request, 422, 'error.request.invalid')
    await expectRefused(asset, (await deletionFor(member, asset, { protocolVersion: '2024-12-31' })).request, 426, 'error.protocol.out_of_range')
    const stale = await expectRefused(asset, (await deletionFor(member, asset, { prior: null })).request, 409, 'error.op.stale_revival')
    expect(stale.chain_head).toBe(asset.head)
    const intentId = randomUUID()
    await member.client.startUpgrade(asset.albumId, intent(intentId, '2026-09-01'))
    await expectRefused(asset, (await deletionFor(member, asset)).request, 409, 'error.upgrade.in_flight')
    await member.client.abortUpgrade(asset.albumId, intentId)

    const kept = await written(asset.albumId, { retentionUntil: iso(server.clock.now() + DAY) })
    const retained = await expectRefused(kept, (await deletionFor(member, kept)).request, 409, 'error.asset.retained')
    expect(retained.retained_until).toBe(iso(server.clock.now() + DAY))
  })

  it('refuses a manifest the delete route applied already (409 stale_revival)', async () => {
    const asset = await written(await album(member))
    const deletion = await deletionFor(member, asset)
    await member.client.deleteAsset(asset.albumId, asset.fileId, deletion.request)
    const problem = await expectRefused(asset, deletion.request, 409, 'error.op.stale_revival')
    expect(problem.chain_head).toBe(deletion.manifestHash)
  })
})

describe('the trash list and restore', () => {
  it('pages the caller’s entries across albums in the order they went in, nothing twice or missing; 400 on a bad limit', async () => {
    const own = await uploader(server, 'trash-pages')
    const assets = [await written(await album(own), {}, own), await written(await album(own), {}, own)]
    assets.push(await written(assets[0]!.albumId, {}, own))
    for (const asset of assets) await trashed(asset, {}, own)
    expect((await trashList(own, 2)).map((e) => e.file_id)).toEqual(assets.map((a) => a.fileId))
    expect((await trashList(own, 1)).map((e) => e.file_id)).toEqual(assets.map((a) => a.fileId))
    const last = await own.client.trashPage((await own.client.trashPage(0, 3)).next_after)
    expect(last.entries).toEqual([])
    expect((await trashList(member)).some((e) => assets.some((a) => a.fileId === e.file_id))).toBe(false)
    for (const query of ['limit=0', 'limit=1001', 'after=-1'])
      expect((await raw(server, 'GET', `/v1/trash?${query}`, { headers: bearer(own) })).status).toBe(400)
  })

  it('restore answers 404 for another account’s album and for an asset not in the trash', async () => {
    const asset = await written(await album(member))
    await trashed(asset)
    const other = await uploader(server, 'trash-restore')
    expect((await problemOf(other.client.restoreAsset(asset.albumId, asset.fileId))).status).toBe(404)
    const live = await written(asset.albumId)
    expect((await problemOf(member.client.restoreAsset(live.albumId, live.fileId))).status).toBe(404)
    await member.client.restoreAsset(asset.albumId, asset.fileId)
  })
})

describe('deleting at once', () => {
  it('the delete route applies the held manifest (or another) and takes the entry in the same transaction', async () => {
    const albumId = await album(member)
    const held = await written(albumId)
    const other = await written(albumId)
    const { deletion } = await trashed(held)
    await trashed(other)
    expect((await member.client.deleteAsset(albumId, held.fileId, deletion.request)).action).toBe('delete')
    const fresh = await deletionFor(member, other, { overrides: { client_version: 'at-once' } })
    await member.client.deleteAsset(albumId, other.fileId, fresh.request)
    expect((await trashList()).some((e) => e.album_id === albumId)).toBe(false)
    expect(await actions(albumId)).toEqual([
      [held.fileId, 'create'],
      [other.fileId, 'create'],
      [held.fileId, 'delete'],
      [other.fileId, 'delete'],
    ])
  })
})

describe('the maintenance pass', () => {
  it('applies a due delete as the delete route would, once however many passes race; nothing before purge_at', async () => {
    const albumId = await album(member)
    const asset = await written(albumId)
    const restored = await written(albumId)
    const { entry } = await trashed(asset)
    await trashed(restored)
    await clockAt(Date.parse(entry.purge_at) - 1)
    expect((await maintain(server.deps)).trash.purged).toBe(0)
    await member.client.restoreAsset(albumId, restored.fileId)

    await clockAt(Date.parse(entry.purge_at))
    // The earlier tests' entries are due too: each applied once.
    const due = await server.deps.storage.dueTrash(server.clock.now(), 0, 1000)
    expect(due.map((row) => row.fileId)).toContain(asset.fileId)
    const passes = await Promise.all([purgeDueTrash(server.deps), purgeDueTrash(server.deps), purgeDueTrash(server.deps)])
    expect(passes.reduce((sum, pass) => sum + pass.purged, 0)).toBe(due.length)
    expect(await actions(albumId)).toEqual([
      [asset.fileId, 'create'],
      [restored.fileId, 'create'],
      [asset.fileId, 'delete'],
    ])
    expect((await trashList()).some((e) => e.album_id === albumId)).toBe(false)
    for (const hash of asset.blobs) expect(await downloaded(member, hash)).toBe(404)
    for (const hash of restored.blobs) expect(await downloaded(member, hash)).toBeInstanceOf(Buffer)
    await maintain(server.deps)
    const files = await blobFiles(server)
    for (const hash of asset.blobs) expect(files.includes(hash), hash).toBe(false)
  })

  it('keeps a due delete that does not apply now (an upgrade window, then the album upgraded past its version) in the trash', async () => {
    const asset = await written(await album(member))
    const { entry } = await trashed(asset)
    const intentId = randomUUID()
    await member.client.startUpgrade(asset.albumId, intent(intentId, '2026-09-01'))
    await clockAt(Date.parse(entry.purge_at))
    expect(await purgeDueTrash(server.deps)).toEqual({ purged: 0, kept: 1 })
    expect((await trashList()).some((e) => e.file_id === asset.fileId)).toBe(true)
    await member.client.abortUpgrade(asset.albumId, intentId)
    const commit = randomUUID()
    await member.client.startUpgrade(asset.albumId, intent(commit, '2026-09-01'))
    await member.client.commitUpgrade(asset.albumId, commit, tombstone(commit))
    expect(await purgeDueTrash(server.deps)).toEqual({ purged: 0, kept: 1 })
    expect((await trashList()).some((e) => e.file_id === asset.fileId)).toBe(true)
    expect(await actions(asset.albumId)).toEqual([[asset.fileId, 'create']])
    // The owner may still restore it, or delete it anew.
    await member.client.restoreAsset(asset.albumId, asset.fileId)
  })
})

describe('account deletion', () => {
  it('removes the account’s trash with it', async () => {
    const own = await uploader(server, 'trash-gone')
    const asset = await written(await album(own), {}, own)
    await trashed(asset, {}, own)
    await own.client.reauthenticate(PASSWORD)
    await own.client.deleteAccount()
    const rows = (await everyRow(server.database)).trash ?? []
    expect(rows.some((row) => row.includes(asset.fileId))).toBe(false)
  })
})
