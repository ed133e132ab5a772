import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { BlobStoreUnavailableError } from '../../blob-store/port.ts'
import { NoContent, timestamp } from '../../contract/common.ts'
import { OpenUploadRequest, UploadBlobParams, UploadIdParams, UploadSessionResponse } from '../../contract/albums.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import { requireCaller } from '../../http/bearer.ts'
import { logClientAbort } from '../../http/logging.ts'
import { storageFault } from '../../http/problem.ts'
import { JSON_MEDIA, OCTET_MEDIA, noContent, operation, type App } from '../../http/route.ts'
import {
  abortUploadSession,
  openUploadSession,
  putBlob,
  putBlobPart,
  uploadSessionStatus,
  UPLOAD_PART_MIN_BYTES,
  type PartRange,
  type SessionView,
} from './uploads.service.ts'

const tags = ['Uploads']

function sessionResponse(view: SessionView) {
  return {
    upload_id: view.session.uploadId,
    album_id: view.session.albumId,
    expires_at: timestamp(view.session.expiresAt),
    blobs: view.session.blobs.map((blob) => ({
      hash: blob.hash,
      role: blob.role,
      size: blob.size,
      present: view.present.has(blob.hash),
      received: view.received.get(blob.hash) ?? 0,
    })),
  }
}

const malformed = (detail: string) => new AppError('error.request.malformed', detail)

/** `Content-Range: bytes a-b/n` of one part (decision 0034). */
function parseContentRange(header: string): PartRange {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header.trim())
  const [start, end, total] = (match ?? []).slice(1).map(Number)
  if (start === undefined || end === undefined || total === undefined || ![start, end, total].every(Number.isSafeInteger)) {
    throw malformed('Content-Range must be bytes <first>-<last>/<size>')
  }
  if (end < start || end >= total) throw malformed('Content-Range must name bytes first to last within the size, first <= last < size')
  return { start, end, total }
}

/**
 * The SHA-256 (hex) a `Content-Digest` or `Repr-Digest` (RFC 9530) names, the header absent:
 * undefined; other algorithms are ignored.
 */
function parseDigest(name: 'Content-Digest' | 'Repr-Digest', header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  // A dictionary of structured fields; a byte sequence is :base64: (RFC 8941).
  const members = [header]
    .flat()
    .join(',')
    .split(',')
    .map((member) => member.trim().split(';')[0]?.trim() ?? '')
  const sha256 = members.filter((member) => member.toLowerCase().startsWith('sha-256=')).at(-1)
  if (sha256 === undefined) throw malformed(`${name} must name a sha-256`)
  const value = /^:([A-Za-z0-9+/]{43}=):$/.exec(sha256.slice('sha-256='.length))?.[1]
  const digest = value === undefined ? undefined : Buffer.from(value, 'base64')
  if (digest === undefined || digest.length !== 32 || digest.toString('base64') !== value) throw malformed(`${name} sha-256 must be :<base64 of 32 bytes>:`)
  return digest.toString('hex')
}

