// A lifecycle write runs API.md section 6's checks 1-7 in their order and writes nothing unless
// all pass (no row, no feed entry, no file, the upload session still open); a write that passes
// indexes its bundle, closes the session and takes the album's next sync_seq in one step, and the
// identical request again answers the first application with replayed true.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.ts'
import { createLogger } from '../../src/http/logging.ts'
import { CofferClient, sha256Hex, type OpResult } from '../../src/sdk/client.ts'
import { raw, problemOf } from '../support/actors.ts'
import { album, ciphertext, uploader, type Uploader } from '../support/albums.ts'
import {
  PROTOCOL_CURRENT,
  PROTOCOL_MAX,
  PROTOCOL_MIN,
  albumState,
  blobFiles,
  downloaded,
  intent,
  openBundle,
  opsRaw,
  tombstone,
  writeFor,
  type Bundle,
  type BundleOptions,
  type Write,
  type WriteOptions,
} from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let member: Uploader
beforeAll(async () => {
  server = await startServer()
  member = await uploader(server, 'lifecycle')
})
afterAll(() => server.close())

interface Applied extends Write {
  readonly bundle: Bundle
  readonly result: OpResult
}

/** Uploads a bundle and applies the write for it. */
async function apply(albumId: string, options: WriteOptions & { bundle?: BundleOptions } = {}, who: Uploader = member): Promise<Applied> {
  const { bundle: bundleOptions, ...writeOptions } = options
  const bundle = await openBundle(who, albumId, bundleOptions)
  const write = await writeFor(who, bundle, writeOptions)
  const result = await who.client.applyManifest(albumId, write.request)
  expect(result.replayed).toBe(false)
  return { ...write, bundle, result }
}

/** A create and the facts a replace of it needs. */
async function created(albumId: string, who: Uploader = member) {
  const fileId = randomUUID()
  const first = await apply(albumId, { fileId }, who)
  return { fileId, first, head: first.manifestHash, original: first.bundle.hashes.ciphertextHash }
}

/**
 * Sends `body` and expects the refusal; everything the album shows (feed, in_flight, what the
 * blob store holds, writes in progress included) is exactly as before.
 */
async function expectRefused(albumId: string, body: unknown, status: number, code: string, who: Uploader = member) {
  const before = await albumState(server, who, albumId)
  const answer = await opsRaw(server, who, albumId, body)
  expect(answer.status, answer.text).toBe(status)
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(answer.json?.code).toBe(code)
  expect(answer.json?.status).toBe(status)
  expect(await albumState(server, who, albumId)).toEqual(before)
  return answer.json!
}

function blobsOf(bundle: Bundle, write: Write): Map<string, Buffer> {
  return new Map([
    [bundle.hashes.ciphertextHash, bundle.original],
    ...bundle.derivatives.map((bytes) => [sha256Hex(bytes), bytes] as const),
    ...(bundle.metadata === null ? [] : [[sha256Hex(bundle.metadata), bundle.metadata] as const]),
    [write.manifestHash, write.manifest],
  ])
}

const downloads = (hash: string) => downloaded(member, hash)

async function commitUpgrade(albumId: string, to: string): Promise<void> {
  const intentId = randomUUID()
  await member.client.startUpgrade(albumId, intent(intentId, to))
  await member.client.commitUpgrade(albumId, intentId, tombstone(intentId))
  expect((await member.client.listAlbums()).albums.find((a) => a.album_id === albumId)?.protocol_version).toBe(to)
}

