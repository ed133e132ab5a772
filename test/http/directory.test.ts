// The device directory is stored and served byte for byte, read only for a directory_version
// that only increases, bound to the identity key of the first publish, and every bad input is
// refused with its documented problem while nothing stored changes.
import { createHash } from 'node:crypto'
import { ed25519 } from '@noble/curves/ed25519.js'
import { encode } from 'cborg'
import { CBOR_MAX_DEPTH, CBOR_MAX_ITEMS } from '../../src/codec/cbor.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CofferClient } from '../../src/sdk/client.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { type Member, PASSWORD, problemOf, raw, registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const LIMIT = 256 * 1024
const MAX_SAFE = Number.MAX_SAFE_INTEGER
const cbor = { 'content-type': 'application/cbor' }

/** The text key `directory_version` as CBOR (a 17-byte text string). */
const VERSION_KEY = `71${Buffer.from('directory_version').toString('hex')}`

const fromHex = (hex: string) => Buffer.from(hex.replaceAll(' ', ''), 'hex')

function directory(version: number | bigint, extra: Record<string, unknown> = {}): Buffer {
  return Buffer.from(encode({ directory_version: version, ...extra }))
}

interface Publisher extends Member {
  readonly userId: string
  readonly identity: IdentityKey
}

async function publisher(label: string): Promise<Publisher> {
  const member = await registered(server, label)
  const { user_id: userId } = await member.client.getProfile()
  return { ...member, userId, identity: IdentityKey.generate() }
}

function token(client: CofferClient): string {
  return client.tokens!.access_token
}

function publishRaw(accessToken: string | null, body: Uint8Array | string | undefined, headers: Record<string, string>) {
  return raw(server, 'POST', '/v1/auth/devices/directory', {
    headers: { ...(accessToken === null ? {} : { authorization: `Bearer ${accessToken}` }), ...headers },
    ...(body === undefined ? {} : { body }),
  })
}

/** A publish with a valid key header and CBOR media type: what varies is the body. */
function publishBody(who: Publisher, body: Uint8Array) {
  return publishRaw(token(who.client), body, { ...cbor, 'x-service-identity-key': who.identity.publicKeyBase64 })
}

/** GET with the raw answer bytes (raw() reads text, which would mangle CBOR). */
async function fetchRaw(accessToken: string | null, userId: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}/v1/auth/devices/directory/${userId}`, {
    headers: { ...(accessToken === null ? {} : { authorization: `Bearer ${accessToken}` }), ...headers },
  })
  const bytes = Buffer.from(await response.arrayBuffer())
  return { status: response.status, headers: response.headers, bytes }
}

/** What is stored for `who`, fetched by another account: null when nothing is. */
async function stored(who: Publisher): Promise<Buffer | null> {
  const reader = await registeredReader()
  const answer = await fetchRaw(token(reader), who.userId)
  if (answer.status === 404) return null
  expect(answer.status).toBe(200)
  return answer.bytes
}

let reader: CofferClient | undefined
async function registeredReader(): Promise<CofferClient> {
  reader ??= (await registered(server, 'reader')).client
  return reader
}

function expectProblem(answer: { status: number; headers: Headers; json: Record<string, unknown> | undefined }, status: number, code: string): void {
  expect(answer.status, JSON.stringify(answer.json)).toBe(status)
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(answer.json?.code).toBe(code)
  expect(answer.json?.status).toBe(status)
}

describe('publish and fetch', () => {
  it('serves exactly the published bytes as application/cbor with a strong ETag', async () => {
    const alice = await publisher('alice')
    const body = directory(1, { devices: [{ id: 'phone', key: new Uint8Array([1, 2, 3]) }] })
    expect(await alice.client.publishDirectory(body, alice.identity)).toBe(1)

    const answer = await fetchRaw(token(alice.client), alice.userId)
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe('application/cbor')
    expect(answer.bytes.equals(body)).toBe(true)
    const etag = answer.headers.get('etag')
    expect(etag).toMatch(/^"[^"]+"$/) // strong: no W/ prefix
    expect((await fetchRaw(token(alice.client), alice.userId)).headers.get('etag')).toBe(etag)

    const viaSdk = await alice.client.fetchDirectory(alice.userId)
    expect(Buffer.from(viaSdk!.bytes).equals(body)).toBe(true)
    expect(viaSdk?.etag).toBe(etag)
  })

  it('answers If-None-Match with the current tag by 304 without a body, and the SDK returns null', async () => {
    const alice = await publisher('etag')
    await alice.client.publishDirectory(directory(3), alice.identity)
    const first = await alice.client.fetchDirectory(alice.userId)
    const etag = first!.etag

    const revalidated = await fetchRaw(token(alice.client), alice.userId, { 'if-none-match': etag })
    expect(revalidated.status).toBe(304)
    expect(revalidated.bytes).toHaveLength(0)
    expect(revalidated.headers.get('etag')).toBe(etag)
    expect(await alice.client.fetchDirectory(alice.userId, etag)).toBeNull()

    // A stale tag gets the bytes.
    const stale = await fetchRaw(token(alice.client), alice.userId, { 'if-none-match': '"not-the-tag"' })
    expect(stale.status).toBe(200)
    expect(Buffer.from(stale!.bytes).equals(directory(3))).toBe(true)
  })

  it('matches If-None-Match as HTTP does: a list of tags, a weak form of the tag, or *', async () => {
    const alice = await publisher('etag-forms')
    await alice.client.publishDirectory(directory(1), alice.identity)
    const etag = (await alice.client.fetchDirectory(alice.userId))!.etag
    for (const header of [`"other", ${etag}`, `W/${etag}`, '*']) {
      const answer = await fetchRaw(token(alice.client), alice.userId, { 'if-none-match': header })
      expect(answer.status, header).toBe(304)
    }
    expect((await fetchRaw(token(alice.client), alice.userId, { 'if-none-match': '"other", W/"another"' })).status).toBe(200)
  })

  it('changes the tag with the bytes: the old tag then gets the new directory', async () => {
    const alice = await publisher('etag-change')
    await alice.client.publishDirectory(directory(1), alice.identity)
    const before = (await alice.client.fetchDirectory(alice.userId))!
    const newer = directory(2, { added: 'laptop' })
    await alice.client.publishDirectory(newer, alice.identity)
    const after = await alice.client.fetchDirectory(alice.userId, before.etag)
    expect(after).not.toBeNull()
    expect(Buffer.from(after!.bytes).equals(newer)).toBe(true)
    expect(after!.etag).not.toBe(before.etag)
    expect(await alice.client.fetchDirectory(alice.userId, after!.etag)).toBeNull()
  })

  it('serves another account’s directory (public bytes) to any signed-in account', async () => {
    const alice = await publisher('owner')
    const bob = await publisher('other')
    const body = directory(9, { note: 'public' })
    await alice.client.publishDirectory(body, alice.identity)
    const fetched = await bob.client.fetchDirectory(alice.userId)
    expect(Buffer.from(fetched!.bytes).equals(body)).toBe(true)
    // Bob has none of his own: his id is 404, not Alice's bytes.
    expect((await problemOf(bob.client.fetchDirectory(bob.userId))).status).toBe(404)
  })

  it('needs a bearer token to fetch: none or a dead one answers 401', async () => {
    const alice = await publisher('fetch-auth')
    await alice.client.publishDirectory(directory(1), alice.identity)
    const none = await fetchRaw(null, alice.userId)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="coffer"')
    const dead = await registered(server, 'dead')
    const deadToken = token(dead.client)
    await dead.client.logout()
    const refused = await fetchRaw(deadToken, alice.userId)
    expect(refused.status).toBe(401)
    expect(refused.bytes.equals(directory(1))).toBe(false)
  })

  it('needs a bearer token to publish: none answers 401 and nothing is stored', async () => {
    const alice = await publisher('publish-auth')
    const answer = await publishRaw(null, directory(1), { ...cbor, 'x-service-identity-key': alice.identity.publicKeyBase64 })
    expectProblem(answer, 401, 'error.auth.unauthenticated')
    expect(await stored(alice)).toBeNull()
  })

  it('answers 404 for an unknown user id and for a user who never published', async () => {
    const alice = await publisher('never')
    const unknown = await fetchRaw(token(alice.client), '00000000-0000-4000-8000-000000000000')
    const never = await fetchRaw(token(alice.client), alice.userId)
    for (const answer of [unknown, never]) {
      expect(answer.status).toBe(404)
      expect(JSON.parse(answer.bytes.toString('utf8')).code).toBe('error.not_found')
    }
  })

  it.each([['not-a-uuid'], ['1234'], ['00000000-0000-4000-8000-00000000000'], ['00000000-0000-4000-8000-00000000000A']])(
    'answers a malformed user id %s with 400',
    async (userId) => {
      const alice = await publisher('malformed-id')
      await alice.client.publishDirectory(directory(1), alice.identity)
      const answer = await fetchRaw(token(alice.client), userId)
      expect(answer.status).toBe(400)
      expect(JSON.parse(answer.bytes.toString('utf8')).code).toBe('error.request.malformed')
    },
  )

  it('answers an uppercase spelling of a real user id with 400, not the directory', async () => {
    const alice = await publisher('upper-id')
    await alice.client.publishDirectory(directory(1), alice.identity)
    const answer = await fetchRaw(token(alice.client), alice.userId.toUpperCase())
    expect(answer.status).toBe(400)
  })
})

describe('the bytes are opaque apart from directory_version', () => {
  // Each body is a top-level map carrying directory_version 7 and something a re-encoder or a
  // strict decoder would change or refuse. Hand-written hex, so the exact bytes are known.
  const V7 = `${VERSION_KEY}07`
  const u32 = (n: number) => {
    const bytes = Buffer.alloc(4)
    bytes.writeUInt32BE(n)
    return bytes
  }
  const cases: [string, string][] = [
    ['non-canonical key order (long key first, version last)', `a3 6a 6c6f6e676572206b6579 01 61 61 02${V7}`],
    ['integer, negative and byte-string keys', `a4 01 61 61 38 63 61 62 43 010203 f5${V7}`],
    ['a float key and an array key', `a3 fb 400921f9f01b866e 01 82 01 02 f6${V7}`],
    ['half, single and double floats, NaN and infinities', `a2${V7}61 66 85 f9 3c00 fa 47c35000 fb 3ff199999999999a f9 7e00 f9 fc00`],
    [
      'tags: date, bignum, URI, self-described CBOR, an unassigned tag',
      `a2${V7}61 74 85 c0 74 323032342d30312d30315430303a30303a30305a c2 49 010000000000000000 d8 20 63 612f62 d9 d9f7 00 db 00000000deadbeef 01`,
    ],
    ['a tag around the whole map', `d9 d9f7 a1${V7}`],
    ['nested maps with their own key order and duplicate keys', `a2${V7}61 6d a2 61 7a a1 01 02 61 61 a2 01 01 01 02`],
    ['a duplicate key other than directory_version at the top', `a3 61 78 01 61 78 02${V7}`],
    ['an indefinite-length map at the top', `bf 61 61 01${V7}ff`],
    ['indefinite-length arrays and maps inside', `a2${V7}61 69 9f 01 bf 61 6b 9f ff ff ff`],
    ['simple values: false, true, null, undefined', `a2${V7}61 76 84 f4 f5 f6 f7`],
    ['integers in non-shortest form and 64-bit extremes', `a2${V7}61 69 84 1b 0000000000000001 19 0001 1b ffffffffffffffff 3b ffffffffffffffff`],
    ['text that is not valid UTF-8', `a2${V7}61 75 62 c328`],
    ['directory_version in non-shortest form', `a1${VERSION_KEY}1b 0000000000000007`],
    ['directory_version under a tag', `a1${VERSION_KEY}c1 07`],
  ]

  it.each(cases)('stores and serves %s byte for byte', async (_case, hex) => {
    const alice = await publisher('opaque')
    const body = fromHex(hex)
    expect(await alice.client.publishDirectory(body, alice.identity)).toBe(7)
    const fetched = await alice.client.fetchDirectory(alice.userId)
    expect(Buffer.from(fetched!.bytes).toString('hex')).toBe(body.toString('hex'))
  })

  // Well-formed CBOR that cborg, the decoding library, does not tokenize: refused as
  // malformed (docs/decisions/0004-devices.md), never a 500, and nothing is stored.
  it.each([
    ['indefinite-length byte and text strings', `a3${V7}61 62 5f 42 0102 41 03 40 ff 61 74 7f 62 6869 61 21 ff`],
    ['an indefinite-length text key', `a2${V7}7f 63 6b6579 ff 01`],
    ['an unassigned simple value', `a2${V7}61 76 f0`],
    ['a two-byte simple value', `a2${V7}61 73 f8 ff`],
  ])('refuses %s as malformed (beyond what cborg tokenizes)', async (_case, hex) => {
    const alice = await publisher('untokenizable')
    const answer = await publishBody(alice, fromHex(hex))
    expect(answer.status).toBe(400)
    expect(answer.json?.code).toBe('error.directory.malformed')
    expect(await fetchRaw(token(alice.client), alice.userId).then((r) => r.status)).toBe(404)
  })

  // Reading the version walks the whole body, within bounds that keep it short
  // (codec/cbor.ts CBOR_MAX_DEPTH, CBOR_MAX_ITEMS): past them, malformed at once.
  it.each([
    ['nesting past CBOR_MAX_DEPTH', Buffer.concat([fromHex(`a2${V7}61 6e`), Buffer.alloc(CBOR_MAX_DEPTH - 1, 0x81), fromHex('80')])],
    ['a body of nested indefinite arrays up to the limit', Buffer.concat([fromHex(`a2${V7}61 6e`), Buffer.alloc(255 * 1024, 0x9f)])],
    ['more than CBOR_MAX_ITEMS items', Buffer.concat([fromHex(`a2${V7}61 6e 9a 00010000`), Buffer.alloc(CBOR_MAX_ITEMS, 0)])],
  ])('refuses %s as malformed', async (_case, body) => {
    const alice = await publisher('unbounded')
    const answer = await publishBody(alice, body)
    expect([answer.status, answer.json?.code]).toEqual([400, 'error.directory.malformed'])
    expect(await fetchRaw(token(alice.client), alice.userId).then((r) => r.status)).toBe(404)
  })

  it('stores all of them together in one body, and reads the version out of it', async () => {
    const alice = await publisher('opaque-all')
    const entries = cases.filter(
      ([name]) => !name.startsWith('directory_version') && !name.startsWith('a tag around') && !name.startsWith('an indefinite-length map'),
    )
    // Every case body is a map header followed by its entries; lift the entries out of each
    // (all but the version entry) and put them under one indefinite-length map.
    const body = Buffer.concat([
      fromHex('bf'),
      ...entries.map(([, hex]) => {
        const bytes = fromHex(hex)
        const withoutVersion = bytes.toString('hex').replace(fromHex(V7).toString('hex'), '')
        return Buffer.from(withoutVersion.slice(2), 'hex') // drop the definite map header
      }),
      fromHex(`${VERSION_KEY}18 2a`), // 42
      fromHex('ff'),
    ])
    expect(await alice.client.publishDirectory(body, alice.identity)).toBe(42)
    expect(Buffer.from((await alice.client.fetchDirectory(alice.userId))!.bytes).equals(body)).toBe(true)
  })

  it('stores a directory nested to CBOR_MAX_DEPTH and holding CBOR_MAX_ITEMS items, byte for byte', async () => {
    const alice = await publisher('deep')
    // The map, `d`: 62 arrays around an empty one (64 levels); `w`: an array of the items left.
    const wide = CBOR_MAX_ITEMS - 1 - 2 - 1 - 63 - 2
    const body = Buffer.concat([fromHex(`a3${V7}61 64`), Buffer.alloc(CBOR_MAX_DEPTH - 2, 0x81), fromHex('80 61 77 9a'), u32(wide), Buffer.alloc(wide, 0)])
    expect(await alice.client.publishDirectory(body, alice.identity)).toBe(7)
    expect(Buffer.from((await alice.client.fetchDirectory(alice.userId))!.bytes).equals(body)).toBe(true)
  })

  it('accepts directory_version 0 and 2^53-1, the bounds of the range', async () => {
    const zero = await publisher('zero')
    expect(await zero.client.publishDirectory(directory(0), zero.identity)).toBe(0)
    expect(Buffer.from((await zero.client.fetchDirectory(zero.userId))!.bytes).equals(directory(0))).toBe(true)
    const top = await publisher('top')
    expect(await top.client.publishDirectory(directory(MAX_SAFE), top.identity)).toBe(MAX_SAFE)
  })

  it('accepts a Content-Type with parameters', async () => {
    const alice = await publisher('params')
    const answer = await publishRaw(token(alice.client), directory(4), {
      'content-type': 'application/cbor; foo=bar',
      'x-service-identity-key': alice.identity.publicKeyBase64,
    })
    expect(answer.status).toBe(200)
    expect(answer.json).toEqual({ directory_version: 4 })
  })
})

describe('directory_version only increases', () => {
  it('refuses an equal or lower version with 409 carrying submitted and stored, and keeps the earlier bytes', async () => {
    const alice = await publisher('monotonic')
    const original = directory(5, { which: 'original' })
    await alice.client.publishDirectory(original, alice.identity)

    for (const submitted of [5, 4, 0]) {
      const answer = await publishBody(alice, directory(submitted, { which: `attempt ${submitted}` }))
      expectProblem(answer, 409, 'error.directory.version_conflict')
      expect(answer.json?.submitted).toBe(submitted)
      expect(answer.json?.stored).toBe(5)
      expect(Number.isInteger(answer.json?.submitted)).toBe(true)
      expect(Number.isInteger(answer.json?.stored)).toBe(true)
      expect((await stored(alice))!.equals(original)).toBe(true)
    }

    // The SDK surfaces the same problem with its extension members.
    const viaSdk = await problemOf(alice.client.publishDirectory(directory(2), alice.identity))
    expect(viaSdk.status).toBe(409)
    expect(viaSdk.problem).toMatchObject({ code: 'error.directory.version_conflict', submitted: 2, stored: 5 })

    const next = directory(6, { which: 'next' })
    expect(await alice.client.publishDirectory(next, alice.identity)).toBe(6)
    expect((await stored(alice))!.equals(next)).toBe(true)
    const again = await publishBody(alice, directory(6, { which: 'same version, other bytes' }))
    expect(again.json).toMatchObject({ code: 'error.directory.version_conflict', submitted: 6, stored: 6 })
    expect((await stored(alice))!.equals(next)).toBe(true)
  })

  it('refuses a second publish of version 0 (0 is a stored version like any other)', async () => {
    const alice = await publisher('zero-twice')
    await alice.client.publishDirectory(directory(0, { n: 1 }), alice.identity)
    const answer = await publishBody(alice, directory(0, { n: 2 }))
    expect(answer.json).toMatchObject({ code: 'error.directory.version_conflict', submitted: 0, stored: 0 })
    expect((await stored(alice))!.equals(directory(0, { n: 1 }))).toBe(true)
  })

  it('allows jumps: any higher version is accepted, then only higher than that', async () => {
    const alice = await publisher('jumps')
    await alice.client.publishDirectory(directory(1), alice.identity)
    await alice.client.publishDirectory(directory(1000), alice.identity)
    const answer = await publishBody(alice, directory(999))
    expect(answer.json).toMatchObject({ submitted: 999, stored: 1000 })
    expect(await alice.client.publishDirectory(directory(MAX_SAFE), alice.identity)).toBe(MAX_SAFE)
    expect((await publishBody(alice, directory(MAX_SAFE))).json).toMatchObject({ submitted: MAX_SAFE, stored: MAX_SAFE })
  })

  it('keeps one account’s versions apart from another’s', async () => {
    const alice = await publisher('apart-a')
    const bob = await publisher('apart-b')
    await alice.client.publishDirectory(directory(50), alice.identity)
    expect(await bob.client.publishDirectory(directory(1), bob.identity)).toBe(1)
    expect((await stored(alice))!.equals(directory(50))).toBe(true)
    expect((await stored(bob))!.equals(directory(1))).toBe(true)
  })
})

describe('the identity key', () => {
  it('refuses a missing X-Service-Identity-Key with 422 and stores nothing', async () => {
    const alice = await publisher('no-key')
    const answer = await publishRaw(token(alice.client), directory(1), cbor)
    expectProblem(answer, 422, 'error.directory.identity_key_invalid')
    expect(await stored(alice)).toBeNull()
  })

  /** A y coordinate (little-endian, sign bit clear) for which no curve point exists. */
  function notOnCurve(): Buffer {
    for (let y = 2n; ; y++) {
      const bytes = Buffer.alloc(32)
      bytes.writeBigUInt64LE(y)
      try {
        ed25519.Point.fromBytes(bytes)
      } catch {
        return bytes
      }
    }
  }

  const p = 2n ** 255n - 19n
  const littleEndian = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse()

  function badKeys(good: Buffer): [string, string][] {
    const mlDsa = good.subarray(32)
    const identityPoint = Buffer.alloc(32)
    identityPoint[0] = 1
    const urlSafe = good.toString('base64url') + '=='.slice(0, (4 - (good.toString('base64url').length % 4)) % 4)
    return [
      ['not base64', 'this is not base64!'],
      ['empty', ''],
      ['base64 without padding', good.toString('base64').replace(/=+$/, '')],
      ['base64 with whitespace inside', good.toString('base64').replace(/(.{76})/, '$1 ')],
      ['base64url', urlSafe.includes('-') || urlSafe.includes('_') ? urlSafe : urlSafe.replace(/A/, '-')],
      ['1983 bytes', good.subarray(0, 1983).toString('base64')],
      ['1985 bytes', Buffer.concat([good, Buffer.from([0])]).toString('base64')],
      ['0 bytes but padded', '===='],
      ['32 bytes (the Ed25519 half alone)', good.subarray(0, 32).toString('base64')],
      ['1984 bytes whose Ed25519 half is not a curve point', Buffer.concat([notOnCurve(), mlDsa]).toString('base64')],
      ['1984 bytes whose Ed25519 half is a non-canonical encoding (y = p)', Buffer.concat([littleEndian(p), mlDsa]).toString('base64')],
      ['1984 bytes whose Ed25519 half is all ones', Buffer.concat([Buffer.alloc(32, 0xff), mlDsa]).toString('base64')],
      ['1984 bytes whose Ed25519 half is the identity point (small order)', Buffer.concat([identityPoint, mlDsa]).toString('base64')],
    ]
  }

  it('the invalid-point cases are really not Ed25519 public keys (checked with an independent library)', () => {
    const good = IdentityKey.generate().publicKey
    expect(() => ed25519.Point.fromBytes(good.subarray(0, 32))).not.toThrow()
    expect(() => ed25519.Point.fromBytes(notOnCurve())).toThrow()
    expect(() => ed25519.Point.fromBytes(littleEndian(p))).toThrow()
    const identityPoint = Buffer.alloc(32)
    identityPoint[0] = 1
    expect(ed25519.Point.fromBytes(identityPoint).isSmallOrder()).toBe(true)
  })

  it('refuses every malformed key with 422 identity_key_invalid, binds nothing and stores nothing', async () => {
    const alice = await publisher('bad-keys')
    for (const [name, header] of badKeys(Buffer.from(alice.identity.publicKey))) {
      const answer = await publishRaw(token(alice.client), directory(1), { ...cbor, 'x-service-identity-key': header })
      expect(answer.status, name).toBe(422)
      expect(answer.json?.code, name).toBe('error.directory.identity_key_invalid')
    }
    expect(await stored(alice)).toBeNull()
    // None of them was bound: the real key still makes the first publish.
    expect(await alice.client.publishDirectory(directory(1), alice.identity)).toBe(1)
  })

  it('binds the key of the first successful publish; another key is refused with 409 even at a higher version', async () => {
    const alice = await publisher('binding')
    const first = directory(1, { by: 'first key' })
    await alice.client.publishDirectory(first, alice.identity)
    const intruder = IdentityKey.generate()

    for (const version of [1, 2, 1_000_000]) {
      const error = await problemOf(alice.client.publishDirectory(directory(version, { by: 'other key' }), intruder))
      expect(error.status).toBe(409)
      expect(error.code).toBe('error.directory.identity_key_mismatch')
      expect((await stored(alice))!.equals(first)).toBe(true)
    }
    // Nothing was stored by the refused publishes, so version 2 is still free for the bound key.
    expect(await alice.client.publishDirectory(directory(2, { by: 'first key' }), alice.identity)).toBe(2)
    expect((await stored(alice))!.equals(directory(2, { by: 'first key' }))).toBe(true)
  })

  it('a refused first publish binds nothing: after a 400, a 415 and a 413 under key B, key A binds', async () => {
    const alice = await publisher('refused-first')
    const keyB = IdentityKey.generate()
    const malformed = await publishRaw(token(alice.client), fromHex('ff'), { ...cbor, 'x-service-identity-key': keyB.publicKeyBase64 })
    expect(malformed.status).toBe(400)
    const wrongMedia = await publishRaw(token(alice.client), directory(1), {
      'content-type': 'application/json',
      'x-service-identity-key': keyB.publicKeyBase64,
    })
    expect(wrongMedia.status).toBe(415)
    const tooLarge = await publishRaw(token(alice.client), Buffer.alloc(LIMIT + 1), { ...cbor, 'x-service-identity-key': keyB.publicKeyBase64 })
    expect(tooLarge.status).toBe(413)

    expect(await alice.client.publishDirectory(directory(1), alice.identity)).toBe(1)
    expect((await problemOf(alice.client.publishDirectory(directory(2), keyB))).code).toBe('error.directory.identity_key_mismatch')
  })

  it('binds only on a recent password proof: a stale session gets 403 and binds nothing, reauthenticate lets it bind, later publishes need none', async () => {
    // Its own server: the clock moves past the freshness window, which the other tests' accounts must not see.
    const own = await startServer()
    try {
      const alice = await registered(own, 'binding-fresh')
      const identity = IdentityKey.generate()
      const { user_id: userId } = await alice.client.getProfile()
      const fetchedStatus = async () =>
        (await raw(own, 'GET', `/v1/auth/devices/directory/${userId}`, { headers: { authorization: `Bearer ${alice.client.tokens!.access_token}` } })).status
      const window = own.deps.config.freshnessWindowS * 1000
      own.clock.advance(window + 1)
      // A refresh keeps the pair alive but does not renew authenticated_at.
      await alice.client.refresh()
      const thiefKey = IdentityKey.generate()
      const stale = await problemOf(alice.client.publishDirectory(directory(1), thiefKey))
      expect([stale.status, stale.code]).toEqual([403, 'error.auth.reauthentication_required'])
      expect(await fetchedStatus()).toBe(404)

      await alice.client.reauthenticate(PASSWORD)
      expect(await alice.client.publishDirectory(directory(1), identity)).toBe(1)
      expect(await fetchedStatus()).toBe(200)
      // Bound to this key, not the refused one; publishing under it needs no fresh proof.
      own.clock.advance(window + 1)
      await alice.client.refresh()
      expect(await alice.client.publishDirectory(directory(2), identity)).toBe(2)
      expect((await problemOf(alice.client.publishDirectory(directory(3), thiefKey))).code).toBe('error.directory.identity_key_mismatch')
    } finally {
      await own.close()
    }
  })

  it('binds per account: two accounts bind two different keys', async () => {
    const alice = await publisher('per-account-a')
    const bob = await publisher('per-account-b')
    await alice.client.publishDirectory(directory(1), alice.identity)
    await bob.client.publishDirectory(directory(1), bob.identity)
    expect((await problemOf(alice.client.publishDirectory(directory(2), bob.identity))).code).toBe('error.directory.identity_key_mismatch')
    expect((await problemOf(bob.client.publishDirectory(directory(2), alice.identity))).code).toBe('error.directory.identity_key_mismatch')
  })
})

describe('malformed bodies', () => {
  const cases: [string, Buffer][] = [
    ['not CBOR (a lone break)', fromHex('ff')],
    ['not CBOR (JSON text)', Buffer.from('{"directory_version":1}')],
    ['an empty body', Buffer.alloc(0)],
    ['a top-level array', Buffer.from(encode([{ directory_version: 1 }]))],
    ['a top-level text string', Buffer.from(encode('directory_version'))],
    ['a top-level integer', fromHex('01')],
    ['a map without directory_version', Buffer.from(encode({ version: 1, devices: [] }))],
    ['an empty map', fromHex('a0')],
    ['directory_version only in a nested map', Buffer.from(encode({ inner: { directory_version: 1 } }))],
    ['directory_version as a byte-string key', fromHex(`a1 51${Buffer.from('directory_version').toString('hex')}01`)],
    ['directory_version with another letter case', Buffer.from(encode({ Directory_Version: 1 }))],
    ['a negative version', directory(-1)],
    ['a text version', Buffer.from(encode({ directory_version: '1' }))],
    ['a half-precision float version (1.0)', fromHex(`a1${VERSION_KEY}f9 3c00`)],
    ['a single-precision float version (2.0)', fromHex(`a1${VERSION_KEY}fa 40000000`)],
    ['a double-precision float version (3.0)', fromHex(`a1${VERSION_KEY}fb 4008000000000000`)],
    ['a fractional version', Buffer.from(encode({ directory_version: 1.5 }))],
    ['a null version', Buffer.from(encode({ directory_version: null }))],
    ['a boolean version', Buffer.from(encode({ directory_version: true }))],
    ['a version of 2^53', directory(2n ** 53n)],
    ['a version of 2^64-1', directory(2n ** 64n - 1n)],
    ['a bignum version (tag 2)', fromHex(`a1${VERSION_KEY}c2 41 01`)],
    ['an array version', Buffer.from(encode({ directory_version: [1] }))],
    ['trailing bytes after the map', Buffer.concat([directory(1), fromHex('00')])],
    ['two maps back to back', Buffer.concat([directory(1), directory(2)])],
    ['duplicate directory_version keys (same value)', fromHex(`a2${VERSION_KEY}01${VERSION_KEY}01`)],
    ['duplicate directory_version keys (different values)', fromHex(`a2${VERSION_KEY}01${VERSION_KEY}02`)],
    ['duplicate directory_version keys in an indefinite map', fromHex(`bf${VERSION_KEY}01${VERSION_KEY}02 ff`)],
    ['a truncated map', directory(1).subarray(0, 10)],
    ['a map that claims more entries than it has', fromHex(`a2${VERSION_KEY}01`)],
    ['an indefinite map without its break', fromHex(`bf${VERSION_KEY}01`)],
    ['an indefinite map broken after a key', fromHex(`bf${VERSION_KEY}01 61 61 ff`)],
    ['a break inside a definite map', fromHex(`a2${VERSION_KEY}01 ff`)],
    ['a reserved additional-information value (28)', fromHex(`a2${VERSION_KEY}01 61 61 1c`)],
    ['an indefinite-length integer', fromHex(`a2${VERSION_KEY}01 61 61 1f`)],
    ['a two-byte simple value below 32', fromHex(`a2${VERSION_KEY}01 61 61 f8 18`)],
    ['an indefinite text string with a byte-string chunk', fromHex(`a2${VERSION_KEY}01 61 61 7f 41 00 ff`)],
    ['an indefinite text string with a nested indefinite chunk', fromHex(`a2${VERSION_KEY}01 61 61 7f 7f ff ff`)],
    ['a byte string longer than the body', fromHex(`a2${VERSION_KEY}01 61 61 5a ffffffff 00`)],
    ['an array longer than the body', fromHex(`a2${VERSION_KEY}01 61 61 9b ffffffffffffffff`)],
    ['a tag with no content', fromHex(`a2${VERSION_KEY}01 61 61 c1`)],
  ]

  it.each(cases)('refuses %s with 400 error.directory.malformed, and the stored directory stays', async (_case, body) => {
    const alice = await publisher('malformed')
    const original = directory(1)
    await alice.client.publishDirectory(original, alice.identity)
    const answer = await publishBody(alice, body)
    expectProblem(answer, 400, 'error.directory.malformed')
    expect((await stored(alice))!.equals(original)).toBe(true)
  })

  it('refuses a publish with no body at all with 400', async () => {
    const alice = await publisher('no-body')
    const answer = await publishRaw(token(alice.client), undefined, { ...cbor, 'x-service-identity-key': alice.identity.publicKeyBase64 })
    expectProblem(answer, 400, 'error.directory.malformed')
    expect(await stored(alice)).toBeNull()
  })

  it('refuses a malformed first publish without storing anything', async () => {
    const alice = await publisher('malformed-first')
    const answer = await publishBody(alice, fromHex('a0'))
    expectProblem(answer, 400, 'error.directory.malformed')
    expect(await stored(alice)).toBeNull()
  })
})

describe('size and media type', () => {
  /** A valid directory of exactly `size` bytes (a byte-string pad under "pad"). */
  function sized(size: number, version: number): Buffer {
    let pad = size - 64
    for (;;) {
      const body = directory(version, { pad: new Uint8Array(pad) })
      if (body.length === size) return body
      pad += size - body.length
    }
  }

  it('accepts a valid directory of exactly 256 KiB and serves it back', async () => {
    const alice = await publisher('max-size')
    const body = sized(LIMIT, 1)
    expect(body.length).toBe(LIMIT)
    expect(await alice.client.publishDirectory(body, alice.identity)).toBe(1)
    const fetched = await alice.client.fetchDirectory(alice.userId)
    expect(fetched!.bytes.length).toBe(LIMIT)
    expect(createHash('sha256').update(fetched!.bytes).digest('hex')).toBe(createHash('sha256').update(body).digest('hex'))
  })

  it('refuses a directory one byte over 256 KiB with 413 and keeps what was stored', async () => {
    const alice = await publisher('over-size')
    await alice.client.publishDirectory(directory(1), alice.identity)
    const body = sized(LIMIT + 1, 2)
    expect(body.length).toBe(LIMIT + 1)
    const answer = await publishBody(alice, body)
    expectProblem(answer, 413, 'error.request.too_large')
    expect((await stored(alice))!.equals(directory(1))).toBe(true)
  })

  const media: [string, Record<string, string>][] = [
    ['application/json', { 'content-type': 'application/json' }],
    ['application/octet-stream', { 'content-type': 'application/octet-stream' }],
    ['text/plain', { 'content-type': 'text/plain' }],
    ['application/cbor-seq', { 'content-type': 'application/cbor-seq' }],
    ['no Content-Type', {}],
  ]

  it.each(media)('refuses %s with 415 and stores nothing', async (_case, headers) => {
    const alice = await publisher('media')
    const answer = await publishRaw(token(alice.client), directory(1), { ...headers, 'x-service-identity-key': alice.identity.publicKeyBase64 })
    expectProblem(answer, 415, 'error.request.unsupported_media_type')
    expect(await stored(alice)).toBeNull()
  })
})

describe('no bad input reaches a 500', () => {
  /** Deterministic pseudo-random bytes (xorshift32), so a failure replays exactly. */
  function prng(seed: number) {
    let state = seed >>> 0 || 1
    return () => {
      state ^= state << 13
      state >>>= 0
      state ^= state >>> 17
      state ^= state << 5
      state >>>= 0
      return state
    }
  }

  const rich = fromHex(
    'bf 64 7a657461 fb 400921f9f01b866e 01 d8 20 63 612f62 24 9f 01 bf 61 6b f6 ff ff' +
      VERSION_KEY +
      '05' +
      '63 6d6170 a2 61 62 f9 3c00 61 61 a1 01 f4 65 6279746573 43 010203 ff',
  )

  it('answers every strict prefix of a valid directory with 400', async () => {
    const alice = await publisher('prefixes')
    for (let length = 0; length < rich.length; length++) {
      const answer = await publishBody(alice, rich.subarray(0, length))
      expect(answer.status, `prefix of ${length} bytes`).toBe(400)
    }
    expect(await alice.client.publishDirectory(rich, alice.identity)).toBe(5)
  })

  it('answers random corruptions with 200, 400 or 409 only, and a 200 stores exactly those bytes', async () => {
    const alice = await publisher('corrupt')
    await alice.client.publishDirectory(directory(0), alice.identity)
    const next = prng(0xc0ffee)
    const seen = new Set<number>()
    let current = directory(0)
    for (let round = 0; round < 300; round++) {
      const body = Buffer.from(rich)
      const flips = 1 + (next() % 3)
      for (let i = 0; i < flips; i++) body[next() % body.length] = next() & 0xff
      const answer = await publishBody(alice, body)
      seen.add(answer.status)
      expect([200, 400, 409], `round ${round}: ${body.toString('hex')} -> ${answer.text}`).toContain(answer.status)
      if (answer.status === 200) current = body
      expect((await stored(alice))!.equals(current), `round ${round}`).toBe(true)
    }
    expect(seen.has(400)).toBe(true)
  })

  it('answers random identity-key headers with 422 only', async () => {
    const alice = await publisher('random-keys')
    const next = prng(0xbadc0de)
    for (let round = 0; round < 50; round++) {
      let length = next() % 2600
      if (length === 1984) length += 1 // random 1984 bytes can be a real key: not this test's concern
      const bytes = Buffer.alloc(length)
      for (let i = 0; i < length; i++) bytes[i] = next() & 0xff
      const header = round % 2 === 0 ? bytes.toString('base64') : bytes.toString('latin1').replace(/[^\x21-\x7e]/g, 'x')
      const answer = await publishRaw(token(alice.client), directory(1), { ...cbor, 'x-service-identity-key': header })
      expect(answer.status, `round ${round}`).toBe(422)
    }
    expect(await stored(alice)).toBeNull()
  })
})
