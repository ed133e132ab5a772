// Asset deletion (API.md section 6, "Asset deletion") runs the ops operation's checks 1-5 and its
// chain check, in that order, then the retention floor, and writes nothing unless all pass (no
// row, no feed entry, no file); a delete that passes appends one feed entry, ends the asset
// (its blobs no longer download, verification no longer indexes them, receipts stay), issues no
// receipt, and leaves its blobs to the next garbage collection unless a legal hold keeps them.
// The identical request again answers the first application with replayed true.
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { liveEntries } from '../../src/client/albums.ts'
import { collectGarbage } from '../../src/features/maintenance/gc.service.ts'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import { sha256Hex, type OpResult } from '../../src/sdk/client.ts'
import { buildAssetDeletion, readManifest } from '../../src/sdk/manifest.ts'
import { problemOf, raw } from '../support/actors.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import {
  PROTOCOL_CURRENT,
  PROTOCOL_MAX,
  bearer,
  blobFiles,
  deleteRaw,
  deletionFor,
  downloaded,
  intent,
  iso,
  openBundle,
  tombstone,
  writeFor,
  type Bundle,
  type DeletionOptions,
  type DeletionTarget,
  type Write,
  type WriteOptions,
} from '../support/bundles.ts'
import { everyRow, writeRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ADMIN_TOKEN = randomBytes(32).toString('base64url')
const DAY = 86_400_000

let server: TestServer
let member: Uploader
let admin: CofferAdmin
beforeAll(async () => {
  server = await startServer({ ADMIN_TOKEN })
  member = await uploader(server, 'delete')
  admin = new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN })
})
afterAll(() => server.close())

interface Asset extends DeletionTarget {
  readonly bundle: Bundle
  readonly write: Write
  /** Every blob of its live bundle: original, derivatives, metadata, manifest. */
  readonly blobs: Map<string, Buffer>
}

/** Uploads a bundle and applies a create (or, given `previous`, a replace of it). */
async function written(albumId: string, options: WriteOptions & { previous?: Asset } = {}, who: Uploader = member): Promise<Asset> {
  const { previous, ...writeOptions } = options
  const bundle = await openBundle(who, albumId)
  const chain = previous === undefined ? {} : { fileId: previous.fileId, action: 'replace' as const, prior: previous.head, originalBlobHash: previous.original }
  const write = await writeFor(who, bundle, { ...chain, ...writeOptions })
  expect((await who.client.applyManifest(albumId, write.request)).replayed).toBe(false)
  const blobs = new Map(
    [bundle.original, ...bundle.derivatives, ...(bundle.metadata === null ? [] : [bundle.metadata]), write.manifest].map(
      (bytes) => [sha256Hex(bytes), bytes] as const,
    ),
  )
  return { albumId, fileId: write.envelope.file_id, head: write.manifestHash, original: bundle.hashes.ciphertextHash, bundle, write, blobs }
}

/** Deletes `target` and expects the application. */
async function deleted(
  target: DeletionTarget,
  options: DeletionOptions = {},
  who: Uploader = member,
): Promise<OpResult & { manifestHash: string; request: unknown }> {
  const deletion = await deletionFor(who, target, options)
  const result = await who.client.deleteAsset(target.albumId, target.fileId, deletion.request)
  expect(result).toEqual({ asset_id: target.fileId, sync_seq: expect.any(Number), action: 'delete', replayed: false })
  return { ...result, manifestHash: deletion.manifestHash, request: deletion.request }
}

/** Everything a refused request must leave as it was: every row of every table, and what the blob store holds. */
async function snapshot() {
  return { rows: await everyRow(server.database), files: await blobFiles(server) }
}

/** Sends `body` and expects the refusal, with nothing written. */
async function expectRefused(target: { albumId: string; fileId: string }, body: unknown, status: number, code: string, who: Uploader = member) {
  const before = await snapshot()
  const answer = await deleteRaw(server, who, target.albumId, target.fileId, body)
  expect(answer.status, answer.text).toBe(status)
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(answer.json?.code).toBe(code)
  expect(await snapshot()).toEqual(before)
  return answer.json!
}

