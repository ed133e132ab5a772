import { PublishDirectoryResponse, UserIdParams, IDENTITY_KEY_HEADER } from '../../contract/devices.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { noneMatchHits } from '../../http/range.ts'
import { CBOR_MEDIA, operation, type App } from '../../http/route.ts'
import { DIRECTORY_MAX_BYTES, fetchDirectory, publishDirectory } from './directory.service.ts'

const tags = ['Devices']

export function directoryRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'POST',
    url: '/v1/auth/devices/directory',
    ...operation({
      operationId: 'publishDirectory',
      summary: 'Publish the signed device directory (CBOR, stored exactly as sent)',
      description: `Header \`X-Service-Identity-Key\`: standard base64 of the account's 1984-byte hybrid public key (Ed25519 | ML-DSA-65); the first publish binds it, and needs a recent password proof (sign-in or reauthenticate within FRESHNESS_WINDOW_S, else 403 error.auth.reauthentication_required). The body is one CBOR item whose top-level map holds an unsigned \`directory_version\`, which must exceed the stored one (409 otherwise, with \`submitted\` and \`stored\`). At most 256 KiB.`,
      tags,
      auth: 'bearer',
      accepts: CBOR_MEDIA,
      bodyLimit: DIRECTORY_MAX_BYTES,
      reads: ['X-Service-Identity-Key'],
      responses: { 200: PublishDirectoryResponse },
      described: { 200: 'The directory is stored (and the identity key bound, on a first publish)' },
      errors: [
        'error.account.suspended',
        'error.directory.malformed',
        'error.directory.identity_key_invalid',
        'error.directory.identity_key_mismatch',
        'error.directory.version_conflict',
        'error.auth.reauthentication_required',
      ],
    }),
    handler: async (request) => {
      const header = request.headers[IDENTITY_KEY_HEADER]
      const version = await publishDirectory(deps, requireCaller(request), typeof header === 'string' ? header : undefined, request.body as Buffer)
      return { directory_version: version }
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/auth/devices/directory/:user_id',
    ...operation({
      operationId: 'fetchDirectory',
      summary: 'Fetch a user’s signed device directory, byte for byte',
      description: 'Answers `application/cbor` with a strong `ETag`; `If-None-Match` with that tag answers 304.',
      tags,
      auth: 'bearer',
      params: UserIdParams,
      responses: {},
      described: {},
      binaryResponse: { status: 200, mediaType: 'application/cbor', description: 'The directory exactly as published' },
      errors: ['error.not_found'],
      cache: 'private-revalidate',
      reads: ['If-None-Match'],
    }),
    handler: async (request, reply) => {
      const directory = await fetchDirectory(deps, request.params.user_id)
      reply.header('etag', directory.etag)
      if (noneMatchHits(request.headers['if-none-match'], directory.etag)) return reply.code(304).send()
      return reply.type('application/cbor').send(directory.body)
    },
  })
}
