// The upgrade ceremony follows SPEC.md's table and API.md section 6: a CBOR intent opens one
// window (the same intent again is idempotent, another is refused), only the live intent aborts
// or commits it, the deadline aborts it, writes and new upload sessions wait for it, and a commit
// with nothing in flight pins the album to the new protocol version.
import { encode } from 'cborg'
import { CBOR_MAX_DEPTH } from '../../src/codec/cbor.ts'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UpgradePhase } from '../../src/sdk/client.ts'
import { raw, problemOf } from '../support/actors.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { PROTOCOL_CURRENT, PROTOCOL_MAX, albumState, bearer, intent, iso, openBundle, tombstone, writeFor } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let member: Uploader
let windowMs: number
beforeAll(async () => {
  server = await startServer()
  member = await uploader(server, 'upgrade')
  windowMs = server.deps.config.upgradeWindowS * 1000
})
afterAll(() => server.close())

const TARGET = '2026-09-01'

function upgradeRaw(method: string, path: string, init: { body?: Uint8Array | string; contentType?: string } = {}, who: Uploader = member) {
  return raw(server, method, path, {
    headers: { ...bearer(who), ...(init.contentType === undefined ? {} : { 'content-type': init.contentType }) },
    ...(init.body === undefined ? {} : { body: init.body }),
  })
}

async function versionOf(albumId: string): Promise<string | undefined> {
  return (await member.client.listAlbums()).albums.find((a) => a.album_id === albumId)?.protocol_version
}

async function expectConflict(promise: Promise<unknown>, code = 'error.upgrade.in_flight') {
  const problem = await problemOf(promise)
  expect([problem.status, problem.code]).toEqual([409, code])
  return problem
}

/** The phase a live ceremony answers. */
function live(albumId: string, intentId: string, to: string, startedAt: number, inFlight: number): UpgradePhase {
  return { album_id: albumId, intent_id: intentId, to_protocol_version: to, expires_at: iso(startedAt + windowMs), in_flight: inFlight }
}

describe('reading the phase', () => {
  it('in normal operation shows no intent fields and counts the album’s open upload sessions', async () => {
    const albumId = await album(member)
    expect(server.deps.config.upgradeWindowS).toBe(900)
    expect(await member.client.readUpgrade(albumId)).toEqual({ album_id: albumId, in_flight: 0 })
    const a = await openBundle(member, albumId)
    const b = await openBundle(member, albumId)
    await openBundle(member, await album(member)) // another album's session does not count
    expect(await member.client.readUpgrade(albumId)).toEqual({ album_id: albumId, in_flight: 2 })
    await member.client.abortUploadSession(a.uploadId)
    expect((await member.client.readUpgrade(albumId)).in_flight).toBe(1)
    await member.client.applyManifest(albumId, (await writeFor(member, b)).request)
    expect(await member.client.readUpgrade(albumId)).toEqual({ album_id: albumId, in_flight: 0 })
  })

  it('stops counting an upload session once it expires', async () => {
    const albumId = await album(member)
    await openBundle(member, albumId)
    server.clock.advance(server.deps.config.uploadSessionTtlS * 1000 - 1)
    expect((await member.client.readUpgrade(albumId)).in_flight).toBe(1)
    server.clock.advance(1)
    expect((await member.client.readUpgrade(albumId)).in_flight).toBe(0)
  })
})

