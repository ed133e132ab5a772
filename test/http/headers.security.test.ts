// Every response carries X-Content-Type-Options: nosniff and Cache-Control: no-store, except
// the successful answers of the two reads with an ETag (blob download, directory fetch), which
// are `private, no-cache`; the docs page may not be framed and runs only its own scripts.
import { encode } from 'cborg'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferClient, sha256Hex } from '../../src/sdk/client.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { authenticatorFor, PASSWORD, raw, registered, uniqueEmail } from '../support/actors.ts'
import { ciphertext, signedManifest, type Uploader } from '../support/albums.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

interface Answer {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly headers: Headers
}

/** An SDK client whose every answer is kept, to look at the headers the SDK itself ignores. */
function recordingClient(answers: Answer[]): CofferClient {
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    answers.push({ method: init?.method ?? 'GET', path: new URL(String(input)).pathname, status: response.status, headers: response.headers })
    return response
  }
  return new CofferClient({ baseUrl: server.url, now: server.clock.now, fetch: recording })
}

const describeAnswer = (answer: Answer) => `${answer.method} ${answer.path} ${answer.status}`

/** The successful answers that may be kept and revalidated: the declared ETag reads. */
function revalidated(answer: Answer): boolean {
  const etagRead = answer.method === 'GET' && /^\/v1\/(blobs|auth\/devices\/directory)\/[^/]+$/.test(answer.path)
  return etagRead && (answer.status < 300 || answer.status === 304)
}