export function uploadsRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'POST',
    url: '/v1/upload',
    ...operation({
      operationId: 'openUploadSession',
      summary: 'Open an upload session for one bundle; `present` marks the bytes the server already holds for you',
      description:
        'Refused with 507 when the account already has MAX_OPEN_UPLOADS open sessions, or when the blobs it would add (declared, neither stored nor declared already) would take its stored plus declared bytes above ACCOUNT_QUOTA_BYTES; nothing is stored then.',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      body: OpenUploadRequest,
      responses: { 201: UploadSessionResponse },
      described: { 201: 'The upload session is open; send the bytes of each blob not `present`' },
      errors: [
        'error.account.suspended',
        'error.not_found',
        'error.member.read_only',
        'error.directory.required',
        'error.upgrade.in_flight',
        'error.protocol.out_of_range',
        'error.quota.exceeded',
        'error.quota.too_many_uploads',
      ],
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
        summary: 'Send one declared blob’s bytes, whole or in parts; checked against its hash and size while streaming',
        description: `Bytes whose SHA-256 or size differ from the declaration are not kept (422). A blob already stored answers 204 at once (with Upload-Offset: its size when Content-Range is sent). Fsynced before the answer.

With Content-Range (\`bytes a-b/n\`; malformed, or a Content-Digest without a well-formed sha-256: 400) the body is one part of the blob (decision 0034), sent in order: its first byte must be the blob's \`received\` (409 \`error.upload.offset_mismatch\` with \`received\` and Upload-Offset otherwise, also to the loser of two parts racing for one offset); a part that does not end the blob must be at least ${UPLOAD_PART_MIN_BYTES} bytes (UPLOAD_PART_MIN_BYTES; 422 \`error.request.invalid\`); Content-Length, when sent, must be its length and Content-Digest (sha-256), when sent, its SHA-256 (422 \`error.upload.hash_mismatch\`, the part not kept); a size in Content-Range other than the declared one is 422 \`error.upload.hash_mismatch\`. A part that does not end the blob is kept, fsynced, and answers 204 with Upload-Offset its end + 1. The part that ends the blob stores the blob from the parts and itself, checked against the declared hash and size: a mismatch is 422 \`error.upload.hash_mismatch\` and drops every part of the blob (\`received\` goes back to 0); stored, it answers 204 with Upload-Offset the size. A store that fails (503) keeps nothing of the last part: send it again.

A blob named at its last part (decision 0034): the session may declare a blob under a provisional name (a random 64-hex, also its \`ciphertext_hash\` when it is the original) and its parts be sent to that name; the part that ends the blob then carries \`Repr-Digest: sha-256=:<base64>:\` (RFC 9530), the SHA-256 H of the whole blob (malformed or without sha-256: 400). H other than the URL's hash: refused before the body is read with 422 \`error.request.invalid\` when the session declares H already (the parts stay); else the blob is stored under H, checked against H and the declared size (422 \`error.upload.hash_mismatch\` drops every part), and the declaration (and the session's ciphertext_hash) is renamed to H in the transaction that records the stored blob; 204 with Upload-Offset and Repr-Digest echoing H. The provisional name is then no longer declared (404). H equal to the URL's hash changes nothing. Repr-Digest on a part that does not end the blob, or without Content-Range, is ignored.`,
        tags,
        auth: 'bearer',
        accepts: OCTET_MEDIA,
        params: UploadBlobParams,
        reads: ['Content-Range', 'Content-Digest', 'Repr-Digest'],
        responses: { 204: NoContent },
        described: {
          204: 'The bytes are stored and durable (or already were); with Content-Range, Upload-Offset says how many bytes of the blob the server now holds',
        },
        errors: [
          'error.account.suspended',
          'error.not_found',
          'error.upload.offset_mismatch',
          'error.upload.hash_mismatch',
          'error.storage.full',
          'error.storage.failing',
        ],
      }),
      handler: async (request, reply) => {
        const length = request.headers['content-length']
        const announcedLength = length === undefined ? undefined : Number(length)
        const contentRange = request.headers['content-range']
        const bytes = request.body as AsyncIterable<Uint8Array>
        const { upload_id: uploadId, hash } = request.params
        try {
          if (contentRange === undefined) {
            await putBlob(deps, requireCaller(request), uploadId, hash, bytes, announcedLength)
          } else {
            const range = parseContentRange(contentRange)
            const sha256 = parseDigest('Content-Digest', request.headers['content-digest'])
            // The whole blob's digest, read on the part that ends it only (decision 0034).
            const named = range.end === range.total - 1 ? parseDigest('Repr-Digest', request.headers['repr-digest']) : undefined
            const stored = await putBlobPart(deps, requireCaller(request), uploadId, hash, range, bytes, { announcedLength, sha256, named })
            reply.header('upload-offset', String(stored.received))
            if (named !== undefined) reply.header('repr-digest', `sha-256=:${Buffer.from(stored.hash, 'hex').toString('base64')}:`)
          }
        } catch (error) {
          if (error instanceof AppError && error.code === 'error.upload.offset_mismatch') reply.header('upload-offset', String(error.extensions.received))
          // The store stops reading the request when it fails, so a destroyed request alone does
          // not mean the client went away: a full or failing disk, or a bucket out of reach, is
          // told apart first.
          const storeFailed = error instanceof AppError || error instanceof BlobStoreUnavailableError || storageFault(error as Error) !== null
          if (request.raw.destroyed && !storeFailed) {
            logClientAbort(request.log, request.raw, { cause: (error as Error & { code?: string }).code ?? (error as Error).name })
            throw new AppError('error.request.malformed', 'The upload was interrupted; nothing was kept')
          }
          throw error
        }
        return noContent(reply)
      },
    })
  })
}
