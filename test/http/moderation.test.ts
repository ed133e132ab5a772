// Operators moderate through the ADMIN_TOKEN API only (absent without it): every action lands as an
// event in the affected account's record, oldest first, a repeat is a 409 that writes nothing, a
// suspended account can sign in and read but every content write is refused 403 until it is
// reinstated, a takedown withholds the asset's blobs (451, not retrievable) until it is restored, a
// legal hold keeps every blob of the asset from garbage collection until it is lifted, and every
// action that takes effect is one audit line in the server's log, with its request's id.
import { encode } from 'cborg'
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collectGarbage } from '../../src/features/maintenance/gc.service.ts'
import { operatorLog } from '../../src/features/moderation/moderation.service.ts'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import { CofferProblem, sha256Hex, type ModerationRecord } from '../../src/sdk/client.ts'
import { PASSWORD, raw, problemOf, registered, withSecondFactor } from '../support/actors.ts'
import { album, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { bearer, intent, openBundle, tombstone, writeFor, type Bundle, type Write } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { isKept } from '../support/blobs.ts'

const ADMIN_TOKEN = randomBytes(32).toString('base64url')

let server: TestServer
beforeAll(async () => {
  server = await startServer({ ADMIN_TOKEN })
})
afterAll(() => server.close())

const iso = (ms: number) => new Date(ms).toISOString()

type AdminPath =
  | `accounts/${string}/${'suspend' | 'reinstate' | 'reset-second-factor'}`
  | `assets/${string}/${'take-down' | 'restore' | 'legal-hold' | 'lift-hold'}`

interface AdminCall {
  /** Raw body text; absent sends no body at all. */
  readonly body?: string
  readonly contentType?: string
  /** Defaults to ADMIN_TOKEN; null sends no Authorization header. */
  readonly token?: string | null
  readonly on?: TestServer
}

function adminRaw(path: AdminPath | string, call: AdminCall = {}) {
  const token = call.token === undefined ? ADMIN_TOKEN : call.token
  const headers: Record<string, string> = {
    ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    ...(call.contentType === undefined ? {} : { 'content-type': call.contentType }),
  }
  return raw(call.on ?? server, 'POST', `/v1/admin/${path}`, { headers, ...(call.body === undefined ? {} : { body: call.body }) })
}

const ADMIN_ACTIONS = {
  suspend: 'suspend',
  reinstate: 'reinstate',
  'reset-second-factor': 'resetSecondFactor',
  'take-down': 'takeDown',
  restore: 'restore',
  'legal-hold': 'legalHold',
  'lift-hold': 'liftHold',
} as const

/** An operator action expected to succeed, through the SDK's operator client: the affected account's record. */
function act(path: AdminPath, reason?: string): Promise<ModerationRecord> {
  const [, id, verb] = path.split('/') as [string, string, keyof typeof ADMIN_ACTIONS]
  return new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN })[ADMIN_ACTIONS[verb]](id, reason)
}

async function expectProblem(answer: ReturnType<typeof raw>, status: number, code: string) {
  const settled = await answer
  expect(settled.status, settled.text).toBe(status)
  expect(settled.json?.code).toBe(code)
  return settled
}

interface Asset {
  readonly assetId: string
  readonly albumId: string
  readonly bundle: Bundle
  readonly write: Write
  /** Every blob of the bundle with its bytes. */
  readonly blobs: Map<string, Buffer>
}

async function apply(member: Uploader, albumId: string, previous?: Asset): Promise<Asset> {
  const bundle = await openBundle(member, albumId)
  const write = await writeFor(
    member,
    bundle,
    previous === undefined
      ? {}
      : {
          fileId: previous.assetId,
          action: 'replace',
          prior: previous.write.manifestHash,
          originalBlobHash: previous.bundle.hashes.ciphertextHash,
        },
  )
  const result = await member.client.applyManifest(albumId, write.request)
  expect(result.replayed).toBe(false)
  const blobs = new Map<string, Buffer>([
    [bundle.hashes.ciphertextHash, bundle.original],
    ...bundle.derivatives.map((bytes) => [sha256Hex(bytes), bytes] as const),
    ...(bundle.metadata === null ? [] : [[sha256Hex(bundle.metadata), bundle.metadata] as const]),
    [write.manifestHash, write.manifest],
  ])
  return { assetId: result.asset_id, albumId, bundle, write, blobs }
}

async function statusOf(promise: Promise<unknown>): Promise<number | string> {
  try {
    await promise
    return 200
  } catch (error) {
    if (error instanceof CofferProblem) return `${error.status} ${error.code}`
    throw error
  }
}