describe('applying creates and replaces', () => {
  it('gives each album its own sync_seq 1, 2, 3, ... in application order', async () => {
    const a = await album(member)
    const b = await album(member)
    const order = [a, b, a, a, b, a]
    const seqs: Record<string, number[]> = { [a]: [], [b]: [] }
    for (const albumId of order) {
      const { result, envelope } = await apply(albumId)
      expect(result).toEqual({ asset_id: envelope.file_id, sync_seq: expect.any(Number), action: 'create', replayed: false })
      seqs[albumId]!.push(result.sync_seq)
    }
    expect(seqs[a]).toEqual([1, 2, 3, 4])
    expect(seqs[b]).toEqual([1, 2])
    expect((await member.client.feed(a)).entries.map((e) => e.sync_seq)).toEqual([1, 2, 3, 4])
    expect((await member.client.feed(b)).entries.map((e) => e.sync_seq)).toEqual([1, 2])
  })

  it('continues a replace from the head: same asset, next sync_seq, the new manifest becomes the head', async () => {
    const albumId = await album(member)
    const { fileId, first, head, original } = await created(albumId)
    expect(first.result.sync_seq).toBe(1)
    const second = await apply(albumId, { fileId, action: 'replace', prior: head, originalBlobHash: original })
    expect(second.result).toEqual({ asset_id: fileId, sync_seq: 2, action: 'replace', replayed: false })
    // And again from the new head and the new original.
    const third = await apply(albumId, { fileId, action: 'replace', prior: second.manifestHash, originalBlobHash: second.bundle.hashes.ciphertextHash })
    expect(third.result).toEqual({ asset_id: fileId, sync_seq: 3, action: 'replace', replayed: false })

    const entries = (await member.client.feed(albumId)).entries
    expect(entries.map((e) => [e.sync_seq, e.asset_id, e.action, e.envelope_hash, e.manifest_cbor])).toEqual([
      [1, fileId, 'create', first.manifestHash, first.request.manifest_cbor],
      [2, fileId, 'replace', second.manifestHash, second.request.manifest_cbor],
      [3, fileId, 'replace', third.manifestHash, third.request.manifest_cbor],
    ])
    expect(entries.map((e) => e.metadata_blob_hash)).toEqual([first, second, third].map((w) => w.envelope.metadata_blob_hash))
  })

  it('writes in one step: the session closes, the feed gains one entry, the bundle downloads and the replaced one no longer does', async () => {
    const albumId = await album(member)
    const filesBefore = await blobFiles(server)
    const bundle = await openBundle(member, albumId, { derivatives: 2 })
    const create = await writeFor(member, bundle)
    const beforeCreate = await albumState(server, member, albumId)
    expect(beforeCreate.inFlight).toBe(1)
    expect(beforeCreate.feed).toEqual([])

    const result = await member.client.applyManifest(albumId, create.request)
    const afterCreate = await albumState(server, member, albumId)
    expect(afterCreate.inFlight).toBe(0)
    expect(afterCreate.feed).toHaveLength(1)
    expect(afterCreate.feed[0]).toMatchObject({
      sync_seq: result.sync_seq,
      asset_id: create.envelope.file_id,
      action: 'create',
      envelope_hash: create.manifestHash,
      manifest_cbor: create.request.manifest_cbor,
      metadata_blob_hash: bundle.hashes.metadataBlobHash,
    })
    const createBlobs = blobsOf(bundle, create)
    expect(createBlobs.size).toBe(5) // original, two derivatives, metadata, provenance
    for (const [hash, bytes] of createBlobs) expect(await downloads(hash), hash).toEqual(bytes)
    // The store holds exactly the new files: the uploaded blobs and the metadata; the manifest
    // (provenance) is held by the feed's row alone.
    expect(afterCreate.files).toEqual([...filesBefore, ...[...createBlobs.keys()].filter((hash) => hash !== create.manifestHash)].sort())

    const next = await openBundle(member, albumId, { derivatives: 1 })
    const replace = await writeFor(member, next, {
      fileId: create.envelope.file_id,
      action: 'replace',
      prior: create.manifestHash,
      originalBlobHash: bundle.hashes.ciphertextHash,
    })
    expect((await member.client.readUpgrade(albumId)).in_flight).toBe(1)
    expect((await member.client.applyManifest(albumId, replace.request)).sync_seq).toBe(result.sync_seq + 1)
    const afterReplace = await albumState(server, member, albumId)
    expect(afterReplace.inFlight).toBe(0)
    expect(afterReplace.feed.map((e) => [e.action, e.envelope_hash])).toEqual([
      ['create', create.manifestHash],
      ['replace', replace.manifestHash],
    ])
    for (const [hash, bytes] of blobsOf(next, replace)) expect(await downloads(hash), hash).toEqual(bytes)
    for (const hash of createBlobs.keys()) expect(await downloads(hash), hash).toBe(404)
  })

  it('reads a nullable envelope field left out as null (SPEC.md: "may be null or absent")', async () => {
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId, { metadata: false })
    const write = await writeFor(member, bundle, { metadataBlob: undefined })
    const envelope: Record<string, unknown> = { ...write.request.manifest_envelope }
    for (const key of ['metadata_blob_hash', 'original_blob_hash', 'prior_provenance_hash', 'retention_until']) delete envelope[key]
    const answer = await opsRaw(server, member, albumId, { ...write.request, manifest_envelope: envelope })
    expect(answer.json, answer.text).toEqual({ asset_id: write.envelope.file_id, sync_seq: 1, action: 'create', replayed: false })
    // A replace leaving out prior_provenance_hash continues no chain: 409 with the head.
    const next = await openBundle(member, albumId, { metadata: false })
    const replace = await writeFor(member, next, {
      fileId: write.envelope.file_id,
      action: 'replace',
      originalBlobHash: bundle.hashes.ciphertextHash,
      metadataBlob: undefined,
    })
    const { prior_provenance_hash: _prior, ...withoutPrior } = replace.request.manifest_envelope
    const refused = await opsRaw(server, member, albumId, { ...replace.request, manifest_envelope: withoutPrior })
    expect([refused.status, refused.json?.code, refused.json?.chain_head]).toEqual([409, 'error.op.stale_revival', write.manifestHash])
  })

  it('accepts a write without metadata (metadata_blob null or left out) and without derivatives', async () => {
    const albumId = await album(member)
    for (const metadataBlob of [null, undefined]) {
      const bundle = await openBundle(member, albumId, { metadata: false, derivatives: 0 })
      const write = await writeFor(member, bundle, { metadataBlob })
      const result = await member.client.applyManifest(albumId, write.request)
      expect(result.replayed).toBe(false)
      const entry = (await member.client.feed(albumId)).entries.find((e) => e.sync_seq === result.sync_seq)
      expect(entry?.envelope_hash).toBe(write.manifestHash)
      expect(entry && 'metadata_blob_hash' in entry).toBe(false)
    }
  })
})