describe('start', () => {
  it('opens the window: 200 with intent_id, to_protocol_version, expires_at = now + UPGRADE_WINDOW_S and in_flight', async () => {
    const albumId = await album(member)
    await openBundle(member, albumId)
    const intentId = randomUUID()
    const startedAt = server.clock.now()
    const phase = await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    expect(phase).toEqual(live(albumId, intentId, TARGET, startedAt, 1))
    expect(phase.expires_at).toBe(iso(startedAt + 900_000))
    server.clock.advance(1_000)
    expect(await member.client.readUpgrade(albumId)).toEqual(phase)
    // The album keeps its version until a commit.
    expect(await versionOf(albumId)).toBe(PROTOCOL_CURRENT)
  })

  it('is idempotent for the live intent_id whatever its other bytes: the window neither restarts nor changes target', async () => {
    const albumId = await album(member)
    const intentId = randomUUID()
    const startedAt = server.clock.now()
    const first = await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    server.clock.advance(60_000)
    // The same bytes, another target with an extra key, a target out of range: the intent_id decides.
    for (const body of [intent(intentId, TARGET), intent(intentId, '2026-10-01', { note: 'retry' }), intent(intentId, '2030-01-01')]) {
      expect(await member.client.startUpgrade(albumId, body)).toEqual(first)
    }
    expect(first).toEqual(live(albumId, intentId, TARGET, startedAt, 0))
  })

  it('refuses a different intent_id while one is live (409 in_flight) and leaves the live one as it was', async () => {
    const albumId = await album(member)
    const intentId = randomUUID()
    const first = await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    await expectConflict(member.client.startUpgrade(albumId, intent(randomUUID(), TARGET)))
    await expectConflict(member.client.startUpgrade(albumId, intent(randomUUID(), '2026-10-01')))
    expect(await member.client.readUpgrade(albumId)).toEqual(first)
  })

  it('accepts a target up to PROTOCOL_MAX and refuses one not later than the album’s version or after PROTOCOL_MAX (422)', async () => {
    const albumId = await album(member)
    for (const to of [PROTOCOL_CURRENT, '2026-05-31', '2025-01-01', '2026-11-02', '2030-01-01']) {
      const problem = await problemOf(member.client.startUpgrade(albumId, intent(randomUUID(), to)))
      expect([problem.status, problem.code], to).toEqual([422, 'error.request.invalid'])
      expect(await member.client.readUpgrade(albumId)).toEqual({ album_id: albumId, in_flight: 0 })
    }
    const intentId = randomUUID()
    expect((await member.client.startUpgrade(albumId, intent(intentId, PROTOCOL_MAX))).to_protocol_version).toBe(PROTOCOL_MAX)
    await member.client.commitUpgrade(albumId, intentId, tombstone(intentId))
    expect(await versionOf(albumId)).toBe(PROTOCOL_MAX)
    // Nothing is later than the album's version now.
    const problem = await problemOf(member.client.startUpgrade(albumId, intent(randomUUID(), PROTOCOL_MAX)))
    expect(problem.status).toBe(422)
  })

  /** A well-formed intent map whose third entry, `n`, holds `item` (the intent's other keys are opaque). */
  const intentHolding = (item: Uint8Array) =>
    Buffer.concat([Uint8Array.from([0xa3]), encode('intent_id'), encode('x'), encode('to_protocol_version'), encode(TARGET), encode('n'), item])

  it.each([
    ['bytes that are not CBOR', Uint8Array.from([0xff, 0xfe, 0x00])],
    ['truncated CBOR', encode({ intent_id: 'x', to_protocol_version: TARGET }).subarray(0, 10)],
    ['JSON text', new TextEncoder().encode(JSON.stringify({ intent_id: 'x', to_protocol_version: TARGET }))],
    ['an empty body', new Uint8Array()],
    ['a CBOR array', encode(['x', TARGET])],
    ['two CBOR items', Uint8Array.from([...encode({ intent_id: 'x', to_protocol_version: TARGET }), ...encode(1)])],
    ['no intent_id', encode({ to_protocol_version: TARGET })],
    ['an empty intent_id', encode({ intent_id: '', to_protocol_version: TARGET })],
    ['an integer intent_id', encode({ intent_id: 7, to_protocol_version: TARGET })],
    ['no to_protocol_version', encode({ intent_id: 'x' })],
    ['to_protocol_version 2026-9-1', encode({ intent_id: 'x', to_protocol_version: '2026-9-1' })],
    ['to_protocol_version 2026-02-30', encode({ intent_id: 'x', to_protocol_version: '2026-02-30' })],
    ['to_protocol_version as an integer', encode({ intent_id: 'x', to_protocol_version: 20260901 })],
    ['a 1 MiB - 1 KiB body of nested indefinite arrays', intentHolding(Buffer.alloc(1023 * 1024, 0x9f))],
    ['nesting past CBOR_MAX_DEPTH', intentHolding(Buffer.concat([Buffer.alloc(CBOR_MAX_DEPTH - 1, 0x81), Uint8Array.from([0x80])]))],
  ])('answers 400 for %s and starts nothing', async (_label, body) => {
    const albumId = await album(member)
    const answer = await upgradeRaw('POST', `/v1/albums/${albumId}/upgrade`, { body, contentType: 'application/cbor' })
    expect([answer.status, answer.json?.code], answer.text).toEqual([400, 'error.request.malformed'])
    expect(await member.client.readUpgrade(albumId)).toEqual({ album_id: albumId, in_flight: 0 })
  })

  it('keeps other keys of the intent opaque: any value, any nesting', async () => {
    const albumId = await album(member)
    const intentId = randomUUID()
    const body = intent(intentId, TARGET, { signature: new Uint8Array(64), proposer: { device: randomUUID(), weights: [1.5, -2] } })
    expect((await member.client.startUpgrade(albumId, body)).intent_id).toBe(intentId)
  })

  it.each([
    ['application/json', 'application/json'],
    ['application/octet-stream', 'application/octet-stream'],
    ['no Content-Type', undefined],
  ])('answers 415 for %s', async (_label, contentType) => {
    const albumId = await album(member)
    const answer = await upgradeRaw('POST', `/v1/albums/${albumId}/upgrade`, {
      body: intent(randomUUID(), TARGET),
      ...(contentType === undefined ? {} : { contentType }),
    })
    expect([answer.status, answer.json?.code]).toEqual([415, 'error.request.unsupported_media_type'])
    expect(await member.client.readUpgrade(albumId)).toEqual({ album_id: albumId, in_flight: 0 })
  })
})