describe('the own moderation record', () => {
  it('is active with no events for a new account, and needs a bearer token', async () => {
    const member = await uploader(server, 'fresh')
    expect(await member.client.moderationRecord()).toEqual({ standing: 'active', events: [] })
    const anonymous = await raw(server, 'GET', '/v1/moderation/record')
    expect(anonymous.status).toBe(401)
    expect(anonymous.json?.code).toBe('error.auth.unauthenticated')
  })
})

describe('the operator API', () => {
  it('records each action as an event of the affected account, oldest first, and answers that record', async () => {
    const member = await uploader(server, 'moderated')
    const bystander = await uploader(server, 'bystander')
    const albumId = await album(member)
    const asset = await apply(member, albumId)
    // The bystander has a record of its own, which the member's answers never show.
    await act(`accounts/${bystander.userId}/suspend`, 'unrelated')

    const t1 = server.clock.now() + 1_000
    server.clock.set(t1)
    const suspended = await act(`accounts/${member.userId}/suspend`, 'spam')
    expect(suspended).toEqual({ standing: 'suspended', suspended_since: iso(t1), events: [{ action: 'suspended', at: iso(t1), reason: 'spam' }] })
    expect(await member.client.moderationRecord()).toEqual(suspended)

    const t2 = t1 + 60_000
    server.clock.set(t2)
    const reinstated = await act(`accounts/${member.userId}/reinstate`)
    // The reinstatement does not remove the suspension it lifted; no reason given: none stated.
    expect(reinstated).toEqual({
      standing: 'active',
      events: [
        { action: 'suspended', at: iso(t1), reason: 'spam' },
        { action: 'reinstated', at: iso(t2) },
      ],
    })

    const t3 = t2 + 60_000
    server.clock.set(t3)
    const held = await act(`assets/${asset.assetId}/legal-hold`, 'court order 42')
    // Two actions in the same instant keep the order they were taken in.
    const takenDown = await act(`assets/${asset.assetId}/take-down`, 'DMCA')
    server.clock.set(t3 + 1)
    const lifted = await act(`assets/${asset.assetId}/lift-hold`)
    expect(held.events.at(-1)).toEqual({ action: 'legal_hold', asset_id: asset.assetId, at: iso(t3), reason: 'court order 42' })
    expect(takenDown.events.at(-1)).toEqual({ action: 'taken_down', asset_id: asset.assetId, at: iso(t3), reason: 'DMCA' })
    expect(lifted).toEqual({
      standing: 'active',
      events: [
        { action: 'suspended', at: iso(t1), reason: 'spam' },
        { action: 'reinstated', at: iso(t2) },
        { action: 'legal_hold', asset_id: asset.assetId, at: iso(t3), reason: 'court order 42' },
        { action: 'taken_down', asset_id: asset.assetId, at: iso(t3), reason: 'DMCA' },
        { action: 'hold_lifted', asset_id: asset.assetId, at: iso(t3 + 1) },
      ],
    })
    expect(await member.client.moderationRecord()).toEqual(lifted)

    // A second suspension starts a new suspended_since; the history keeps all of it.
    const t4 = t3 + 60_000
    server.clock.set(t4)
    const again = await act(`accounts/${member.userId}/suspend`)
    expect(again.standing).toBe('suspended')
    expect(again.suspended_since).toBe(iso(t4))
    expect(again.events.map((e) => e.action)).toEqual(['suspended', 'reinstated', 'legal_hold', 'taken_down', 'hold_lifted', 'suspended'])
    expect(again.events.at(-1)).toEqual({ action: 'suspended', at: iso(t4) })
    expect((await bystander.client.moderationRecord()).events).toEqual([{ action: 'suspended', at: expect.any(String), reason: 'unrelated' }])
    server.clock.set(Date.now())
  })

  it('takes the body as optional: none, empty, {}, a reason, or unknown keys beside it (ignored)', async () => {
    const member = await uploader(server, 'bodies')
    const path = (verb: 'suspend' | 'reinstate') => `accounts/${member.userId}/${verb}` as const
    const variants: Array<[string, AdminCall, string | undefined]> = [
      ['no body, no content type', {}, undefined],
      ['an empty body with a JSON content type', { body: '', contentType: 'application/json' }, undefined],
      ['an empty object', { body: '{}', contentType: 'application/json' }, undefined],
      ['a reason', { body: JSON.stringify({ reason: 'because' }), contentType: 'application/json; charset=utf-8' }, 'because'],
      ['a reason and an unknown key', { body: JSON.stringify({ reason: 'noted', ticket: 77 }), contentType: 'application/json' }, 'noted'],
      ['only an unknown key', { body: JSON.stringify({ ticket: 78 }), contentType: 'application/json' }, undefined],
      ['an empty reason', { body: JSON.stringify({ reason: '' }), contentType: 'application/json' }, ''],
    ]
    let count = 0
    for (const [name, call, reason] of variants) {
      const verb = count % 2 === 0 ? 'suspend' : 'reinstate'
      const answer = await adminRaw(path(verb), call)
      expect(answer.status, `${name}: ${answer.text}`).toBe(200)
      count += 1
      const last = (answer.json as unknown as ModerationRecord).events.at(-1)!
      expect(last.action, name).toBe(verb === 'suspend' ? 'suspended' : 'reinstated')
      if (reason === undefined) expect(last, name).not.toHaveProperty('reason')
      else expect(last.reason, name).toBe(reason)
    }
    expect((await member.client.moderationRecord()).events).toHaveLength(variants.length)
  })

  it('refuses a body that is not a reason object (422), malformed JSON (400) or another media type (415), writing nothing', async () => {
    const member = await uploader(server, 'bad-bodies')
    const path = `accounts/${member.userId}/suspend` as const
    for (const body of [{ reason: 5 }, { reason: null }, { reason: ['x'] }, { reason: 'x'.repeat(2001) }, [], 'text', 7, null]) {
      await expectProblem(adminRaw(path, { body: JSON.stringify(body), contentType: 'application/json' }), 422, 'error.request.invalid')
    }
    await expectProblem(adminRaw(path, { body: '{"reason":', contentType: 'application/json' }), 400, 'error.request.malformed')
    await expectProblem(adminRaw(path, { body: 'reason=x', contentType: 'application/x-www-form-urlencoded' }), 415, 'error.request.unsupported_media_type')
    expect(await member.client.moderationRecord()).toEqual({ standing: 'active', events: [] })
    // The longest reason allowed is kept whole.
    const long = 'y'.repeat(2000)
    expect((await act(path, long)).events).toEqual([{ action: 'suspended', at: expect.any(String), reason: long }])
  })

  it('answers 409 state_conflict for an action that would change nothing, and writes nothing', async () => {
    const member = await uploader(server, 'conflicts')
    const asset = await apply(member, await album(member))
    const account = `accounts/${member.userId}` as const
    const target = `assets/${asset.assetId}` as const
    await expectProblem(adminRaw(`${account}/reinstate`), 409, 'error.moderation.state_conflict')
    await expectProblem(adminRaw(`${target}/lift-hold`), 409, 'error.moderation.state_conflict')
    await expectProblem(adminRaw(`${target}/restore`), 409, 'error.moderation.state_conflict')
    // The SDK's operator client answers refusals as CofferProblem.
    const refused = await problemOf(new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN }).reinstate(member.userId))
    expect([refused.status, refused.code]).toEqual([409, 'error.moderation.state_conflict'])
    const wrongToken = await problemOf(new CofferAdmin({ baseUrl: server.url, adminToken: 'not the token' }).suspend(member.userId))
    expect([wrongToken.status, wrongToken.code]).toEqual([401, 'error.auth.unauthenticated'])
    await act(`${account}/suspend`)
    await act(`${target}/take-down`)
    await act(`${target}/legal-hold`)
    const before = await member.client.moderationRecord()
    for (const path of [`${account}/suspend`, `${target}/take-down`, `${target}/legal-hold`] as const) {
      const answer = await expectProblem(
        adminRaw(path, { body: JSON.stringify({ reason: 'again' }), contentType: 'application/json' }),
        409,
        'error.moderation.state_conflict',
      )
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    }
    expect(await member.client.moderationRecord()).toEqual(before)
    // Undone, the same actions apply again.
    await act(`${account}/reinstate`)
    await act(`${target}/lift-hold`)
    await expectProblem(adminRaw(`${target}/lift-hold`), 409, 'error.moderation.state_conflict')
    await act(`${target}/legal-hold`)
    await act(`${account}/suspend`)
  })

  it('applies one of several identical actions sent at once; the others are 409', async () => {
    const member = await uploader(server, 'racing-operators')
    const asset = await apply(member, await album(member))
    for (const path of [`accounts/${member.userId}/suspend`, `assets/${asset.assetId}/take-down`, `assets/${asset.assetId}/legal-hold`] as const) {
      const answers = await Promise.all(Array.from({ length: 6 }, () => adminRaw(path)))
      expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text).join('\n')).toEqual([200, 409, 409, 409, 409, 409])
    }
    expect((await member.client.moderationRecord()).events.map((e) => e.action)).toEqual(['suspended', 'taken_down', 'legal_hold'])
  })

  it('answers 404 for an unknown account or asset, 400 for an id that is not a UUID', async () => {
    for (const verb of ['suspend', 'reinstate', 'reset-second-factor'] as const) {
      await expectProblem(adminRaw(`accounts/${randomUUID()}/${verb}`), 404, 'error.not_found')
      await expectProblem(adminRaw(`accounts/not-a-user/${verb}`), 400, 'error.request.malformed')
    }
    for (const verb of ['take-down', 'restore', 'legal-hold', 'lift-hold'] as const) {
      await expectProblem(adminRaw(`assets/${randomUUID()}/${verb}`), 404, 'error.not_found')
      await expectProblem(adminRaw(`assets/NOT-AN-ASSET/${verb}`), 400, 'error.request.malformed')
    }
  })

  it('needs the admin token exactly: none, a wrong one or a user’s access token is 401, and the admin token is no user token', async () => {
    const member = await uploader(server, 'credentials')
    const path = `accounts/${member.userId}/suspend` as const
    for (const token of [null, 'wrong', `${ADMIN_TOKEN}x`, ADMIN_TOKEN.slice(0, -1), member.client.tokens!.access_token]) {
      const answer = await expectProblem(adminRaw(path, { token }), 401, 'error.auth.unauthenticated')
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer realm="coffer"/)
    }
    const basic = await raw(server, 'POST', `/v1/admin/${path}`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
    })
    expect(basic.status).toBe(401)
    expect(await member.client.moderationRecord()).toEqual({ standing: 'active', events: [] })
    const asUser = await raw(server, 'GET', '/v1/profile', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    expect(asUser.status).toBe(401)
  })
})