describe('check 1: the album is the caller’s', () => {
  it('answers 404 for another account’s album and for an unknown one, writing nothing', async () => {
    const other = await uploader(server, 'other')
    const theirs = await album(other)
    // A complete, well-formed write of the other account for its own album, sent by this member.
    const bundle = await openBundle(other, theirs)
    const write = await writeFor(other, bundle)
    const before = await albumState(server, other, theirs)
    const answer = await opsRaw(server, member, theirs, write.request)
    expect(answer.status).toBe(404)
    expect(answer.json?.code).toBe('error.not_found')
    expect((await opsRaw(server, member, randomUUID(), write.request)).json?.code).toBe('error.not_found')
    expect(await albumState(server, other, theirs)).toEqual(before)
    // The owner's write still goes through.
    expect((await other.client.applyManifest(theirs, write.request)).replayed).toBe(false)
  })

  it('answers 400 for an album id that is not a canonical UUID', async () => {
    const bundle = await openBundle(member, await album(member))
    const write = await writeFor(member, bundle)
    for (const bad of ['not-a-uuid', randomUUID().toUpperCase()]) {
      const answer = await opsRaw(server, member, bad, write.request)
      expect(answer.status).toBe(400)
      expect(answer.json?.code).toBe('error.request.malformed')
    }
  })
})