describe('abort', () => {
  it('with the live intent_id goes back to normal (200)', async () => {
    const albumId = await album(member)
    await openBundle(member, albumId)
    const intentId = randomUUID()
    await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    expect(await member.client.abortUpgrade(albumId, intentId)).toEqual({ album_id: albumId, in_flight: 1 })
    expect(await member.client.readUpgrade(albumId)).toEqual({ album_id: albumId, in_flight: 1 })
    expect(await versionOf(albumId)).toBe(PROTOCOL_CURRENT)
    // Writes and new sessions are back.
    const bundle = await openBundle(member, albumId)
    expect((await member.client.applyManifest(albumId, (await writeFor(member, bundle)).request)).replayed).toBe(false)
  })

  it('with another intent_id answers 409 and leaves the ceremony live', async () => {
    const albumId = await album(member)
    const intentId = randomUUID()
    const phase = await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    await expectConflict(member.client.abortUpgrade(albumId, randomUUID()))
    expect(await member.client.readUpgrade(albumId)).toEqual(phase)
    await member.client.abortUpgrade(albumId, intentId)
  })

  it('with no live ceremony answers 409 (never started, already aborted)', async () => {
    const albumId = await album(member)
    await expectConflict(member.client.abortUpgrade(albumId, randomUUID()))
    const intentId = randomUUID()
    await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    await member.client.abortUpgrade(albumId, intentId)
    await expectConflict(member.client.abortUpgrade(albumId, intentId))
  })

  it('answers 400 without an intent_id query', async () => {
    const albumId = await album(member)
    const intentId = randomUUID()
    await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    for (const query of ['', '?intent_id=', `?intent=${intentId}`]) {
      const answer = await upgradeRaw('DELETE', `/v1/albums/${albumId}/upgrade${query}`)
      expect([answer.status, answer.json?.code], query).toEqual([400, 'error.request.malformed'])
    }
    expect((await member.client.readUpgrade(albumId)).intent_id).toBe(intentId)
  })
})

describe('the deadline', () => {
  it('aborts the ceremony when expires_at passes: normal phase, abort 409, a new start works', async () => {
    const albumId = await album(member)
    const intentId = randomUUID()
    const startedAt = server.clock.now()
    await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    server.clock.set(startedAt + windowMs - 1)
    expect((await member.client.readUpgrade(albumId)).intent_id).toBe(intentId)
    await expectConflict(member.client.startUpgrade(albumId, intent(randomUUID(), TARGET)))
    server.clock.set(startedAt + windowMs)
    expect(await member.client.readUpgrade(albumId)).toEqual({ album_id: albumId, in_flight: 0 })
    await expectConflict(member.client.abortUpgrade(albumId, intentId))
    await expectConflict(member.client.commitUpgrade(albumId, intentId, tombstone(intentId)))
    expect(await versionOf(albumId)).toBe(PROTOCOL_CURRENT)
    // Writes resume, and a new ceremony starts with a new window.
    const bundle = await openBundle(member, albumId)
    expect((await member.client.applyManifest(albumId, (await writeFor(member, bundle)).request)).replayed).toBe(false)
    const next = randomUUID()
    const restartedAt = server.clock.now()
    expect(await member.client.startUpgrade(albumId, intent(next, '2026-10-01'))).toEqual(live(albumId, next, '2026-10-01', restartedAt, 0))
  })
})