describe('without ADMIN_TOKEN', () => {
  let bare: TestServer
  beforeAll(async () => {
    bare = await startServer()
  })
  afterAll(() => bare.close())

  it('every /v1/admin path answers 404, whatever credential comes with it; the own record still works', async () => {
    const member = await uploader(bare, 'no-admin')
    const asset = randomUUID()
    const paths = [
      `accounts/${member.userId}/suspend`,
      `accounts/${member.userId}/reinstate`,
      `accounts/${member.userId}/reset-second-factor`,
      `assets/${asset}/take-down`,
      `assets/${asset}/restore`,
      `assets/${asset}/legal-hold`,
      `assets/${asset}/lift-hold`,
    ]
    for (const path of paths) {
      for (const token of [null, ADMIN_TOKEN, member.client.tokens!.access_token]) {
        const answer = await adminRaw(path, { on: bare, token, body: JSON.stringify({ reason: 'x' }), contentType: 'application/json' })
        expect(answer.status, `${path} ${answer.text}`).toBe(404)
        expect(answer.json?.code).toBe('error.not_found')
      }
    }
    expect(await member.client.moderationRecord()).toEqual({ standing: 'active', events: [] })
  })
})

describe('a suspended account', () => {
  let member: Uploader
  let live: Asset
  let pending: { bundle: Bundle; write: Write }
  let unsent: Bundle
  let abandoned: Bundle
  let ceremony: { albumId: string; intentId: string }
  let spare: string
  const escrow = randomBytes(64)

  beforeAll(async () => {
    member = await uploader(server, 'suspended')
    const albumId = await album(member)
    live = await apply(member, albumId)
    // Ready before the suspension: a complete bundle to apply, a session still awaiting its bytes,
    // a live upgrade ceremony on a quiet album, a spare album, an escrow.
    const ready = await openBundle(member, albumId)
    pending = { bundle: ready, write: await writeFor(member, ready) }
    unsent = await openBundle(member, albumId, { send: 'none' })
    abandoned = await openBundle(member, await album(member), { send: 'none' })
    ceremony = { albumId: await album(member), intentId: randomUUID() }
    await member.client.startUpgrade(ceremony.albumId, intent(ceremony.intentId, '2026-09-01'))
    spare = await album(member)
    await member.client.storeEscrow(escrow)
    await act(`accounts/${member.userId}/suspend`, 'abuse')
  })

  /** What the refused writes would have changed. */
  async function contentState() {
    return {
      albums: await member.client.listAlbums(),
      feed: await member.client.feed(live.albumId),
      unsent: await member.client.uploadSessionStatus(unsent.uploadId),
      pending: await member.client.uploadSessionStatus(pending.bundle.uploadId),
      ceremony: await member.client.readUpgrade(ceremony.albumId),
      spare: await member.client.readUpgrade(spare),
      directory: (await member.client.fetchDirectory(member.userId))!.bytes,
      escrow: Buffer.from(await member.client.fetchEscrow()),
    }
  }

  it('can still sign in, refresh and read everything of its own', async () => {
    const again = server.client()
    const login = await again.login(member.email, PASSWORD)
    expect(login.kind).toBe('session')
    await again.refresh()
    expect((await again.getProfile()).user_id).toBe(member.userId)
    expect((await again.listSessions()).sessions.length).toBeGreaterThanOrEqual(2)
    const record = await again.moderationRecord()
    expect(record).toMatchObject({ standing: 'suspended', suspended_since: expect.any(String), events: [{ action: 'suspended', reason: 'abuse' }] })
    expect(record.suspended_since).toBe(record.events[0]!.at)
    expect((await again.listAlbums()).albums.map((a) => a.album_id)).toContain(live.albumId)
    expect((await again.feed(live.albumId)).entries.map((e) => e.asset_id)).toEqual([live.assetId])
    for (const [hash, bytes] of live.blobs) expect(Buffer.from(await again.downloadBlob(hash))).toEqual(bytes)
    expect((await again.assetReceipts(live.assetId)).receipts).toHaveLength(live.blobs.size)
    expect((await again.verifyStorage({ assets: [{ asset_id: live.assetId, blob_hashes: [...live.blobs.keys()] }], deep: true })).verdicts[0]!.durable).toBe(
      true,
    )
    expect((await again.readUpgrade(ceremony.albumId)).intent_id).toBe(ceremony.intentId)
    expect(Buffer.from(await again.fetchEscrow())).toEqual(escrow)
    expect(await again.fetchDirectory(member.userId)).not.toBeNull()
    expect((await again.uploadSessionStatus(unsent.uploadId)).upload_id).toBe(unsent.uploadId)
  })

  it('is refused every content write with 403 error.account.suspended, which changes nothing', async () => {
    const before = await contentState()
    const fresh = randomUUID()
    const refused = {
      'provision album': () => member.client.provisionAlbum(fresh),
      'lifecycle write': () => member.client.applyManifest(live.albumId, pending.write.request),
      'open upload session': () =>
        member.client.openUploadSession({
          album_id: spare,
          crypto_suite_id: 1,
          ciphertext_hash: sha256Hex(Buffer.of(1)),
          blobs: [{ role: 'original', hash: sha256Hex(Buffer.of(1)), size: 1 }],
        }),
      'blob bytes': () => member.client.putBlob(unsent.uploadId, unsent.hashes.ciphertextHash, unsent.original),
      'start upgrade': () => member.client.startUpgrade(spare, intent(randomUUID(), '2026-09-01')),
      'abort upgrade': () => member.client.abortUpgrade(ceremony.albumId, ceremony.intentId),
      'commit upgrade': () => member.client.commitUpgrade(ceremony.albumId, ceremony.intentId, tombstone(ceremony.intentId)),
      'publish directory': () => member.client.publishDirectory(encode({ directory_version: 2 }), member.identity),
      'store escrow': () => member.client.storeEscrow(randomBytes(32)),
    }
    const outcomes: Record<string, number | string> = {}
    for (const [name, send] of Object.entries(refused)) outcomes[name] = await statusOf(send())
    expect(outcomes).toEqual(Object.fromEntries(Object.keys(refused).map((name) => [name, '403 error.account.suspended'])))
    // The problem is a proper CodedProblem.
    const problem = await problemOf(member.client.provisionAlbum(fresh))
    expect(problem.problem).toMatchObject({ status: 403, code: 'error.account.suspended', type: expect.any(String), title: expect.any(String) })
    expect(await contentState()).toEqual(before)
    expect((await member.client.listAlbums()).albums.map((a) => a.album_id)).not.toContain(fresh)
  })

  it('may still abort its own upload session: that adds no content and lets its album go quiet', async () => {
    expect((await member.client.readUpgrade(abandoned.albumId)).in_flight).toBe(1)
    await member.client.abortUploadSession(abandoned.uploadId)
    expect((await member.client.readUpgrade(abandoned.albumId)).in_flight).toBe(0)
  })

  it('is lifted by a reinstatement, which keeps the suspension in the record: the same writes then succeed', async () => {
    const record = await act(`accounts/${member.userId}/reinstate`, 'appeal granted')
    expect(record.standing).toBe('active')
    expect(record).not.toHaveProperty('suspended_since')
    expect(record.events.map((e) => [e.action, e.reason])).toEqual([
      ['suspended', 'abuse'],
      ['reinstated', 'appeal granted'],
    ])
    expect(await member.client.moderationRecord()).toEqual(record)

    expect((await member.client.provisionAlbum(randomUUID())).created).toBe(true)
    expect((await member.client.applyManifest(live.albumId, pending.write.request)).replayed).toBe(false)
    await member.client.putBlob(unsent.uploadId, unsent.hashes.ciphertextHash, unsent.original)
    expect((await member.client.uploadSessionStatus(unsent.uploadId)).blobs.find((b) => b.hash === unsent.hashes.ciphertextHash)?.present).toBe(true)
    const opened = await member.client.openUploadSession({
      album_id: spare,
      crypto_suite_id: 1,
      ciphertext_hash: sha256Hex(Buffer.of(1)),
      blobs: [{ role: 'original', hash: sha256Hex(Buffer.of(1)), size: 1 }],
    })
    await member.client.abortUploadSession(opened.upload_id)
    expect((await member.client.commitUpgrade(ceremony.albumId, ceremony.intentId, tombstone(ceremony.intentId))).intent_id).toBeUndefined()
    const next = randomUUID()
    expect((await member.client.startUpgrade(spare, intent(next, '2026-09-01'))).intent_id).toBe(next)
    expect((await member.client.abortUpgrade(spare, next)).intent_id).toBeUndefined()
    expect(await member.client.publishDirectory(encode({ directory_version: 2 }), member.identity)).toBe(2)
    expect((await member.client.storeEscrow(randomBytes(32))).replaced).toBe(true)
  })
})

