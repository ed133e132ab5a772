import type { FastifyReply, FastifyRequest } from 'fastify'
import { Readable } from 'node:stream'
import type { ByteRange } from '../../blob-store/port.ts'
import { BlobBatchRequest, BlobParams } from '../../contract/albums.ts'
import { BLOB_BATCH_MAX_HASHES } from '../../contract/constants.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import { requireCaller } from '../../http/bearer.ts'
import { noneMatchHits, parseRange } from '../../http/range.ts'
import { JSON_MEDIA, operation, type App } from '../../http/route.ts'
import { ProcessBatchSlots, takeBatchSlot } from './batch-slots.ts'
import { accountBlobs, downloadableBlob, downloadBlobBatch, type BlobFinder } from './blobs.service.ts'

/** How long a presigned download URL works (BLOB_DOWNLOAD=redirect). */
const PRESIGNED_DOWNLOAD_TTL_S = 300

/** Answers the process's batch slots, which a link's batch downloads take too. */
export function blobsRoutes(app: App, deps: Deps): ProcessBatchSlots {
  const batchSlots = new ProcessBatchSlots(deps.config.batchDownloads.perProcess)
  app.route({
    method: 'GET',
    url: '/v1/blobs/:hash',
    ...operation({
      operationId: 'downloadBlob',
      summary: 'Download a blob a live asset of yours references (Range requests supported)',
      description:
        '`ETag` is the quoted hash. `Range: bytes=a-b` answers 206 with only that range read from storage; an unsatisfiable range answers 416. ' +
        'A server with `BLOB_DOWNLOAD=redirect` answers 307 instead, after the same checks, to a presigned URL of its bucket valid for ' +
        `${PRESIGNED_DOWNLOAD_TTL_S} seconds: follow it without Authorization (fetch and curl drop it on the way to another host); Range goes along. ` +
        'A provenance blob (the signed manifest, which the database holds) is always answered here.',
      tags: ['Albums'],
      auth: 'bearer',
      params: BlobParams,
      responses: {},
      described: {},
      binaryResponse: { status: 200, mediaType: 'application/octet-stream', description: 'The blob bytes, exactly as uploaded' },
      errors: ['error.not_found', 'error.request.range_not_satisfiable', 'error.moderation.taken_down'],
      cache: 'private-revalidate',
      reads: ['Range', 'If-None-Match'],
      redirect: 'The bytes are at Location (`BLOB_DOWNLOAD=redirect`): request them there, with the same Range if any, without Authorization',
    }),
    handler: (request, reply) => sendBlob(deps, request.params.hash, request, reply, accountBlobs(deps, requireCaller(request))),
  })

  app.route({
    method: 'POST',
    url: '/v1/blobs/batch',
    ...operation({
      operationId: 'downloadBlobBatch',
      summary: 'Download many blobs of your live assets in one request (a screen of thumbnails)',
      description:
        `Up to ${BLOB_BATCH_MAX_HASHES} distinct hashes, each answered exactly as \`GET /v1/blobs/{hash}\` would decide it, in one CBOR answer. ` +
        'A hash no live asset of yours references answers 404 `error.not_found` whoever else stores it; one whose assets were taken down answers 451 `error.moderation.taken_down`. ' +
        'Of the blobs it may serve, the batch carries only as many bytes as `BLOB_BATCH_MAX_BYTES` (8 MiB by default) holds, in request order; each blob past it answers 413 `error.request.too_large`: ask for it in a next batch, or alone with `GET /v1/blobs/{hash}` when it is larger than the whole budget. ' +
        'The bytes always come through this server, also with `BLOB_DOWNLOAD=redirect`. ' +
        'An account has at most `BATCH_DOWNLOADS_PER_ACCOUNT` (4 by default) batches in flight on all instances together, the next answers 429 `error.batch.too_many`; ' +
        'a server at most `BATCH_DOWNLOADS_PER_PROCESS` (16), the next answers 503 `error.batch.server_busy`; both with `Retry-After`.',
      tags: ['Albums'],
      auth: 'bearer',
      accepts: JSON_MEDIA,
      body: BlobBatchRequest,
      errors: ['error.batch.too_many', 'error.batch.server_busy'],
      responses: {},
      described: {},
      binaryResponse: {
        status: 200,
        mediaType: 'application/cbor',
        description:
          'Canonical CBOR: an array with one map per requested hash, in request order. Served: `{"hash": text, "status": 200, "bytes": byte string}`, the bytes exactly as uploaded. ' +
          'Not served: `{"hash": text, "status": 404 | 413 | 451, "code": text}`, the catalog code a single download (or the budget) gives.',
      },
    }),
    handler: (request, reply) => {
      const caller = requireCaller(request)
      return sendBlobBatch(deps, batchSlots, request, reply, { hashes: request.body.hashes, readable: accountBlobs(deps, caller), account: caller.userId })
    },
  })
  return batchSlots
}