describe('check 2: shape (422)', () => {
  type Mutation = (request: Record<string, unknown>, envelope: Record<string, unknown>, context: { otherUser: string; otherAlbum: string }) => void
  let otherUser: string
  beforeAll(async () => {
    otherUser = (await uploader(server, 'shape-other')).userId
  })

  const setEnvelope =
    (key: string, value: unknown): Mutation =>
    (_r, envelope) => {
      envelope[key] = value
    }
  const cases: [string, Mutation][] = [
    [
      'an unknown key in OpRequest',
      (request) => {
        request.note = 'hi'
      },
    ],
    ['an unknown key in ManifestEnvelope', setEnvelope('caption', 'hi')],
    [
      'manifest_cbor that is not base64',
      (request) => {
        request.manifest_cbor = 'not base64!'
      },
    ],
    [
      'manifest_cbor in base64url rather than standard base64',
      (request) => {
        request.manifest_cbor = Buffer.from([0xfb, 0xff, 0xbf]).toString('base64url')
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
      'metadata_blob that is not base64',
      (request) => {
        request.metadata_blob = '***'
      },
    ],
    ['action "delete"', setEnvelope('action', 'delete')],
    ['action "revive"', setEnvelope('action', 'revive')],
    ['key_mode "escrowed"', setEnvelope('key_mode', 'escrowed')],
    [
      'album_id of another album',
      (_r, envelope, context) => {
        envelope.album_id = context.otherAlbum
      },
    ],
    ['album_id null', setEnvelope('album_id', null)],
    [
      'album_id left out (absent reads as null)',
      (_r, envelope) => {
        delete envelope.album_id
      },
    ],
    [
      'created_by_user of another account',
      (_r, envelope, context) => {
        envelope.created_by_user = context.otherUser
      },
    ],
    ['file_id that is not a UUID', setEnvelope('file_id', 'photo-0001')],
    [
      'file_id in uppercase',
      (_r, envelope) => {
        envelope.file_id = String(envelope.file_id).toUpperCase()
      },
    ],
    ['created_by_device that is not a UUID', setEnvelope('created_by_device', 'pixel-8')],
    ['timestamp that is not RFC 3339', setEnvelope('timestamp', 'yesterday')],
    ['timestamp without an offset', setEnvelope('timestamp', '2026-06-01T12:00:00')],
    ['retention_until that is not RFC 3339', setEnvelope('retention_until', '2027-01-01')],
    ['protocol_version not YYYY-MM-DD', setEnvelope('protocol_version', '2026-6-1')],
    ['protocol_version 20260601', setEnvelope('protocol_version', '20260601')],
    ['protocol_version 2026-02-30 (no such day)', setEnvelope('protocol_version', '2026-02-30')],
    [
      'a missing envelope field (file_id)',
      (_r, envelope) => {
        delete envelope.file_id
      },
    ],
    ['crypto_suite_id as a string', setEnvelope('crypto_suite_id', '1')],
  ]

  it.each(cases)('refuses %s, writes nothing, and the corrected write then succeeds', async (_label, mutate) => {
    const albumId = await album(member)
    const otherAlbum = await album(member)
    const bundle = await openBundle(member, albumId)
    const write = await writeFor(member, bundle)
    const body = structuredClone(write.request) as unknown as Record<string, unknown>
    mutate(body, body.manifest_envelope as Record<string, unknown>, { otherUser, otherAlbum })
    await expectRefused(albumId, body, 422, 'error.request.invalid')
    const result = await member.client.applyManifest(albumId, write.request)
    expect(result).toEqual({ asset_id: write.envelope.file_id, sync_seq: 1, action: 'create', replayed: false })
  })

  it('refuses a body that is not JSON with 400 and another media type with 415', async () => {
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId)
    const write = await writeFor(member, bundle)
    const headers = { authorization: `Bearer ${member.client.tokens!.access_token}` }
    const broken = await raw(server, 'POST', `/v1/albums/${albumId}/ops`, {
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{"manifest_envelope":',
    })
    expect([broken.status, broken.json?.code]).toEqual([400, 'error.request.malformed'])
    const cbor = await raw(server, 'POST', `/v1/albums/${albumId}/ops`, {
      headers: { ...headers, 'content-type': 'application/cbor' },
      body: JSON.stringify(write.request),
    })
    expect([cbor.status, cbor.json?.code]).toEqual([415, 'error.request.unsupported_media_type'])
    expect((await member.client.applyManifest(albumId, write.request)).sync_seq).toBe(1)
  })
})

describe('check 3: replay', () => {
  it('answers the identical request with the first application’s answer and replayed true, writing nothing', async () => {
    const albumId = await album(member)
    const first = await apply(albumId)
    // Later writes move the feed on; the replay still answers the first position.
    await apply(albumId)
    const before = await albumState(server, member, albumId)
    expect(before.feed).toHaveLength(2)
    for (let i = 0; i < 2; i++) {
      const again = await member.client.applyManifest(albumId, first.request)
      expect(again).toEqual({ asset_id: first.result.asset_id, sync_seq: first.result.sync_seq, action: 'create', replayed: true })
    }
    expect(await albumState(server, member, albumId)).toEqual(before)
  })

  it('answers a replayed replace with its own action and position', async () => {
    const albumId = await album(member)
    const { fileId, head, original } = await created(albumId)
    const replace = await apply(albumId, { fileId, action: 'replace', prior: head, originalBlobHash: original })
    const before = await albumState(server, member, albumId)
    expect(await member.client.applyManifest(albumId, replace.request)).toEqual({ asset_id: fileId, sync_seq: 2, action: 'replace', replayed: true })
    expect(await albumState(server, member, albumId)).toEqual(before)
  })

  it('keys on the manifest bytes: the same envelope under a newly signed manifest is no replay and meets the later checks', async () => {
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId)
    const write = await writeFor(member, bundle)
    await member.client.applyManifest(albumId, write.request)
    const resigned = await writeFor(member, bundle, { fileId: write.envelope.file_id, overrides: { timestamp: write.envelope.timestamp } })
    expect(resigned.envelope).toEqual(write.envelope)
    expect(resigned.manifestHash).not.toBe(write.manifestHash)
    // Its session was closed by the first application: check 6 answers.
    await expectRefused(albumId, resigned.request, 422, 'error.op.bundle_incomplete')
  })
})

