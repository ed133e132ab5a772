// A client generated from the committed openapi.json works: the openapi-typescript types
// (test/generated/openapi.d.ts, checked fresh by test/architecture/openapi.test.ts) with
// openapi-fetch drive a real server through a short scenario, and `tsc -p .` type-checks the
// scenario against them, so a document that stops describing the wire breaks this file.
import { encode } from 'cborg'
import { randomUUID } from 'node:crypto'
import createClient from 'openapi-fetch'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import { IdentityKey } from '../../src/sdk/identity.ts'
import type { components, paths } from '../generated/openapi.d.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

type Schemas = components['schemas']

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

describe('a client generated from openapi.json (openapi-typescript + openapi-fetch)', () => {
  it('registers, provisions and lists albums, revalidates with If-None-Match and reads problems, all typed', async () => {
    const client = createClient<paths>({ baseUrl: server.url })
    const email = uniqueEmail('generated-client')

    const registered = await client.POST('/v1/auth/register', { body: { email, password: PASSWORD } })
    expectTypeOf(registered.data).toEqualTypeOf<Schemas['TokenResponse'] | undefined>()
    expect(registered.response.status).toBe(200)
    const tokens = registered.data!
    expect(tokens.token_type).toBe('Bearer')
    client.use({
      onRequest({ request }) {
        request.headers.set('authorization', `Bearer ${tokens.access_token}`)
        return request
      },
    })

    // A problem, read through the typed error of the operation.
    const again = await client.POST('/v1/auth/register', { body: { email, password: PASSWORD } })
    expectTypeOf(again.error).toEqualTypeOf<Schemas['CodedProblem'] | undefined>()
    expect(again.response.status).toBe(409)
    expect(again.error).toMatchObject({ status: 409, code: 'error.auth.account_exists', type: '/problems/auth.account_exists' })
    expect(again.response.headers.get('x-request-id')).toBeTruthy()

    const albumId = randomUUID()
    const provisioned = await client.POST('/v1/albums', { body: { album_id: albumId } })
    expectTypeOf(provisioned.data).toEqualTypeOf<Schemas['ProvisionAlbumResponse'] | undefined>()
    expect(provisioned.response.status).toBe(201)
    expect(provisioned.data).toMatchObject({ album_id: albumId, created: true })

    const listed = await client.GET('/v1/albums')
    expect(listed.data?.albums.map((album) => album.album_id)).toEqual([albumId])

    // Query parameters with defaults may be left out.
    const feed = await client.GET('/v1/albums/{album_id}/feed', { params: { path: { album_id: albumId } } })
    expect(feed.data).toEqual({ entries: [], next_after: 0 })

    // A request header the document declares, and a CBOR body (typed as a string by the
    // generator, which has no byte type: the bytes pass through a serializer of one's own).
    const identity = IdentityKey.generate()
    const directory = encode({ directory_version: 1 })
    const published = await client.POST('/v1/auth/devices/directory', {
      params: { header: { 'X-Service-Identity-Key': identity.publicKeyBase64 } },
      headers: { 'content-type': 'application/cbor' },
      body: directory as unknown as string,
      bodySerializer: (body) => body,
    })
    expect(published.data).toEqual({ directory_version: 1 })

    const profile = await client.GET('/v1/profile')
    const userId = profile.data!.user_id
    const path = { user_id: userId }
    const fetched = await client.GET('/v1/auth/devices/directory/{user_id}', { params: { path }, parseAs: 'arrayBuffer' })
    expect(fetched.response.status).toBe(200)
    expect(Buffer.from(fetched.data!)).toEqual(Buffer.from(directory))
    const etag = fetched.response.headers.get('etag')!
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/)

    const revalidated = await client.GET('/v1/auth/devices/directory/{user_id}', {
      params: { path, header: { 'If-None-Match': etag } },
      parseAs: 'arrayBuffer',
    })
    expect(revalidated.response.status).toBe(304)
    expect(revalidated.response.headers.get('etag')).toBe(etag)

    // An extended problem: the 409 of a stale directory version carries submitted and stored.
    const stale = await client.POST('/v1/auth/devices/directory', {
      params: { header: { 'X-Service-Identity-Key': identity.publicKeyBase64 } },
      headers: { 'content-type': 'application/cbor' },
      body: directory as unknown as string,
      bodySerializer: (body) => body,
    })
    expect(stale.response.status).toBe(409)
    const conflict = stale.error as Schemas['DirectoryConflictProblem']
    expect(conflict).toMatchObject({ code: 'error.directory.version_conflict', submitted: 1, stored: 1 })

    // Without the bearer: 401 with its WWW-Authenticate challenge.
    const anonymous = createClient<paths>({ baseUrl: server.url })
    const refused = await anonymous.GET('/v1/albums')
    expect(refused.response.status).toBe(401)
    expect(refused.error?.code).toBe('error.auth.unauthenticated')
    expect(refused.response.headers.get('www-authenticate')).toBe('Bearer realm="coffer"')
  })
})