describe('Cache-Control and X-Content-Type-Options', () => {
  it('are no-store and nosniff on every answer of an account life that handles secrets; only successful ETag reads revalidate', async () => {
    const answers: Answer[] = []
    const email = uniqueEmail('headers')
    const alice = recordingClient(answers)
    await alice.register(email, PASSWORD)

    // The TOTP provisioning URI, then a sign-in through the second factor, then a refresh.
    const authenticator = authenticatorFor(await alice.startTotpEnrollment())
    await alice.confirmTotpEnrollment(authenticator.codeAt(server.clock.now()))
    server.clock.advance(60_000)
    const laptop = recordingClient(answers)
    const login = await laptop.login(email, PASSWORD)
    if (login.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
    await laptop.verifyLogin(login.challenge.mfa_token, authenticator.codeAt(server.clock.now()))
    await laptop.refresh()

    // Escrow, an enrollment code redeemed by a new device, a relayed payload drained.
    await alice.storeEscrow(new Uint8Array([1, 2, 3]))
    await alice.fetchEscrow()
    const code = await alice.issueEnrollmentCode()
    const phone = recordingClient(answers)
    const channel = await phone.redeemEnrollmentCode(code.code)
    await alice.relay(channel.channel_id, 'to_enrollee', 'wrapped key')
    expect(await phone.drain(channel.channel_id, 'to_enrollee')).toEqual(['wrapped key'])

    // A directory, an album with an asset, and both ETag reads, fresh and revalidated.
    const identity = IdentityKey.generate()
    await alice.publishDirectory(encode({ directory_version: 1 }), identity)
    const { user_id: userId } = await alice.getProfile()
    const member: Uploader = { email, password: PASSWORD, client: alice, userId, identity, deviceId: randomUUID() }
    const albumId = randomUUID()
    await alice.provisionAlbum(albumId)
    const original = ciphertext(2_000)
    await alice.uploadAsset({ albumId, cryptoSuiteId: 1, original, derivatives: [], sign: (hashes) => signedManifest(member, hashes, { albumId }) })
    await alice.downloadBlob(sha256Hex(original))
    const directory = await alice.fetchDirectory(userId)
    expect(await alice.fetchDirectory(userId, directory?.etag)).toBeNull()
    await alice.attestationKeys()
    await alice.feed(albumId)

    // A challenge of revoke-all, then the ceremony.
    await alice.revokeAllSessions(identity)

    for (const answer of answers) {
      expect(answer.headers.get('x-content-type-options'), describeAnswer(answer)).toBe('nosniff')
      expect(answer.headers.get('cache-control'), describeAnswer(answer)).toBe(revalidated(answer) ? 'private, no-cache' : 'no-store')
    }
    const seen = answers
      .filter((answer) => answer.status < 400)
      .map((answer) => `${answer.method} ${answer.path.replace(/\/enroll\/channel\/.*/, '/enroll/channel/{id}')}`)
    expect(seen).toEqual(
      expect.arrayContaining([
        'POST /v1/auth/register',
        'POST /v1/auth/login',
        'POST /v1/auth/login/verify',
        'POST /v1/auth/refresh',
        'POST /v1/auth/totp/enroll',
        'GET /v1/escrow',
        'POST /v1/auth/devices/enroll/code',
        'POST /v1/auth/devices/enroll/redeem',
        'GET /v1/auth/devices/enroll/channel/{id}',
        'POST /v1/auth/sessions/revoke-all/challenge',
      ]),
    )
    expect(answers.filter(revalidated).map(describeAnswer)).toEqual([
      `GET /v1/blobs/${sha256Hex(original)} 200`,
      `GET /v1/auth/devices/directory/${userId} 200`,
      `GET /v1/auth/devices/directory/${userId} 304`,
    ])
  })

  it('let a blob download be revalidated (200, 206, HEAD and 304 are private, no-cache) but never keep its problems', async () => {
    const answers: Answer[] = []
    const bob = recordingClient(answers)
    const email = uniqueEmail('etag')
    await bob.register(email, PASSWORD)
    const identity = IdentityKey.generate()
    await bob.publishDirectory(encode({ directory_version: 1 }), identity)
    const { user_id: userId } = await bob.getProfile()
    const albumId = randomUUID()
    await bob.provisionAlbum(albumId)
    const original = ciphertext(500)
    const member: Uploader = { email, password: PASSWORD, client: bob, userId, identity, deviceId: randomUUID() }
    await bob.uploadAsset({ albumId, cryptoSuiteId: 1, original, derivatives: [], sign: (hashes) => signedManifest(member, hashes, { albumId }) })
    const headers = { authorization: `Bearer ${bob.tokens?.access_token}` }
    const hash = sha256Hex(original)

    const whole = await raw(server, 'GET', `/v1/blobs/${hash}`, { headers })
    const again = await raw(server, 'GET', `/v1/blobs/${hash}`, { headers: { ...headers, 'if-none-match': whole.headers.get('etag') ?? '' } })
    const range = await raw(server, 'GET', `/v1/blobs/${hash}`, { headers: { ...headers, range: 'bytes=0-9' } })
    const head = await raw(server, 'HEAD', `/v1/blobs/${hash}`, { headers })
    const missing = await raw(server, 'GET', `/v1/blobs/${'0'.repeat(64)}`, { headers })
    const unsatisfiable = await raw(server, 'GET', `/v1/blobs/${hash}`, { headers: { ...headers, range: 'bytes=9999-' } })
    const unknownDirectory = await raw(server, 'GET', `/v1/auth/devices/directory/${randomUUID()}`, { headers })

    expect([whole.status, again.status, range.status, head.status, missing.status, unsatisfiable.status, unknownDirectory.status]).toEqual([
      200, 304, 206, 200, 404, 416, 404,
    ])
    for (const answer of [whole, again, range, head]) expect(answer.headers.get('cache-control')).toBe('private, no-cache')
    for (const answer of [missing, unsatisfiable, unknownDirectory]) expect(answer.headers.get('cache-control')).toBe('no-store')
  })

  it('are no-store and nosniff on health, metrics, the documents, the docs page and every kind of problem', async () => {
    const member = await registered(server)
    const json = { 'content-type': 'application/json' }
    const answers = [
      ['health', await raw(server, 'GET', '/healthz'), 200],
      ['readiness', await raw(server, 'GET', '/readyz'), 200],
      ['metrics', await raw(server, 'GET', '/metrics'), 200],
      ['OpenAPI document', await raw(server, 'GET', '/openapi.json'), 200],
      ['attestation keys', await raw(server, 'GET', '/.well-known/service/attestation-keys'), 200],
      ['docs page', await raw(server, 'GET', '/docs/'), 200],
      ['docs asset', await raw(server, 'GET', '/docs/static/swagger-ui-bundle.js'), 200],
      ['profile', await raw(server, 'GET', '/v1/profile', { headers: { authorization: `Bearer ${member.client.tokens?.access_token}` } }), 200],
      ['unknown route', await raw(server, 'GET', '/v1/nothing'), 404],
      ['no credential', await raw(server, 'GET', '/v1/profile'), 401],
      ['malformed JSON', await raw(server, 'POST', '/v1/auth/login', { headers: json, body: '{"email":' }), 400],
      [
        'body too large',
        await raw(server, 'POST', '/v1/auth/login', { headers: json, body: JSON.stringify({ email: 'a@b', password: 'x'.repeat(1_100_000) }) }),
        413,
      ],
      ['wrong media type', await raw(server, 'POST', '/v1/auth/login', { headers: { 'content-type': 'text/plain' }, body: 'x' }), 415],
      ['schema', await raw(server, 'POST', '/v1/auth/login', { headers: json, body: '{}' }), 422],
      ['wrong password', await raw(server, 'POST', '/v1/auth/login', { headers: json, body: JSON.stringify({ email: member.email, password: 'wrong' }) }), 401],
    ] as const
    for (const [name, answer, status] of answers) {
      expect(answer.status, name).toBe(status)
      expect(answer.headers.get('x-content-type-options'), name).toBe('nosniff')
      expect(answer.headers.get('cache-control'), name).toBe('no-store')
    }
  })
})

/** The directives of a Content-Security-Policy header, by name. */
function directives(header: string | null): Map<string, string[]> {
  const parsed = (header ?? '')
    .split(';')
    .map((part) => part.trim().split(/\s+/))
    .filter((words) => words[0] !== '')
  return new Map(parsed.map(([name, ...values]) => [name!.toLowerCase(), values]))
}

describe('the docs page', () => {
  it('forbids framing and runs only its own script files, under a CSP on the page and its assets', async () => {
    const page = await raw(server, 'GET', '/docs/')
    expect(page.status).toBe(200)
    const policy = directives(page.headers.get('content-security-policy'))
    expect(policy.get('frame-ancestors')).toEqual(["'none'"])
    expect(policy.get('script-src')).toEqual(["'self'"])
    expect(policy.get('object-src')).toEqual(["'none'"])
    expect(policy.get('base-uri')).toEqual(["'none'"])

    // Every script of the page is a file of this origin: nothing inline for the CSP to refuse.
    const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts.length).toBeGreaterThan(0)
    for (const [tag, attributes, inline] of scripts) {
      expect(inline?.trim(), tag).toBe('')
      expect(attributes, tag).toMatch(/\bsrc="\.\/static\/[^":]+"/)
    }
    for (const [, attributes] of scripts) {
      const source = /\bsrc="\.\/([^"]+)"/.exec(attributes ?? '')?.[1]
      const asset = await raw(server, 'GET', `/docs/${source}`)
      expect(asset.status, source).toBe(200)
      expect(asset.headers.get('content-type'), source).toMatch(/javascript/)
      expect(directives(asset.headers.get('content-security-policy')).get('frame-ancestors'), source).toEqual(["'none'"])
      expect(asset.headers.get('x-content-type-options'), source).toBe('nosniff')
    }
  })
})