const downloads = (hash: string) => downloaded(member, hash)

async function verdictOf(asset: Asset) {
  const { verdicts } = await member.client.verifyStorage({ assets: [{ asset_id: asset.fileId, blob_hashes: [...asset.blobs.keys()] }] })
  return verdicts[0]!
}

/** Moves the server's clock, and the member's tokens along (the raw requests send its access token). */
async function clockAt(ms: number): Promise<void> {
  server.clock.set(ms)
  await member.client.getProfile()
}

async function storedBytes(who: Uploader = member): Promise<number> {
  return (await who.client.storageUsage()).stored_bytes
}

describe('a delete that passes every check', () => {
  it('appends one feed entry and ends the asset: its blobs no longer download nor count as indexed; receipts stay, none is issued', async () => {
    const albumId = await album(member)
    const asset = await written(albumId)
    const other = await written(albumId)
    const receipts = (await member.client.assetReceipts(asset.fileId)).receipts
    expect((await verdictOf(asset)).durable).toBe(true)
    const before = await snapshot()

    const deletion = await deletionFor(member, asset)
    expect(await member.client.deleteAsset(albumId, asset.fileId, deletion.request)).toEqual({
      asset_id: asset.fileId,
      sync_seq: 3,
      action: 'delete',
      replayed: false,
    })

    const entries = (await member.client.feed(albumId)).entries
    expect(entries.map((e) => [e.sync_seq, e.asset_id, e.action])).toEqual([
      [1, asset.fileId, 'create'],
      [2, other.fileId, 'create'],
      [3, asset.fileId, 'delete'],
    ])
    const entry = entries[2]!
    expect(entry).toEqual({
      sync_seq: 3,
      asset_id: asset.fileId,
      action: 'delete',
      manifest_cbor: deletion.request.manifest_cbor,
      envelope_hash: deletion.manifestHash,
      applied_at: expect.any(String),
    })
    expect(readManifest(Buffer.from(entry.manifest_cbor, 'base64'), member.identity.publicKey).envelope).toEqual(deletion.envelope)
    // The photo library's view of the album: the asset is gone.
    expect((await liveEntries(member.client, albumId)).map((e) => e.asset_id)).toEqual([other.fileId])

    for (const hash of asset.blobs.keys()) expect(await downloads(hash), hash).toBe(404)
    for (const [hash, bytes] of other.blobs) expect(await downloads(hash), hash).toEqual(bytes)
    const verdict = await verdictOf(asset)
    expect(verdict.durable).toBe(false)
    for (const blob of verdict.blobs) expect(blob).toEqual({ hash: blob.hash, role: 'unknown', stored: false, indexed: false, retrievable: false })
    expect((await verdictOf(other)).durable).toBe(true)
    expect((await member.client.assetReceipts(asset.fileId)).receipts).toEqual(receipts)

    // Nothing stored, nothing receipted, no session touched; the files wait for the collection.
    const after = await snapshot()
    expect(after.files).toEqual(before.files)
    for (const table of ['receipts', 'upload_sessions', 'upload_blobs', 'upload_extras', 'blobs']) expect(after.rows[table], table).toEqual(before.rows[table])
  })

  it('deletes a replaced asset from its last write, and the SDK’s builder makes a delete the server takes', async () => {
    const albumId = await album(member)
    const first = await written(albumId)
    const second = await written(albumId, { previous: first })
    const last = readManifest(second.write.manifest, member.identity.publicKey)
    const deletion = await buildAssetDeletion(member.identity, { last, created_by_device: randomUUID(), client_version: 'sdk/1' })
    expect(await member.client.deleteAsset(deletion.albumId, deletion.fileId, deletion.request)).toEqual({
      asset_id: first.fileId,
      sync_seq: 3,
      action: 'delete',
      replayed: false,
    })
    for (const hash of [...first.blobs.keys(), ...second.blobs.keys()]) expect(await downloads(hash), hash).toBe(404)
  })

  it('is allowed on a taken-down asset (as a replace is): its blobs then answer 404, not 451', async () => {
    const albumId = await album(member)
    const asset = await written(albumId)
    await admin.takeDown(asset.fileId, 'court order')
    expect(await downloads(asset.original)).toBe(451)
    await deleted(asset)
    expect(await downloads(asset.original)).toBe(404)
  })
})