describe('a takedown', () => {
  it('withholds every blob of the asset (451) and makes it not retrievable nor durable; other assets and accounts are untouched', async () => {
    const member = await uploader(server, 'takedown')
    const other = await uploader(server, 'same-bytes')
    const albumId = await album(member)
    const target = await apply(member, albumId)
    const neighbour = await apply(member, albumId)
    // Another account holds the very same original bytes in an asset of its own.
    const otherAlbum = await album(other)
    const theirs = await other.client.uploadAsset({
      albumId: otherAlbum,
      cryptoSuiteId: 1,
      original: target.bundle.original,
      sign: (hashes) => signedManifest(other, hashes, { albumId: otherAlbum }),
    })
    const hashes = [...target.blobs.keys()]
    const verify = () => member.client.verifyStorage({ assets: [{ asset_id: target.assetId, blob_hashes: hashes }] })
    expect((await verify()).verdicts[0]!.durable).toBe(true)

    const record = await act(`assets/${target.assetId}/take-down`, 'illegal content')
    expect(record.events).toEqual([{ action: 'taken_down', asset_id: target.assetId, at: expect.any(String), reason: 'illegal content' }])
    expect(record.standing).toBe('active')

    for (const hash of hashes) {
      const answer = await raw(server, 'GET', `/v1/blobs/${hash}`, { headers: bearer(member) })
      expect(answer.status, hash).toBe(451)
      expect(answer.json?.code).toBe('error.moderation.taken_down')
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/)
      // A range request is withheld too.
      const ranged = await raw(server, 'GET', `/v1/blobs/${hash}`, { headers: { ...bearer(member), range: 'bytes=0-0' } })
      expect(ranged.status).toBe(451)
    }
    const verdict = (await verify()).verdicts[0]!
    expect(verdict.durable).toBe(false)
    expect(verdict.blobs).toEqual(
      hashes.map((hash, i) => ({
        hash,
        role: ['original', 'derivative', 'metadata', 'provenance'][i],
        stored: true,
        indexed: true,
        retrievable: false,
      })),
    )
    // The owner still reads the rest: the feed, the receipts, the neighbour's bytes.
    expect((await member.client.feed(albumId)).entries.map((e) => e.asset_id)).toEqual([target.assetId, neighbour.assetId])
    expect((await member.client.assetReceipts(target.assetId)).receipts).toHaveLength(hashes.length)
    for (const [hash, bytes] of neighbour.blobs) expect(Buffer.from(await member.client.downloadBlob(hash))).toEqual(bytes)
    expect(
      (await member.client.verifyStorage({ assets: [{ asset_id: neighbour.assetId, blob_hashes: [...neighbour.blobs.keys()] }] })).verdicts[0]!.durable,
    ).toBe(true)
    // The other account's asset with the same bytes is not taken down.
    expect(Buffer.from(await other.client.downloadBlob(target.bundle.hashes.ciphertextHash))).toEqual(target.bundle.original)
    expect(
      (await other.client.verifyStorage({ assets: [{ asset_id: theirs.asset_id, blob_hashes: [target.bundle.hashes.ciphertextHash] }] })).verdicts[0]!.durable,
    ).toBe(true)
  })

  it('is undone by a restore, recorded as its own event: every blob is served again and the asset is durable again', async () => {
    const member = await uploader(server, 'restored')
    const target = await apply(member, await album(member))
    const hashes = [...target.blobs.keys()]
    await act(`assets/${target.assetId}/take-down`, 'mistaken complaint')
    expect((await raw(server, 'GET', `/v1/blobs/${hashes[0]}`, { headers: bearer(member) })).status).toBe(451)

    const record = await act(`assets/${target.assetId}/restore`, 'complaint withdrawn')
    // The takedown stays in the record; the restore follows it.
    expect(record.events).toEqual([
      { action: 'taken_down', asset_id: target.assetId, at: expect.any(String), reason: 'mistaken complaint' },
      { action: 'restored', asset_id: target.assetId, at: expect.any(String), reason: 'complaint withdrawn' },
    ])
    expect(await member.client.moderationRecord()).toEqual(record)
    for (const [hash, bytes] of target.blobs) expect(Buffer.from(await member.client.downloadBlob(hash)), hash).toEqual(bytes)
    expect((await member.client.verifyStorage({ assets: [{ asset_id: target.assetId, blob_hashes: hashes }] })).verdicts[0]!.durable).toBe(true)
    // Restored, it can be taken down again, and restored again.
    await act(`assets/${target.assetId}/take-down`)
    expect((await raw(server, 'GET', `/v1/blobs/${hashes[0]}`, { headers: bearer(member) })).status).toBe(451)
    expect((await act(`assets/${target.assetId}/restore`)).events.map((e) => e.action)).toEqual(['taken_down', 'restored', 'taken_down', 'restored'])
  })
})