describe('check 4: protocol range (426)', () => {
  async function refusedVersion(albumId: string, version: string) {
    const bundle = await openBundle(member, albumId)
    const write = await writeFor(member, bundle, { protocolVersion: version })
    const problem = await expectRefused(albumId, write.request, 426, 'error.protocol.out_of_range')
    return { problem, bundle }
  }

  it('refuses a version below PROTOCOL_MIN or above PROTOCOL_MAX, naming the album’s range', async () => {
    const albumId = await album(member)
    // A fresh album is pinned at PROTOCOL_CURRENT, later than PROTOCOL_MIN: that is protocol_min.
    for (const version of ['2024-12-31', '2026-11-02', '2099-01-01']) {
      const { problem, bundle } = await refusedVersion(albumId, version)
      expect(problem).toMatchObject({ protocol_min: PROTOCOL_CURRENT, protocol_max: PROTOCOL_MAX })
      // The same bundle under an accepted version goes through.
      expect((await member.client.applyManifest(albumId, (await writeFor(member, bundle)).request)).replayed).toBe(false)
    }
  })

  it('refuses a version within [PROTOCOL_MIN, PROTOCOL_MAX] but older than the album’s, and accepts both ends of the album’s range', async () => {
    const albumId = await album(member)
    const { problem } = await refusedVersion(albumId, '2026-05-31')
    expect(problem).toMatchObject({ protocol_min: PROTOCOL_CURRENT, protocol_max: PROTOCOL_MAX })
    for (const version of [PROTOCOL_CURRENT, PROTOCOL_MAX]) {
      const { result } = await apply(albumId, { protocolVersion: version })
      expect(result.replayed).toBe(false)
    }
  })

  it('after an upgrade commit, refuses versions below the album’s new version with protocol_min = that version', async () => {
    const albumId = await album(member)
    await apply(albumId) // under the old version, before the upgrade
    await commitUpgrade(albumId, '2026-09-01')
    for (const version of [PROTOCOL_CURRENT, '2026-08-31']) {
      const { problem } = await refusedVersion(albumId, version)
      expect(problem).toMatchObject({ protocol_min: '2026-09-01', protocol_max: PROTOCOL_MAX })
    }
    expect((await apply(albumId, { protocolVersion: '2026-09-01' })).result.sync_seq).toBe(2)
  })

  it('names PROTOCOL_MIN when it is later than the album’s version (an instance started with a raised PROTOCOL_MIN)', async () => {
    const albumId = await album(member)
    expect(server.deps.config.protocol).toEqual({ min: PROTOCOL_MIN, current: PROTOCOL_CURRENT, max: PROTOCOL_MAX })
    // A second instance over the same database and blob store, configured after the album was provisioned.
    const raised = { min: '2026-08-01', current: '2026-08-01', max: PROTOCOL_MAX }
    const later = await buildApp({ ...server.deps, log: createLogger('silent'), config: { ...server.deps.config, protocol: raised } })
    const url = await later.listen({ port: 0, host: '127.0.0.1' })
    try {
      const client = new CofferClient({ baseUrl: url, tokens: member.client.tokens, now: server.clock.now })
      const bundle = await openBundle(member, albumId)
      const old = await writeFor(member, bundle, { protocolVersion: '2026-07-01' })
      const before = await albumState(server, member, albumId)
      const problem = await problemOf(client.applyManifest(albumId, old.request))
      expect(problem.status).toBe(426)
      expect(problem.problem).toMatchObject({ code: 'error.protocol.out_of_range', protocol_min: '2026-08-01', protocol_max: PROTOCOL_MAX })
      expect(await albumState(server, member, albumId)).toEqual(before)
      // The first instance still takes it: the album's own range starts at its pinned version.
      expect((await member.client.applyManifest(albumId, old.request)).replayed).toBe(false)
      const current = await writeFor(member, await openBundle(member, albumId), { protocolVersion: '2026-08-01' })
      expect((await client.applyManifest(albumId, current.request)).sync_seq).toBe(2)
    } finally {
      await later.close()
    }
  })
})

describe('check 5: upgrade window (409)', () => {
  it('refuses writes while a ceremony is live; the same write succeeds once it is aborted', async () => {
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId)
    const write = await writeFor(member, bundle)
    const intentId = randomUUID()
    await member.client.startUpgrade(albumId, intent(intentId, '2026-09-01'))
    await expectRefused(albumId, write.request, 409, 'error.upgrade.in_flight')
    await member.client.abortUpgrade(albumId, intentId)
    expect((await member.client.applyManifest(albumId, write.request)).sync_seq).toBe(1)
  })
})