describe('check 1: the album is the caller’s, the caller not suspended', () => {
  it('answers 404 for another account’s album and for an unknown one, even for that account’s own asset', async () => {
    const other = await uploader(server, 'delete-other')
    const theirs = await written(await album(other), {}, other)
    const body = (await deletionFor(other, theirs)).request
    await expectRefused(theirs, body, 404, 'error.not_found')
    await expectRefused({ albumId: randomUUID(), fileId: theirs.fileId }, body, 404, 'error.not_found')
    // The owner's delete goes through.
    expect((await other.client.deleteAsset(theirs.albumId, theirs.fileId, body)).replayed).toBe(false)
  })

  it('answers 400 for an album id or a file id that is not a canonical UUID', async () => {
    const asset = await written(await album(member))
    const body = (await deletionFor(member, asset)).request
    for (const [albumId, fileId] of [
      ['not-a-uuid', asset.fileId],
      [asset.albumId.toUpperCase(), asset.fileId],
      [asset.albumId, 'photo-1'],
      [asset.albumId, asset.fileId.toUpperCase()],
    ] as const) {
      const answer = await deleteRaw(server, member, albumId, fileId, body)
      expect([answer.status, answer.json?.code]).toEqual([400, 'error.request.malformed'])
    }
  })

  it('answers 403 to a suspended account, before the shape, and the same delete succeeds once it is reinstated', async () => {
    const suspended = await uploader(server, 'delete-suspended')
    const asset = await written(await album(suspended), {}, suspended)
    const body = (await deletionFor(suspended, asset)).request
    await admin.suspend(suspended.userId)
    try {
      await expectRefused(asset, body, 403, 'error.account.suspended', suspended)
      await expectRefused(asset, { ...body, unknown: true }, 403, 'error.account.suspended', suspended)
    } finally {
      await admin.reinstate(suspended.userId)
    }
    expect((await suspended.client.deleteAsset(asset.albumId, asset.fileId, body)).replayed).toBe(false)
  })
})