describe('a second-factor reset', () => {
  it('removes the TOTP and ends every session at once; the password alone then signs in; recorded, and 409 when there is nothing to reset', async () => {
    const owner = await withSecondFactor(server, 'lost-phone')
    const { user_id: userId } = await owner.client.getProfile()
    const laptop = server.client()
    const challenge = await laptop.login(owner.email, PASSWORD)
    if (challenge.kind !== 'second_factor') throw new Error('the second factor was not asked for')
    await laptop.verifyLogin(challenge.challenge.mfa_token, owner.authenticator.codeAt(server.clock.now() + 30_000))
    const bystander = await registered(server, 'unaffected')
    expect((await new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN }).account(userId)).second_factor).toEqual({
      enabled: true,
      recovery_codes_remaining: 10,
    })

    const record = await act(`accounts/${userId}/reset-second-factor`, 'identity checked by support')
    expect(record).toEqual({ standing: 'active', events: [{ action: 'second_factor_reset', at: expect.any(String), reason: 'identity checked by support' }] })
    // Every session of the account ended, whoever held it; another account's did not.
    for (const client of [owner.client, laptop]) {
      const refreshToken = client.tokens!.refresh_token
      expect((await problemOf(client.getProfile())).status).toBe(401)
      expect(
        (
          await raw(server, 'POST', '/v1/auth/refresh', {
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ refresh_token: refreshToken }),
          })
        ).status,
      ).toBe(401)
    }
    expect((await bystander.client.getProfile()).email).toBe(bystander.email)
    // The password alone opens a session now, and the account shows no second factor.
    const fresh = server.client()
    expect((await fresh.login(owner.email, PASSWORD)).kind).toBe('session')
    // Its recovery codes went with it.
    expect((await new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN }).account(userId)).second_factor).toEqual({
      enabled: false,
      recovery_codes_remaining: 0,
    })
    expect(await fresh.secondFactorStatus()).toEqual({ status: 'none', recovery_codes_remaining: 0 })
    expect((await fresh.moderationRecord()).events.map((event) => event.action)).toEqual(['second_factor_reset'])
    // Nothing left to reset: 409, no event; a new second factor can be set up and reset again.
    await expectProblem(adminRaw(`accounts/${userId}/reset-second-factor`), 409, 'error.moderation.state_conflict')
    await expectProblem(adminRaw(`accounts/${(await bystander.client.getProfile()).user_id}/reset-second-factor`), 409, 'error.moderation.state_conflict')
    await fresh.startTotpEnrollment()
    // A pending enrollment is no second factor yet.
    await expectProblem(adminRaw(`accounts/${userId}/reset-second-factor`), 409, 'error.moderation.state_conflict')
    expect((await fresh.moderationRecord()).events).toHaveLength(1)
  })
})

