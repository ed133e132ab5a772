import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { BlobStoreUnavailableError } from '../../blob-store/port.ts'
import { NoContent, timestamp } from '../../contract/common.ts'
import { OpenUploadRequest, UploadBlobParams, UploadIdParams, UploadSessionResponse } from '../../contract/albums.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import { requireCaller } from '../../http/bearer.ts'
import { storageFault } from '../../http/problem.ts'
import { JSON_MEDIA, OCTET_MEDIA, noContent, operation, type App } from '../../http/route.ts'
import { abortUploadSession, openUploadSession, putBlob, uploadSessionStatus, type SessionView } from './uploads.service.ts'

const tags = ['Uploads']

function sessionResponse(view: SessionView) {
  return {
    upload_id: view.session.uploadId,
    album_id: view.session.albumId,
    expires_at: timestamp(view.session.expiresAt),
    blobs: view.session.blobs.map((blob) => ({ hash: blob.hash, role: blob.role, size: blob.size, present: view.present.has(blob.hash) })),
  }
}

export function uploadsRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'POST',
    url: '/v1/upload',
    ...operation({
      operationId: 'openUploadSession',
      summary: 'Open an upload session for one bundle; `present` marks the bytes the server already holds for you',
      description: 'Refused with 507 when the account already has MAX_OPEN_UPLOADS open sessions, or when the blobs it would add (declared, neither stored nor declared already) would take its stored plus declared bytes above ACCOUNT_QUOTA_BYTES; nothing is stored then.',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      body: OpenUploadRequest,
      responses: { 201: UploadSessionResponse },
      described: { 201: 'The upload session is open; send the bytes of each blob not `present`' },
      errors: ['error.account.suspended', 'error.not_found', 'error.directory.required', 'error.upgrade.in_flight', 'error.protocol.out_of_range', 'error.quota.exceeded', 'error.quota.too_many_uploads'],
    }),
    handler: async (request, reply) => reply.code(201).send(sessionResponse(await openUploadSession(deps, requireCaller(request), request.body))),
  })

  app.route({
    method: 'GET',
    url: '/v1/upload/:upload_id',
    ...operation({
      operationId: 'uploadSessionStatus',
      summary: 'An upload session and which of its blobs are stored',
      tags,
      auth: 'bearer',
      params: UploadIdParams,
      responses: { 200: UploadSessionResponse },
      described: { 200: 'The upload session and which of its blobs are stored' },
      errors: ['error.not_found'],
    }),
    handler: async (request) => sessionResponse(await uploadSessionStatus(deps, requireCaller(request), request.params.upload_id)),
  })

  app.route({
    method: 'DELETE',
    url: '/v1/upload/:upload_id',
    ...operation({
      operationId: 'abortUploadSession',
      summary: 'Abort an upload session; it no longer counts in the album’s in_flight',
      tags,
      auth: 'bearer',
      params: UploadIdParams,
      responses: { 204: NoContent },
      described: { 204: 'The upload session is aborted' },
      errors: ['error.not_found'],
    }),
    handler: async (request, reply) => {
      await abortUploadSession(deps, requireCaller(request), request.params.upload_id)
      return noContent(reply)
    },
  })

  // Blob bytes are streamed to the store, never buffered: this scope hands the handler the
  // raw request stream instead of the buffering octet-stream parser of the rest of the API.
  app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>()
    scope.removeContentTypeParser('application/octet-stream')
    scope.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload))
    // An answer given before the whole body arrived (a refusal, or bytes already held) ends
    // the connection rather than reading up to a gigabyte only to discard it.
    scope.addHook('onSend', async (request, reply) => {
      if (!request.raw.complete) reply.header('connection', 'close')
    })
    scope.route({
      method: 'PUT',
      url: '/v1/upload/:upload_id/blobs/:hash',
      ...operation({
        operationId: 'putBlob',
        summary: 'Send one declared blob’s bytes; checked against its hash and size while streaming',
        description: 'Bytes whose SHA-256 or size differ from the declaration are not kept (422). A blob already stored answers 204 at once. Fsynced before the answer.',
        tags,
        auth: 'bearer',
        accepts: OCTET_MEDIA,
        params: UploadBlobParams,
        responses: { 204: NoContent },
        described: { 204: 'The bytes are stored and durable (or already were)' },
        errors: ['error.account.suspended', 'error.not_found', 'error.upload.hash_mismatch', 'error.storage.full', 'error.storage.failing'],
      }),
      handler: async (request, reply) => {
        const length = request.headers['content-length']
        try {
          await putBlob(deps, requireCaller(request), request.params.upload_id, request.params.hash, request.body as AsyncIterable<Uint8Array>, length === undefined ? undefined : Number(length))
        } catch (error) {
          // The store stops reading the request when it fails, so a destroyed request alone does
          // not mean the client went away: a full or failing disk, or a bucket out of reach, is
          // told apart first.
          const storeFailed = error instanceof AppError || error instanceof BlobStoreUnavailableError || storageFault(error as Error) !== null
          if (request.raw.destroyed && !storeFailed) {
            throw new AppError('error.request.malformed', 'The upload was interrupted; nothing was kept')
          }
          throw error
        }
        return noContent(reply)
      },
    })
  })
}