describe('check 2: shape (422)', () => {
  type Mutation = (
    request: Record<string, unknown>,
    envelope: Record<string, unknown>,
    context: { otherUser: string; otherAlbum: string; otherFile: string },
  ) => void
  const setEnvelope =
    (key: string, value: unknown): Mutation =>
    (_r, envelope) => {
      envelope[key] = value
    }
  const cases: [string, Mutation][] = [
    [
      'an unknown key in the request',
      (request) => {
        request.note = 'hi'
      },
    ],
    [
      'a metadata_blob (the ops operation’s member, not this one’s)',
      (request) => {
        request.metadata_blob = null
      },
    ],
    ['an unknown key in the envelope', setEnvelope('caption', 'hi')],
    [
      'manifest_cbor that is not base64',
      (request) => {
        request.manifest_cbor = 'not base64!'
      },
    ],
    [
      'an empty manifest_cbor',
      (request) => {
        request.manifest_cbor = ''
      },
    ],
    [
      'a missing manifest_cbor',
      (request) => {
        delete request.manifest_cbor
      },
    ],
    [
      'a missing manifest_envelope',
      (request) => {
        delete request.manifest_envelope
      },
    ],
    ['action "create"', setEnvelope('action', 'create')],
    ['action "replace"', setEnvelope('action', 'replace')],
    ['a metadata_blob_hash', setEnvelope('metadata_blob_hash', sha256Hex(Buffer.from('metadata')))],
    ['key_mode "escrowed"', setEnvelope('key_mode', 'escrowed')],
    [
      'file_id of another asset than the path’s',
      (_r, envelope, context) => {
        envelope.file_id = context.otherFile
      },
    ],
    [
      'album_id of another album',
      (_r, envelope, context) => {
        envelope.album_id = context.otherAlbum
      },
    ],
    ['album_id null', setEnvelope('album_id', null)],
    [
      'created_by_user of another account',
      (_r, envelope, context) => {
        envelope.created_by_user = context.otherUser
      },
    ],
    ['created_by_device that is not a UUID', setEnvelope('created_by_device', 'pixel-8')],
    ['timestamp that is not RFC 3339', setEnvelope('timestamp', 'yesterday')],
    [
      'prior_provenance_hash in uppercase',
      (_r, envelope) => {
        envelope.prior_provenance_hash = String(envelope.prior_provenance_hash).toUpperCase()
      },
    ],
    ['protocol_version not YYYY-MM-DD', setEnvelope('protocol_version', '2026-6-1')],
  ]

  // One album, another asset in it and another album for every case: each case refuses and then
  // deletes an asset of its own, and no check reads what else the album holds.
  let context: { otherUser: string; otherAlbum: string; otherFile: string }
  let albumId: string
  beforeAll(async () => {
    albumId = await album(member)
    const otherUser = (await uploader(server, 'delete-shape')).userId
    context = { otherUser, otherAlbum: await album(member), otherFile: (await written(albumId)).fileId }
  })

  it.each(cases)('refuses %s, writing nothing', async (_label, mutate) => {
    const asset = await written(albumId)
    const deletion = await deletionFor(member, asset)
    const request = structuredClone(deletion.request) as unknown as Record<string, unknown>
    mutate(request, request.manifest_envelope as Record<string, unknown>, context)
    await expectRefused(asset, request, 422, 'error.request.invalid')
    expect((await member.client.deleteAsset(albumId, asset.fileId, deletion.request)).replayed).toBe(false)
  })

  it('reads a nullable envelope field left out as null', async () => {
    const asset = await written(await album(member))
    const deletion = await deletionFor(member, asset, { overrides: { metadata_blob_hash: undefined, retention_until: undefined } })
    expect(await member.client.deleteAsset(asset.albumId, asset.fileId, deletion.request)).toMatchObject({ action: 'delete', replayed: false })
  })

  it('answers malformed JSON 400 and another media type 415', async () => {
    const asset = await written(await album(member))
    const path = `/v1/albums/${asset.albumId}/assets/${asset.fileId}/delete`
    const broken = await raw(server, 'POST', path, { headers: { ...bearer(member), 'content-type': 'application/json' }, body: '{"manifest_envelope":' })
    expect([broken.status, broken.json?.code]).toEqual([400, 'error.request.malformed'])
    const cbor = await raw(server, 'POST', path, { headers: { ...bearer(member), 'content-type': 'application/cbor' }, body: '{}' })
    expect([cbor.status, cbor.json?.code]).toEqual([415, 'error.request.unsupported_media_type'])
  })
})

describe('check 3: replay', () => {
  it('answers the identical request with the first application’s answer, writing nothing, also once the blobs are collected', async () => {
    const albumId = await album(member)
    const asset = await written(albumId)
    const first = await deleted(asset)
    await written(albumId) // the feed moves on
    for (const collect of [false, true]) {
      if (collect) await collectGarbage(server.deps)
      const before = await snapshot()
      const again = await deleteRaw(server, member, albumId, asset.fileId, first.request)
      expect(again.json).toEqual({ asset_id: asset.fileId, sync_seq: first.sync_seq, action: 'delete', replayed: true })
      expect(await snapshot()).toEqual(before)
    }
  })

  it('keys on the manifest bytes: the same envelope under a newly signed manifest meets the chain check', async () => {
    const asset = await written(await album(member))
    const first = await deletionFor(member, asset)
    await member.client.deleteAsset(asset.albumId, asset.fileId, first.request)
    const resigned = await deletionFor(member, asset, { overrides: { timestamp: first.envelope.timestamp } })
    expect(resigned.envelope).toEqual(first.envelope)
    const problem = await expectRefused(asset, resigned.request, 409, 'error.op.stale_revival')
    expect(problem.chain_head).toBe(first.manifestHash)
  })
})