describe('the audit line', () => {
  const auditLines = () => server.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.audit === 'operator_action')

  it('is written once per action that took effect (who, what, on which account or asset, why), and never for a refused one', async () => {
    const member = await uploader(server, 'audited')
    const asset = await apply(member, await album(member))
    const before = auditLines().length
    await act(`accounts/${member.userId}/suspend`, 'spam')
    await act(`assets/${asset.assetId}/take-down`)
    await expectProblem(adminRaw(`assets/${asset.assetId}/take-down`), 409, 'error.moderation.state_conflict')
    await expectProblem(adminRaw(`assets/${randomUUID()}/restore`), 404, 'error.not_found')
    const lines = auditLines().slice(before)
    expect(lines.map(({ actor, action, userId, assetId, reason, level, msg }) => ({ actor, action, userId, assetId, reason, level, msg }))).toEqual([
      { actor: 'admin_token', action: 'suspended', userId: member.userId, assetId: null, reason: 'spam', level: 30, msg: 'operator action' },
      { actor: 'admin_token', action: 'taken_down', userId: member.userId, assetId: asset.assetId, reason: null, level: 30, msg: 'operator action' },
    ])
    // The record keeps who acted, for the operator's log (`coffer admin log`); the owner's view does not show it.
    const logged = await operatorLog(server.deps, { userId: member.userId, limit: 10 })
    expect(logged.map(({ action, actor, seq }) => ({ action, actor, seq }))).toEqual([
      { action: 'suspended', actor: 'admin_token', seq: 1 },
      { action: 'taken_down', actor: 'admin_token', seq: 2 },
    ])
    expect((await member.client.moderationRecord()).events.every((event) => !('actor' in event))).toBe(true)
    // Each carries the id of the request that took the action, as its access line does.
    for (const line of lines) {
      expect(line.request_id).toEqual(expect.any(String))
      expect(server.logs.filter((other) => other.includes(`"request_id":"${String(line.request_id)}"`) && other.includes('/v1/admin/')).length).toBeGreaterThan(
        0,
      )
    }
    // The admin token itself is never in the log.
    expect(server.logs.some((line) => line.includes(ADMIN_TOKEN))).toBe(false)
  })
})