describe('check 6: bundle (422 bundle_incomplete)', () => {
  const incomplete = 'error.op.bundle_incomplete'

  it('refuses a ciphertext_hash no open upload session of the album names', async () => {
    const albumId = await album(member)
    const elsewhere = await album(member)
    // Never opened: a bundle whose session is in another album of the same account.
    const foreign = await openBundle(member, elsewhere)
    await expectRefused(albumId, (await writeFor(member, foreign, { albumId })).request, 422, incomplete)
    // Aborted.
    const aborted = await openBundle(member, albumId)
    await member.client.abortUploadSession(aborted.uploadId)
    await expectRefused(albumId, (await writeFor(member, aborted)).request, 422, incomplete)
    // Expired.
    const expiring = await openBundle(member, albumId)
    const expiringWrite = await writeFor(member, expiring)
    server.clock.advance(server.deps.config.uploadSessionTtlS * 1000 + 1)
    await expectRefused(albumId, expiringWrite.request, 422, incomplete)
    // Already closed by an applied write: the same bundle under another manifest.
    const used = await apply(albumId)
    await expectRefused(albumId, (await writeFor(member, used.bundle)).request, 422, incomplete)
  })

  it('refuses a session whose blobs are not all stored, until they are', async () => {
    const albumId = await album(member)
    for (const send of ['none', 'original'] as const) {
      const bundle = await openBundle(member, albumId, { send, derivatives: 2 })
      const write = await writeFor(member, bundle)
      await expectRefused(albumId, write.request, 422, incomplete)
      if (send === 'none') await member.client.putBlob(bundle.uploadId, bundle.hashes.ciphertextHash, bundle.original)
      await expectRefused(albumId, write.request, 422, incomplete)
      await member.client.putBlob(bundle.uploadId, bundle.hashes.derivativeHashes[0]!, bundle.derivatives[0]!)
      await expectRefused(albumId, write.request, 422, incomplete)
      await member.client.putBlob(bundle.uploadId, bundle.hashes.derivativeHashes[1]!, bundle.derivatives[1]!)
      expect((await member.client.applyManifest(albumId, write.request)).replayed).toBe(false)
    }
  })

  it('refuses a crypto_suite_id other than the session’s', async () => {
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId)
    await expectRefused(albumId, (await writeFor(member, bundle, { cryptoSuiteId: 2 })).request, 422, incomplete)
    expect((await member.client.applyManifest(albumId, (await writeFor(member, bundle)).request)).replayed).toBe(false)
  })

  it('takes an older complete session for the original when a newer one still lacks blobs, and closes that one', async () => {
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId)
    const lacking = ciphertext(200)
    const newer = await member.client.openUploadSession({
      album_id: albumId,
      crypto_suite_id: 1,
      ciphertext_hash: bundle.hashes.ciphertextHash,
      blobs: [
        { role: 'original', hash: bundle.hashes.ciphertextHash, size: bundle.original.length },
        { role: 'derivative', hash: sha256Hex(lacking), size: lacking.length },
      ],
    })
    expect((await member.client.readUpgrade(albumId)).in_flight).toBe(2)
    expect((await member.client.applyManifest(albumId, (await writeFor(member, bundle)).request)).replayed).toBe(false)
    // The complete session closed; the newer, incomplete one is still open and still counts.
    expect((await member.client.readUpgrade(albumId)).in_flight).toBe(1)
    expect((await member.client.uploadSessionStatus(newer.upload_id)).upload_id).toBe(newer.upload_id)
  })

  it.each([
    ['metadata_blob present without metadata_blob_hash', { overrides: { metadata_blob_hash: null } }],
    ['metadata_blob null with a metadata_blob_hash', { metadataBlob: null }],
    ['metadata_blob left out with a metadata_blob_hash', { metadataBlob: undefined }],
    ['metadata_blob whose hash differs from metadata_blob_hash', { metadataBlob: Buffer.from('other metadata').toString('base64') }],
    ['metadata_blob_hash naming bytes other than metadata_blob', { overrides: { metadata_blob_hash: sha256Hex(Buffer.from('other')) } }],
  ] satisfies [string, WriteOptions][])('refuses %s', async (_label, options) => {
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId)
    await expectRefused(albumId, (await writeFor(member, bundle, options)).request, 422, incomplete)
    expect((await member.client.applyManifest(albumId, (await writeFor(member, bundle)).request)).replayed).toBe(false)
  })

  it('refuses metadata_blob on a write that commits none', async () => {
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId, { metadata: false })
    const extra = await writeFor(member, bundle, { metadataBlob: Buffer.from('surprise').toString('base64') })
    await expectRefused(albumId, extra.request, 422, incomplete)
    expect((await member.client.applyManifest(albumId, (await writeFor(member, bundle)).request)).replayed).toBe(false)
  })
})