describe('check 4: protocol range (426)', () => {
  it('refuses a version out of range or older than the album’s, naming the album’s range', async () => {
    const asset = await written(await album(member))
    for (const protocolVersion of ['2024-12-31', '2026-05-31', '2026-11-02']) {
      const problem = await expectRefused(asset, (await deletionFor(member, asset, { protocolVersion })).request, 426, 'error.protocol.out_of_range')
      expect(problem).toMatchObject({ protocol_min: PROTOCOL_CURRENT, protocol_max: PROTOCOL_MAX })
    }
    expect((await deleted(asset, { protocolVersion: PROTOCOL_MAX })).sync_seq).toBe(2)
  })

  it('after an upgrade commit, refuses the asset’s own older version with protocol_min = the album’s new one', async () => {
    const asset = await written(await album(member))
    const intentId = randomUUID()
    await member.client.startUpgrade(asset.albumId, intent(intentId, '2026-09-01'))
    await member.client.commitUpgrade(asset.albumId, intentId, tombstone(intentId))
    const problem = await expectRefused(asset, (await deletionFor(member, asset)).request, 426, 'error.protocol.out_of_range')
    expect(problem).toMatchObject({ protocol_min: '2026-09-01', protocol_max: PROTOCOL_MAX })
    expect((await deleted(asset, { protocolVersion: '2026-09-01' })).replayed).toBe(false)
  })
})

describe('check 5: upgrade window (409)', () => {
  it('refuses a delete while a ceremony is live; the same delete succeeds once it is aborted', async () => {
    const asset = await written(await album(member))
    const deletion = await deletionFor(member, asset)
    const intentId = randomUUID()
    await member.client.startUpgrade(asset.albumId, intent(intentId, '2026-09-01'))
    await expectRefused(asset, deletion.request, 409, 'error.upgrade.in_flight')
    await member.client.abortUpgrade(asset.albumId, intentId)
    expect((await member.client.deleteAsset(asset.albumId, asset.fileId, deletion.request)).sync_seq).toBe(2)
  })
})

