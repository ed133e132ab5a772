// Each account holds at most one escrow of opaque bytes: a store creates or displaces it
// (reporting which), a fetch returns exactly the stored bytes to their owner alone, and
// empty, oversized or mistyped bodies are refused without touching what is stored.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Member, problemOf, raw, registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const KIB64 = 64 * 1024
const iso = (ms: number) => new Date(ms).toISOString()
const octets = { 'content-type': 'application/octet-stream' }

function bearer(member: Member): Record<string, string> {
  return { authorization: `Bearer ${member.client.tokens!.access_token}` }
}

function putRaw(member: Member, body: Uint8Array | string | undefined, headers: Record<string, string> = octets) {
  return raw(server, 'PUT', '/v1/escrow', { headers: { ...bearer(member), ...headers }, ...(body === undefined ? {} : { body }) })
}

async function fetchRaw(member: Member) {
  const response = await fetch(`${server.url}/v1/escrow`, { headers: bearer(member) })
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) }
}

async function expectNoEscrow(member: Member): Promise<void> {
  const problem = await problemOf(member.client.fetchEscrow())
  expect(problem.status).toBe(404)
  expect(problem.code).toBe('error.not_found')
}

const allByteValues = Buffer.from(Array.from({ length: 256 }, (_, i) => i))

describe('escrow states', () => {
  it('none → store → stored, replaced false, stored_at = now', async () => {
    const member = await registered(server, 'first')
    await expectNoEscrow(member)
    const blob = randomBytes(200)
    const now = server.clock.now()
    const stored = await member.client.storeEscrow(blob)
    expect(stored).toEqual({ stored_at: iso(now), replaced: false })
    expect(Buffer.from(await member.client.fetchEscrow())).toEqual(blob)
  })

  it('stored → store → stored with the new blob, replaced true, the old bytes gone', async () => {
    const member = await registered(server, 'replace')
    const old = Buffer.from('old wrapped master key, longer than the new one')
    const fresh = Buffer.from('new key')
    expect((await member.client.storeEscrow(old)).replaced).toBe(false)
    server.clock.advance(5_000)
    const now = server.clock.now()
    expect(await member.client.storeEscrow(fresh)).toEqual({ stored_at: iso(now), replaced: true })
    const fetched = Buffer.from(await member.client.fetchEscrow())
    expect(fetched).toEqual(fresh)
    expect(fetched.includes(old)).toBe(false)

    // Every later store also reports the displacement, and the latest bytes win.
    const third = randomBytes(33)
    expect((await member.client.storeEscrow(third)).replaced).toBe(true)
    expect(Buffer.from(await member.client.fetchEscrow())).toEqual(third)
  })

  it('replaces with identical bytes too (replaced true)', async () => {
    const member = await registered(server, 'same')
    const blob = randomBytes(64)
    expect((await member.client.storeEscrow(blob)).replaced).toBe(false)
    expect((await member.client.storeEscrow(blob)).replaced).toBe(true)
    expect(Buffer.from(await member.client.fetchEscrow())).toEqual(blob)
  })
})

describe('fetch escrow', () => {
  it.each([
    ['one byte', Buffer.from([0x2a])],
    ['one zero byte', Buffer.from([0x00])],
    ['zero bytes inside', Buffer.from([0x00, 0x01, 0x00, 0x00, 0xff, 0x00])],
    ['all 256 byte values', allByteValues],
    ['bytes that are not UTF-8', Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc, 0xfe, 0xff])],
    ['exactly 64 KiB', randomBytes(KIB64)],
  ])('answers application/octet-stream with exactly the stored bytes: %s', async (_case, blob) => {
    const member = await registered(server, 'bytes')
    await member.client.storeEscrow(blob)
    const fetched = await fetchRaw(member)
    expect(fetched.status).toBe(200)
    expect(fetched.headers.get('content-type')).toMatch(/^application\/octet-stream/)
    expect(fetched.bytes.length).toBe(blob.length)
    expect(fetched.bytes.equals(blob)).toBe(true)
    expect(Buffer.from(await member.client.fetchEscrow()).equals(blob)).toBe(true)
  })

  it('answers 404 when none is stored', async () => {
    const member = await registered(server, 'none')
    const fetched = await raw(server, 'GET', '/v1/escrow', { headers: bearer(member) })
    expect(fetched.status).toBe(404)
    expect(fetched.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(fetched.json?.code).toBe('error.not_found')
  })

  it('serves each account only its own: another account sees 404, or its own bytes', async () => {
    const owner = await registered(server, 'owner')
    const other = await registered(server, 'other')
    const secret = randomBytes(128)
    await owner.client.storeEscrow(secret)
    await expectNoEscrow(other)

    const theirs = randomBytes(96)
    expect((await other.client.storeEscrow(theirs)).replaced).toBe(false)
    expect(Buffer.from(await other.client.fetchEscrow())).toEqual(theirs)
    expect(Buffer.from(await owner.client.fetchEscrow())).toEqual(secret)
  })

  it('needs a bearer token: 401 with a Bearer challenge for fetch and store', async () => {
    const member = await registered(server, 'bearer')
    const blob = randomBytes(16)
    await member.client.storeEscrow(blob)

    const fetched = await raw(server, 'GET', '/v1/escrow')
    expect(fetched.status).toBe(401)
    expect(fetched.json?.code).toBe('error.auth.unauthenticated')
    expect(fetched.headers.get('www-authenticate')).toMatch(/^Bearer /)
    expect(fetched.text).not.toContain(blob.toString('latin1'))

    const stored = await raw(server, 'PUT', '/v1/escrow', { headers: octets, body: randomBytes(16) })
    expect(stored.status).toBe(401)
    expect(stored.json?.code).toBe('error.auth.unauthenticated')
    const junk = await raw(server, 'PUT', '/v1/escrow', { headers: { ...octets, authorization: 'Bearer not-a-token' }, body: randomBytes(16) })
    expect(junk.status).toBe(401)
    expect(Buffer.from(await member.client.fetchEscrow())).toEqual(blob)
  })
})