describe('during the window', () => {
  it('refuses lifecycle writes and new upload sessions (409 in_flight) while existing sessions still count', async () => {
    const albumId = await album(member)
    const open = await openBundle(member, albumId)
    const write = await writeFor(member, open)
    const intentId = randomUUID()
    const startedAt = server.clock.now()
    expect(await member.client.startUpgrade(albumId, intent(intentId, TARGET))).toEqual(live(albumId, intentId, TARGET, startedAt, 1))

    const before = await albumState(server, member, albumId)
    await expectConflict(member.client.applyManifest(albumId, write.request))
    await expectConflict(openBundle(member, albumId))
    expect(await albumState(server, member, albumId)).toEqual(before)
    expect((await member.client.readUpgrade(albumId)).in_flight).toBe(1)

    // Another album of the same account is not in a window.
    const elsewhere = await album(member)
    const other = await openBundle(member, elsewhere)
    expect((await member.client.applyManifest(elsewhere, (await writeFor(member, other)).request)).replayed).toBe(false)

    // After the abort the same write goes through with the session that waited.
    await member.client.abortUpgrade(albumId, intentId)
    expect((await member.client.applyManifest(albumId, write.request)).sync_seq).toBe(1)
  })
})

describe('commit', () => {
  it('with the live intent and nothing in flight pins the album to to_protocol_version and returns to normal', async () => {
    const albumId = await album(member)
    const before = await openBundle(member, albumId)
    await member.client.applyManifest(albumId, (await writeFor(member, before)).request)
    const intentId = randomUUID()
    await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    expect(await member.client.commitUpgrade(albumId, intentId, tombstone(intentId))).toEqual({ album_id: albumId, in_flight: 0 })
    expect(await member.client.readUpgrade(albumId)).toEqual({ album_id: albumId, in_flight: 0 })
    expect(await versionOf(albumId)).toBe(TARGET)
    // A repeat provision reports the pinned version too.
    expect(await member.client.provisionAlbum(albumId)).toEqual({ album_id: albumId, protocol_version: TARGET, created: false })

    // Writes below the new version get 426 naming it; writes at it go through.
    const bundle = await openBundle(member, albumId)
    const old = await problemOf(member.client.applyManifest(albumId, (await writeFor(member, bundle, { protocolVersion: PROTOCOL_CURRENT })).request))
    expect([old.status, old.problem.protocol_min, old.problem.protocol_max]).toEqual([426, TARGET, PROTOCOL_MAX])
    expect((await member.client.applyManifest(albumId, (await writeFor(member, bundle, { protocolVersion: TARGET })).request)).sync_seq).toBe(2)

    // The intent is spent: committing or aborting it again is refused.
    await expectConflict(member.client.commitUpgrade(albumId, intentId, tombstone(intentId)))
    await expectConflict(member.client.abortUpgrade(albumId, intentId))
  })

  // SPEC "Versioning" 4: the same intent never produces two forks, so a committed one is spent.
  it('never lets a committed intent_id open a second window', async () => {
    const albumId = await album(member)
    const intentId = randomUUID()
    await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    await member.client.commitUpgrade(albumId, intentId, tombstone(intentId))
    const again = await problemOf(member.client.startUpgrade(albumId, intent(intentId, '2026-10-01')))
    expect([again.status, again.code]).toEqual([409, 'error.upgrade.in_flight'])
    expect(await member.client.readUpgrade(albumId)).toEqual({ album_id: albumId, in_flight: 0 })
    expect(await versionOf(albumId)).toBe(TARGET)
  })

  it('while an upload session is open answers 409 not_quiescent and keeps the ceremony; it commits once the session is gone', async () => {
    const albumId = await album(member)
    const session = await openBundle(member, albumId)
    const intentId = randomUUID()
    const phase = await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    expect(phase.in_flight).toBe(1)
    await expectConflict(member.client.commitUpgrade(albumId, intentId, tombstone(intentId)), 'error.upgrade.not_quiescent')
    expect(await member.client.readUpgrade(albumId)).toEqual(phase)
    expect(await versionOf(albumId)).toBe(PROTOCOL_CURRENT)
    await member.client.abortUploadSession(session.uploadId)
    expect(await member.client.commitUpgrade(albumId, intentId, tombstone(intentId))).toEqual({ album_id: albumId, in_flight: 0 })
    expect(await versionOf(albumId)).toBe(TARGET)
  })

  it('with another intent, or with no live ceremony, answers 409 in_flight and changes nothing', async () => {
    const albumId = await album(member)
    await expectConflict(member.client.commitUpgrade(albumId, randomUUID(), tombstone('none')))
    const intentId = randomUUID()
    const phase = await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    await expectConflict(member.client.commitUpgrade(albumId, randomUUID(), tombstone(intentId)))
    expect(await member.client.readUpgrade(albumId)).toEqual(phase)
    expect(await versionOf(albumId)).toBe(PROTOCOL_CURRENT)
  })

  it('answers 409 in_flight (not not_quiescent) for a wrong intent while a session is open', async () => {
    const albumId = await album(member)
    await openBundle(member, albumId)
    await member.client.startUpgrade(albumId, intent(randomUUID(), TARGET))
    await expectConflict(member.client.commitUpgrade(albumId, randomUUID(), tombstone('x')))
  })

  it('answers 400 without an intent_id query and 415 without a CBOR body', async () => {
    const albumId = await album(member)
    const intentId = randomUUID()
    await member.client.startUpgrade(albumId, intent(intentId, TARGET))
    for (const query of ['', '?intent_id=']) {
      const answer = await upgradeRaw('POST', `/v1/albums/${albumId}/upgrade/commit${query}`, { body: tombstone(intentId), contentType: 'application/cbor' })
      expect([answer.status, answer.json?.code], query).toEqual([400, 'error.request.malformed'])
    }
    const json = await upgradeRaw('POST', `/v1/albums/${albumId}/upgrade/commit?intent_id=${intentId}`, { body: '{}', contentType: 'application/json' })
    expect([json.status, json.json?.code]).toEqual([415, 'error.request.unsupported_media_type'])
    expect(await versionOf(albumId)).toBe(PROTOCOL_CURRENT)
    expect((await member.client.readUpgrade(albumId)).intent_id).toBe(intentId)
  })
})