describe('the chain check (409 stale_revival)', () => {
  const stale = 'error.op.stale_revival'

  it('refuses a stale, unknown or missing prior_provenance_hash, naming the head', async () => {
    const first = await written(await album(member))
    const second = await written(first.albumId, { previous: first })
    for (const prior of [first.head, sha256Hex(Buffer.from('made up')), null]) {
      const problem = await expectRefused(second, (await deletionFor(member, second, { prior })).request, 409, stale)
      expect(problem.chain_head).toBe(second.head)
    }
    await deleted(second)
  })

  it('refuses an original_blob_hash or a ciphertext_hash that is not the asset’s current original, naming the head', async () => {
    const first = await written(await album(member))
    const second = await written(first.albumId, { previous: first })
    for (const options of [
      { originalBlobHash: first.original },
      { ciphertextHash: first.original },
      { ciphertextHash: sha256Hex(Buffer.from('x')) },
    ] satisfies DeletionOptions[]) {
      const problem = await expectRefused(second, (await deletionFor(member, second, options)).request, 409, stale)
      expect(problem.chain_head).toBe(second.head)
    }
    await deleted(second)
  })

  it('refuses an asset this album does not hold (another album, another account, none), with chain_head absent', async () => {
    const albumId = await album(member)
    const mine = await written(await album(member))
    const other = await uploader(server, 'delete-chain-other')
    const theirs = await written(await album(other), {}, other)
    const none = { albumId, fileId: randomUUID(), head: sha256Hex(Buffer.from('x')), original: sha256Hex(Buffer.from('y')) }
    for (const target of [mine, theirs, none]) {
      const here = { ...target, albumId }
      const problem = await expectRefused(here, (await deletionFor(member, here)).request, 409, stale)
      expect('chain_head' in problem, JSON.stringify(problem)).toBe(false)
    }
  })

  it('refuses a delete without original_blob_hash (null or left out) with 422', async () => {
    const asset = await written(await album(member))
    await expectRefused(asset, (await deletionFor(member, asset, { originalBlobHash: null })).request, 422, 'error.request.invalid')
    await expectRefused(asset, (await deletionFor(member, asset, { overrides: { original_blob_hash: undefined } })).request, 422, 'error.request.invalid')
  })

  it('ends the chain: nothing continues a deleted asset (another delete, a replace, a create of its id), each naming the delete as the head', async () => {
    const asset = await written(await album(member))
    const removal = await deleted(asset)
    const ended = { ...asset, head: removal.manifestHash }
    expect((await expectRefused(ended, (await deletionFor(member, ended)).request, 409, stale)).chain_head).toBe(removal.manifestHash)
    const bundle = await openBundle(member, asset.albumId)
    for (const options of [
      { fileId: asset.fileId, action: 'replace', prior: removal.manifestHash, originalBlobHash: asset.original },
      { fileId: asset.fileId },
    ] satisfies WriteOptions[]) {
      const problem = await problemOf(member.client.applyManifest(asset.albumId, (await writeFor(member, bundle, options)).request))
      expect([problem.status, problem.code, problem.problem.chain_head]).toEqual([409, stale, removal.manifestHash])
    }
    // The session that would have replaced it still carries a create of a new asset.
    expect((await member.client.applyManifest(asset.albumId, (await writeFor(member, bundle)).request)).replayed).toBe(false)
  })
})

describe('the retention floor (409 asset.retained)', () => {
  it('refuses while the asset’s retention_until is ahead, with retained_until; the same delete goes once it has passed', async () => {
    const floor = Math.floor((server.clock.now() + DAY) / 1000) * 1000
    const asset = await written(await album(member), { retentionUntil: iso(floor) })
    const deletion = await deletionFor(member, asset)
    const problem = await expectRefused(asset, deletion.request, 409, 'error.asset.retained')
    expect(problem).toMatchObject({ status: 409, retained_until: iso(floor) })
    await clockAt(floor - 1)
    await expectRefused(asset, deletion.request, 409, 'error.asset.retained')
    await clockAt(floor) // no longer in the future
    expect((await member.client.deleteAsset(asset.albumId, asset.fileId, deletion.request)).replayed).toBe(false)
  })

  it('keeps the floor an earlier manifest set, when a later replace claims none or an earlier one', async () => {
    const floor = Math.floor((server.clock.now() + 2 * DAY) / 1000) * 1000
    const first = await written(await album(member), { retentionUntil: iso(floor) })
    const second = await written(first.albumId, { previous: first })
    const third = await written(first.albumId, { previous: second, retentionUntil: iso(floor - DAY) })
    expect(await expectRefused(third, (await deletionFor(member, third)).request, 409, 'error.asset.retained')).toMatchObject({ retained_until: iso(floor) })
  })

  it('comes after the chain check: a stale delete of a retained asset answers stale_revival', async () => {
    const asset = await written(await album(member), { retentionUntil: iso(server.clock.now() + DAY) })
    await expectRefused(asset, (await deletionFor(member, asset, { prior: null })).request, 409, 'error.op.stale_revival')
  })
})