/**
 * Answers GET of one blob as `GET /v1/blobs/{hash}` decides it, of the blobs
 * `readable` lets the reader read: ETag, Range, If-None-Match, and the redirect mode.
 */
export async function sendBlob(deps: Deps, hash: string, request: FastifyRequest, reply: FastifyReply, readable: BlobFinder) {
  const blob = await downloadableBlob(deps, readable, hash)
  const etag = `"${hash}"`
  reply.header('etag', etag).header('accept-ranges', 'bytes').type('application/octet-stream')
  if (noneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send()
  const presign = deps.blobs.presignedDownload
  if (deps.config.blobDownload === 'redirect' && presign !== undefined && blob.inStore) {
    // The URL is a credential for a few minutes: a 307 is never cached (response-headers.ts).
    return reply
      .code(307)
      .header('location', await presign(hash, PRESIGNED_DOWNLOAD_TTL_S))
      .send()
  }
  const range = parseRange(request.headers.range, blob.size)
  if (range.kind === 'unsatisfiable') {
    reply.header('content-range', `bytes */${blob.size}`)
    throw new AppError('error.request.range_not_satisfiable', `The blob has ${blob.size} bytes`)
  }
  // Fastify answers HEAD through this handler and drains a stream body to discard it, which
  // would read the whole blob: HEAD gets an empty stream (the Content-Length set stays).
  const body = async (bytes?: ByteRange) => (request.method === 'HEAD' ? Readable.from([]) : await blob.open(bytes))
  if (range.kind === 'whole') return reply.header('content-length', blob.size).send(await body())
  const { start, end } = range.range
  return reply
    .code(206)
    .header('content-range', `bytes ${start}-${end}/${blob.size}`)
    .header('content-length', end - start + 1)
    .send(await body(range.range))
}

/**
 * Answers a batch download of `hashes` as `POST /v1/blobs/batch` decides it, of the blobs
 * `readable` lets the reader read, holding a slot of this process and, for an account, one of
 * the account's (`account`; a link's reads are bounded by its rate limits instead).
 */
export async function sendBlobBatch(
  deps: Deps,
  batchSlots: ProcessBatchSlots,
  request: FastifyRequest,
  reply: FastifyReply,
  reader: { readonly hashes: readonly string[]; readonly readable: BlobFinder; readonly account: string | null },
) {
  const release = await takeBatchSlot(deps, batchSlots, reader.account)
  // The slots are held until the answer is sent or the client goes, whichever comes first:
  // until then its bytes are in memory. A release that fails leaves the slot to its lease.
  const released = () => {
    release().catch((error: unknown) => request.log.warn({ cause: (error as Error).message }, 'batch download slot not released'))
  }
  // A client gone while the slots were being taken has closed the response already.
  if (reply.raw.closed) released()
  else reply.raw.once('close', released)
  const pieces = await downloadBlobBatch(deps, reader.readable, reader.hashes)
  const length = pieces.reduce((total, piece) => total + piece.length, 0)
  return reply.type('application/cbor').header('content-length', length).send(Readable.from(pieces))
}