describe('albums that are not the caller’s', () => {
  it('answer 404 on read, start, abort and commit, exactly as an unknown album, and leave the owner’s ceremony alone', async () => {
    const owner = await uploader(server, 'owner')
    const theirs = await album(owner)
    const intentId = randomUUID()
    const phase = await owner.client.startUpgrade(theirs, intent(intentId, TARGET))
    for (const albumId of [theirs, randomUUID()]) {
      const answers = [
        await upgradeRaw('GET', `/v1/albums/${albumId}/upgrade`),
        await upgradeRaw('POST', `/v1/albums/${albumId}/upgrade`, { body: intent(randomUUID(), TARGET), contentType: 'application/cbor' }),
        // The owner's own intent, and a malformed one: ownership is checked first.
        await upgradeRaw('POST', `/v1/albums/${albumId}/upgrade`, { body: Uint8Array.from([0xff]), contentType: 'application/cbor' }),
        await upgradeRaw('DELETE', `/v1/albums/${albumId}/upgrade?intent_id=${intentId}`),
        await upgradeRaw('POST', `/v1/albums/${albumId}/upgrade/commit?intent_id=${intentId}`, { body: tombstone(intentId), contentType: 'application/cbor' }),
      ]
      expect(answers.map((a) => [a.status, a.json?.code])).toEqual(answers.map(() => [404, 'error.not_found']))
    }
    expect(await owner.client.readUpgrade(theirs)).toEqual(phase)
  })

  it('answer 400 for an album id that is not a canonical UUID', async () => {
    for (const albumId of ['not-a-uuid', randomUUID().toUpperCase()]) {
      const answers = [
        await upgradeRaw('GET', `/v1/albums/${albumId}/upgrade`),
        await upgradeRaw('POST', `/v1/albums/${albumId}/upgrade`, { body: intent(randomUUID(), TARGET), contentType: 'application/cbor' }),
        await upgradeRaw('DELETE', `/v1/albums/${albumId}/upgrade?intent_id=x`),
        await upgradeRaw('POST', `/v1/albums/${albumId}/upgrade/commit?intent_id=x`, { body: tombstone('x'), contentType: 'application/cbor' }),
      ]
      expect(answers.map((a) => [a.status, a.json?.code])).toEqual(answers.map(() => [400, 'error.request.malformed']))
    }
  })
})