describe('the checks run in this order', () => {
  it('1 before 2: another account’s album with a malformed body answers 404', async () => {
    const other = await uploader(server, 'delete-order')
    const theirs = await written(await album(other), {}, other)
    await expectRefused(theirs, { ...(await deletionFor(other, theirs)).request, unknown: true }, 404, 'error.not_found')
  })

  it('2 before 3: a malformed body repeating an applied delete answers 422', async () => {
    const asset = await written(await album(member))
    const first = await deleted(asset)
    await expectRefused(asset, { ...(first.request as object), unknown: true }, 422, 'error.request.invalid')
  })

  it('3 before 4 and 5: a replay answers 200 after an upgrade put its version out of range, and during an upgrade window', async () => {
    const asset = await written(await album(member))
    const first = await deleted(asset)
    const intentId = randomUUID()
    await member.client.startUpgrade(asset.albumId, intent(intentId, '2026-09-01'))
    expect((await deleteRaw(server, member, asset.albumId, asset.fileId, first.request)).json).toMatchObject({ replayed: true, sync_seq: first.sync_seq })
    await member.client.commitUpgrade(asset.albumId, intentId, tombstone(intentId))
    expect((await deleteRaw(server, member, asset.albumId, asset.fileId, first.request)).json).toMatchObject({ replayed: true, sync_seq: first.sync_seq })
  })

  it('4 before 5, 5 before the chain, the chain before the retention floor', async () => {
    const asset = await written(await album(member), { retentionUntil: iso(server.clock.now() + DAY) })
    await member.client.startUpgrade(asset.albumId, intent(randomUUID(), '2026-09-01'))
    await expectRefused(asset, (await deletionFor(member, asset, { protocolVersion: '2024-06-01', prior: null })).request, 426, 'error.protocol.out_of_range')
    await expectRefused(asset, (await deletionFor(member, asset, { prior: null })).request, 409, 'error.upgrade.in_flight')
    await expectRefused(asset, (await deletionFor(member, asset)).request, 409, 'error.upgrade.in_flight')
  })
})

describe('garbage collection after a delete', () => {
  it('removes every blob of the asset (replaced bundles went before), and its bytes stop counting once collected; an open session declaring one keeps it', async () => {
    const albumId = await album(member)
    const first = await written(albumId)
    const second = await written(albumId, { previous: first })
    const keeper = await written(albumId)
    await collectGarbage(server.deps) // the replaced bundle goes now
    const usage = await storedBytes()
    await deleted(second)
    expect(await storedBytes()).toBe(usage) // counted until collected
    // A session re-declaring the original (the client uploading it again) keeps it, as it keeps any declared blob.
    const again = await member.client.openUploadSession({
      album_id: albumId,
      crypto_suite_id: 1,
      ciphertext_hash: second.original,
      blobs: [{ role: 'original', hash: second.original, size: second.bundle.original.length }],
    })
    expect(again.blobs.map((blob) => blob.present)).toEqual([true])
    const size = (hashes: string[]) => hashes.reduce((sum, hash) => sum + second.blobs.get(hash)!.length, 0)
    const others = [...second.blobs.keys()].filter((hash) => hash !== second.original)

    await collectGarbage(server.deps)
    let files = await blobFiles(server)
    const inStore = (hash: string) => files.includes(hash)
    expect([...first.blobs.keys(), ...others].filter(inStore)).toEqual([])
    expect(inStore(second.original)).toBe(true)
    expect(await storedBytes()).toBe(usage - size(others))

    await member.client.abortUploadSession(again.upload_id)
    await collectGarbage(server.deps)
    files = await blobFiles(server)
    expect(inStore(second.original)).toBe(false)
    expect(await storedBytes()).toBe(usage - size([...second.blobs.keys()]))
    for (const [hash, bytes] of keeper.blobs) expect(await downloads(hash), hash).toEqual(bytes)
  })

  it('keeps the blobs under a legal hold (placed before or after the delete) until it is lifted, counted all along, never downloadable', async () => {
    const albumId = await album(member)
    const before = await written(albumId)
    const after = await written(albumId)
    await collectGarbage(server.deps)
    await admin.legalHold(before.fileId, 'litigation')
    await deleted(before)
    await deleted(after)
    await admin.legalHold(after.fileId, 'litigation')
    const usage = await storedBytes()

    await collectGarbage(server.deps)
    const files = await blobFiles(server)
    for (const asset of [before, after]) {
      for (const hash of asset.blobs.keys()) {
        // Kept: the rows, and the files of all but the manifest (which the feed's row holds).
        expect((await server.deps.storage.ownedBlobHashes(member.userId, [hash])).has(hash), hash).toBe(true)
        expect(files.includes(hash), hash).toBe(hash !== asset.head)
        expect(await downloads(hash), hash).toBe(404)
      }
      expect((await verdictOf(asset)).blobs.every((blob) => !blob.indexed && !blob.stored)).toBe(true)
    }
    expect(await storedBytes()).toBe(usage)

    await admin.liftHold(before.fileId, 'case closed')
    await collectGarbage(server.deps)
    const remaining = await blobFiles(server)
    for (const hash of before.blobs.keys()) expect(remaining.includes(hash), hash).toBe(false)
    for (const hash of after.blobs.keys()) expect(remaining.includes(hash), hash).toBe(hash !== after.head)
    expect((await server.deps.storage.ownedBlobHashes(member.userId, [...before.blobs.keys()])).size).toBe(0)
    expect((await server.deps.storage.ownedBlobHashes(member.userId, [...after.blobs.keys()])).size).toBe(after.blobs.size)
    expect(await storedBytes()).toBe(usage - [...before.blobs.values()].reduce((sum, bytes) => sum + bytes.length, 0))
  })
})