describe('check 7: chain (409 stale_revival)', () => {
  const stale = 'error.op.stale_revival'

  it('refuses a create of an existing file_id, naming its head', async () => {
    const albumId = await album(member)
    const { fileId, head, original } = await created(albumId)
    const replaced = await apply(albumId, { fileId, action: 'replace', prior: head, originalBlobHash: original })
    const bundle = await openBundle(member, albumId)
    const problem = await expectRefused(albumId, (await writeFor(member, bundle, { fileId })).request, 409, stale)
    expect(problem.chain_head).toBe(replaced.manifestHash)
    // The corrected write: a create of a new asset from the same session.
    expect((await member.client.applyManifest(albumId, (await writeFor(member, bundle)).request)).sync_seq).toBe(3)
  })

  it('refuses a create with a prior_provenance_hash for a new asset, with chain_head absent', async () => {
    const albumId = await album(member)
    const { head } = await created(albumId)
    const bundle = await openBundle(member, albumId)
    for (const prior of [head, sha256Hex(Buffer.from('made up'))]) {
      const problem = await expectRefused(albumId, (await writeFor(member, bundle, { prior })).request, 409, stale)
      expect('chain_head' in problem).toBe(false)
    }
    expect((await member.client.applyManifest(albumId, (await writeFor(member, bundle)).request)).replayed).toBe(false)
  })

  it('refuses a replace from a stale or unknown prior_provenance_hash, naming the current head', async () => {
    const albumId = await album(member)
    const { fileId, head, original } = await created(albumId)
    const second = await apply(albumId, { fileId, action: 'replace', prior: head, originalBlobHash: original })
    const currentOriginal = second.bundle.hashes.ciphertextHash
    const bundle = await openBundle(member, albumId)
    for (const prior of [head, sha256Hex(Buffer.from('made up')), null]) {
      const write = await writeFor(member, bundle, { fileId, action: 'replace', prior, originalBlobHash: currentOriginal })
      const problem = await expectRefused(albumId, write.request, 409, stale)
      expect(problem.chain_head).toBe(second.manifestHash)
    }
    const corrected = await writeFor(member, bundle, { fileId, action: 'replace', prior: second.manifestHash, originalBlobHash: currentOriginal })
    expect(await member.client.applyManifest(albumId, corrected.request)).toEqual({ asset_id: fileId, sync_seq: 3, action: 'replace', replayed: false })
  })

  it('refuses a replace whose original_blob_hash is not the asset’s current original, naming the head', async () => {
    const albumId = await album(member)
    const { fileId, head, original } = await created(albumId)
    const second = await apply(albumId, { fileId, action: 'replace', prior: head, originalBlobHash: original })
    const bundle = await openBundle(member, albumId)
    // The replaced original, and the new bundle's own original.
    for (const wrong of [original, bundle.hashes.ciphertextHash]) {
      const write = await writeFor(member, bundle, { fileId, action: 'replace', prior: second.manifestHash, originalBlobHash: wrong })
      const problem = await expectRefused(albumId, write.request, 409, stale)
      expect(problem.chain_head).toBe(second.manifestHash)
    }
    const corrected = await writeFor(member, bundle, {
      fileId,
      action: 'replace',
      prior: second.manifestHash,
      originalBlobHash: second.bundle.hashes.ciphertextHash,
    })
    expect((await member.client.applyManifest(albumId, corrected.request)).sync_seq).toBe(3)
  })

  it('refuses a replace of an asset this album does not hold (another album, another account, none), with chain_head absent', async () => {
    const albumId = await album(member)
    const mine = await created(await album(member))
    const other = await uploader(server, 'chain-other')
    const theirs = await created(await album(other), other)
    const bundle = await openBundle(member, albumId)
    for (const target of [mine, theirs, { fileId: randomUUID(), head: sha256Hex(Buffer.from('x')), original: sha256Hex(Buffer.from('y')) }]) {
      const write = await writeFor(member, bundle, { fileId: target.fileId, action: 'replace', prior: target.head, originalBlobHash: target.original })
      const problem = await expectRefused(albumId, write.request, 409, stale)
      expect('chain_head' in problem, JSON.stringify(problem)).toBe(false)
    }
    // A create of another account's file_id does not reveal its head either.
    const problem = await expectRefused(albumId, (await writeFor(member, bundle, { fileId: theirs.fileId })).request, 409, stale)
    expect('chain_head' in problem).toBe(false)
    expect((await member.client.applyManifest(albumId, (await writeFor(member, bundle)).request)).replayed).toBe(false)
  })

  it('refuses a replace without original_blob_hash (null or left out) with 422', async () => {
    const albumId = await album(member)
    const { fileId, head, original } = await created(albumId)
    const bundle = await openBundle(member, albumId)
    const nullOriginal = await writeFor(member, bundle, { fileId, action: 'replace', prior: head })
    expect(nullOriginal.envelope.original_blob_hash).toBeNull()
    await expectRefused(albumId, nullOriginal.request, 422, 'error.request.invalid')
    const leftOut = structuredClone(nullOriginal.request) as unknown as { manifest_envelope: Record<string, unknown> }
    delete leftOut.manifest_envelope.original_blob_hash
    await expectRefused(albumId, leftOut, 422, 'error.request.invalid')
    const corrected = await writeFor(member, bundle, { fileId, action: 'replace', prior: head, originalBlobHash: original })
    expect((await member.client.applyManifest(albumId, corrected.request)).sync_seq).toBe(2)
  })
})