describe('store escrow refusals leave the stored escrow alone', () => {
  async function withEscrow(label: string): Promise<{ member: Member; blob: Buffer }> {
    const member = await registered(server, label)
    const blob = randomBytes(48)
    await member.client.storeEscrow(blob)
    return { member, blob }
  }

  it('answers 400 error.escrow.malformed to an empty body', async () => {
    const { member, blob } = await withEscrow('empty')
    for (const body of [new Uint8Array(0), undefined]) {
      const stored = await putRaw(member, body)
      expect(stored.status, stored.text).toBe(400)
      expect(stored.json?.code).toBe('error.escrow.malformed')
    }
    const sdk = await problemOf(member.client.storeEscrow(new Uint8Array(0)))
    expect(sdk.status).toBe(400)
    expect(sdk.code).toBe('error.escrow.malformed')
    expect(Buffer.from(await member.client.fetchEscrow())).toEqual(blob)
  })

  it('answers 400 error.escrow.malformed to an empty first store, and nothing is stored', async () => {
    const member = await registered(server, 'empty-first')
    const stored = await putRaw(member, new Uint8Array(0))
    expect(stored.status).toBe(400)
    expect(stored.json?.code).toBe('error.escrow.malformed')
    await expectNoEscrow(member)
  })

  it('accepts exactly 64 KiB and answers 413 to one byte more', async () => {
    const { member, blob } = await withEscrow('size')
    const over = await putRaw(member, randomBytes(KIB64 + 1))
    expect(over.status).toBe(413)
    expect(over.json?.code).toBe('error.request.too_large')
    const far = await putRaw(member, randomBytes(2 * 1024 * 1024))
    expect(far.status).toBe(413)
    expect(Buffer.from(await member.client.fetchEscrow())).toEqual(blob)

    const max = randomBytes(KIB64)
    expect((await member.client.storeEscrow(max)).replaced).toBe(true)
    expect(Buffer.from(await member.client.fetchEscrow()).equals(max)).toBe(true)
  })

  it.each([
    ['application/json', '{"escrow":"bytes"}'],
    ['application/cbor', Buffer.from([0xa0])],
    ['text/plain', 'wrapped key'],
    ['multipart/form-data; boundary=x', '--x--'],
  ])('answers 415 to Content-Type %s', async (contentType, body) => {
    const { member, blob } = await withEscrow('media')
    const stored = await putRaw(member, typeof body === 'string' ? body : new Uint8Array(body), { 'content-type': contentType })
    expect(stored.status).toBe(415)
    expect(stored.json?.code).toBe('error.request.unsupported_media_type')
    expect(Buffer.from(await member.client.fetchEscrow())).toEqual(blob)
  })

  it('answers 415 when the Content-Type is missing', async () => {
    const { member, blob } = await withEscrow('no-type')
    const response = await fetch(`${server.url}/v1/escrow`, { method: 'PUT', headers: bearer(member), body: new Blob([randomBytes(8)]) })
    expect(response.status).toBe(415)
    expect(((await response.json()) as { code: string }).code).toBe('error.request.unsupported_media_type')
    expect(Buffer.from(await member.client.fetchEscrow())).toEqual(blob)
  })

  it('accepts application/octet-stream with parameters and in any letter case', async () => {
    const member = await registered(server, 'params')
    const blob = randomBytes(10)
    const stored = await putRaw(member, blob, { 'content-type': 'Application/Octet-Stream; charset=binary' })
    expect(stored.status, stored.text).toBe(200)
    expect(stored.json?.replaced).toBe(false)
    expect(Buffer.from(await member.client.fetchEscrow())).toEqual(blob)
  })
})