describe('consistency (coffer fsck’s row checks)', () => {
  it('finds nothing wrong with deleted assets, before and after their collection, held or not', async () => {
    const albumId = await album(member)
    const plain = await written(albumId)
    const held = await written(albumId, { previous: await written(albumId) })
    await admin.legalHold(held.fileId)
    await deleted(plain)
    await deleted(held)
    expect(await server.deps.storage.consistencyFindings()).toEqual([])
    await collectGarbage(server.deps)
    expect(await server.deps.storage.consistencyFindings()).toEqual([])
  })
})

describe('atomicity', () => {
  it('leaves everything as it was when the transaction fails at its last statement, and applies once when sent again', async () => {
    const asset = await written(await album(member))
    const deletion = await deletionFor(member, asset)
    // The feed entry is the transaction's last write: the database refuses it.
    const failing =
      server.database.engine === 'sqlite'
        ? ["create trigger fail_delete before insert on album_ops when new.action = 'delete' begin select raise(abort, 'injected fault'); end"]
        : [
            "create function fail_delete() returns trigger language plpgsql as $$ begin raise exception 'injected fault'; end $$",
            "create trigger fail_delete before insert on album_ops for each row when (new.action = 'delete') execute function fail_delete()",
          ]
    for (const statement of failing) await writeRows(server.database, statement)
    try {
      const before = await snapshot()
      const answer = await deleteRaw(server, member, asset.albumId, asset.fileId, deletion.request)
      expect([answer.status, answer.json?.code]).toEqual([500, 'error.internal'])
      expect(await snapshot()).toEqual(before)
      expect(await downloads(asset.original)).toEqual(asset.bundle.original)
    } finally {
      await writeRows(server.database, server.database.engine === 'sqlite' ? 'drop trigger fail_delete' : 'drop trigger fail_delete on album_ops')
    }
    expect(await member.client.deleteAsset(asset.albumId, asset.fileId, deletion.request)).toMatchObject({ replayed: false, sync_seq: 2 })
    expect(await member.client.deleteAsset(asset.albumId, asset.fileId, deletion.request)).toMatchObject({ replayed: true, sync_seq: 2 })
  })
})