describe('a legal hold', () => {
  it('keeps every blob of the asset, replaced bundles included, from garbage collection until it is lifted', async () => {
    const member = await uploader(server, 'hold')
    const albumId = await album(member)
    const held = await apply(member, albumId)
    const control = await apply(member, albumId)
    await act(`assets/${held.assetId}/legal-hold`, 'litigation')

    // Replaced after the hold, and again: two replaced bundles.
    const heldSecond = await apply(member, albumId, held)
    const heldThird = await apply(member, albumId, heldSecond)
    const controlSecond = await apply(member, albumId, control)
    const replacedHashes = [...held.blobs.keys(), ...heldSecond.blobs.keys()]
    const controlReplaced = [...control.blobs.keys()]
    for (const hash of [...replacedHashes, ...controlReplaced]) expect(await isKept(server, member.userId, hash), hash).toBe(true)

    await collectGarbage(server.deps)
    // The control's replaced bundle went; the held asset kept every blob it ever had.
    for (const hash of controlReplaced) expect(await isKept(server, member.userId, hash), hash).toBe(false)
    for (const hash of [...replacedHashes, ...heldThird.blobs.keys(), ...controlSecond.blobs.keys()])
      expect(await isKept(server, member.userId, hash), hash).toBe(true)
    const verdict = await member.client.verifyStorage({ assets: [{ asset_id: held.assetId, blob_hashes: replacedHashes }] })
    expect(verdict.verdicts[0]!.blobs.map((b) => b.stored)).toEqual(replacedHashes.map(() => true))
    // Collection again, later: still kept.
    server.clock.advance(30 * 24 * 3600 * 1000)
    await collectGarbage(server.deps)
    for (const hash of replacedHashes) expect(await isKept(server, member.userId, hash), hash).toBe(true)
    server.clock.set(Date.now())

    const lifted = await act(`assets/${held.assetId}/lift-hold`)
    expect(lifted.events.map((e) => e.action)).toEqual(['legal_hold', 'hold_lifted'])
    await collectGarbage(server.deps)
    for (const hash of replacedHashes) expect(await isKept(server, member.userId, hash), hash).toBe(false)
    // The live bundle stays, and downloads.
    for (const [hash, bytes] of heldThird.blobs) expect(Buffer.from(await member.client.downloadBlob(hash))).toEqual(bytes)
  })

  it('keeps a live asset’s blobs through garbage collection whether held or not, and lifting changes nothing there', async () => {
    const member = await uploader(server, 'hold-live')
    const asset = await apply(member, await album(member))
    await act(`assets/${asset.assetId}/legal-hold`)
    await collectGarbage(server.deps)
    await act(`assets/${asset.assetId}/lift-hold`)
    await collectGarbage(server.deps)
    for (const [hash, bytes] of asset.blobs) expect(Buffer.from(await member.client.downloadBlob(hash))).toEqual(bytes)
  })
})

describe('records belong to their account', () => {
  it('an operator action on one account’s asset answers and changes only that account’s record', async () => {
    const owner = await uploader(server, 'owner')
    const stranger = await uploader(server, 'stranger')
    const asset = await apply(owner, await album(owner))
    const answer = await act(`assets/${asset.assetId}/legal-hold`, 'only the owner sees this')
    expect(answer).toEqual(await owner.client.moderationRecord())
    expect(await stranger.client.moderationRecord()).toEqual({ standing: 'active', events: [] })
    // Another session of the owner reads the same: the record is the account's.
    const second = server.client()
    await second.login(owner.email, PASSWORD)
    expect(await second.moderationRecord()).toEqual(answer)
  })
})