describe('the checks run in API.md’s order', () => {
  it('1 before 2: another account’s album with a malformed body answers 404', async () => {
    const other = await uploader(server, 'order-other')
    const theirs = await album(other)
    const write = await writeFor(member, await openBundle(member, await album(member)))
    const answer = await opsRaw(server, member, theirs, { ...write.request, unknown: true })
    expect([answer.status, answer.json?.code]).toEqual([404, 'error.not_found'])
  })

  it('2 before 3: a malformed body repeating an applied manifest answers 422', async () => {
    const albumId = await album(member)
    const first = await apply(albumId)
    await expectRefused(albumId, { ...first.request, unknown: true }, 422, 'error.request.invalid')
    await expectRefused(
      albumId,
      { ...first.request, manifest_envelope: { ...first.request.manifest_envelope, key_mode: 'plain' } },
      422,
      'error.request.invalid',
    )
  })

  it('3 before 4: the replay of an applied manifest whose protocol is now out of range answers 200 replayed', async () => {
    const albumId = await album(member)
    const first = await apply(albumId)
    await commitUpgrade(albumId, '2026-09-01')
    const before = await albumState(server, member, albumId)
    expect(await member.client.applyManifest(albumId, first.request)).toEqual({ ...first.result, replayed: true })
    expect(await albumState(server, member, albumId)).toEqual(before)
    // Not a replay, the same version is refused.
    const fresh = await writeFor(member, await openBundle(member, albumId), { protocolVersion: first.envelope.protocol_version })
    await expectRefused(albumId, fresh.request, 426, 'error.protocol.out_of_range')
  })

  it('3 before 5, 6 and 7: a replay answers 200 during an upgrade window, with its session closed and its asset existing', async () => {
    const albumId = await album(member)
    const first = await apply(albumId)
    await member.client.startUpgrade(albumId, intent(randomUUID(), '2026-09-01'))
    expect(await member.client.applyManifest(albumId, first.request)).toEqual({ ...first.result, replayed: true })
  })

  it('4 before 5: a protocol out of range during an upgrade window answers 426', async () => {
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId)
    await member.client.startUpgrade(albumId, intent(randomUUID(), '2026-09-01'))
    const problem = await expectRefused(
      albumId,
      (await writeFor(member, bundle, { protocolVersion: '2024-06-01' })).request,
      426,
      'error.protocol.out_of_range',
    )
    expect(problem).toMatchObject({ protocol_min: PROTOCOL_CURRENT, protocol_max: PROTOCOL_MAX })
  })

  it('5 before 6: an incomplete bundle during an upgrade window answers 409 in_flight', async () => {
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId, { send: 'none' })
    await member.client.startUpgrade(albumId, intent(randomUUID(), '2026-09-01'))
    await expectRefused(albumId, (await writeFor(member, bundle)).request, 409, 'error.upgrade.in_flight')
  })

  it('6 before 7: an incomplete bundle that would also break the chain answers 422 bundle_incomplete', async () => {
    const albumId = await album(member)
    const { fileId, head, original } = await created(albumId)
    const bundle = await openBundle(member, albumId, { send: 'original' })
    await expectRefused(albumId, (await writeFor(member, bundle, { fileId })).request, 422, 'error.op.bundle_incomplete')
    const staleReplace = await writeFor(member, bundle, { fileId, action: 'replace', prior: sha256Hex(Buffer.from('old')), originalBlobHash: original })
    await expectRefused(albumId, staleReplace.request, 422, 'error.op.bundle_incomplete')
    // With the bundle complete, the chain check is what answers.
    await member.client.putBlob(bundle.uploadId, bundle.hashes.derivativeHashes[0]!, bundle.derivatives[0]!)
    const problem = await expectRefused(albumId, staleReplace.request, 409, 'error.op.stale_revival')
    expect(problem.chain_head).toBe(head)
  })
})
