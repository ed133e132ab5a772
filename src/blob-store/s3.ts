// The blob store on an S3-compatible bucket (AWS S3, MinIO, Garage, Ceph RGW, R2, B2). Layout
// under the configured prefix: blobs/<64 hex> for blobs, parts/<upload id>/<64 hex>/<part name>
// for the parts of blobs uploaded in pieces (decision 0034), staging/<writer name> for writes in
// progress (writers.ts). A put streams to its staging object (multipart above PART_SIZE),
// hashing on the way; only when the SHA-256 and the size match is the object copied, on the
// bucket's side, to its content address, stamped with the publish time, and the staging object
// deleted. A blob is therefore either absent or complete under its address; what a failure
// leaves in staging/ the next cleanup removes. Every failure to reach the bucket, or a 5xx from
// it, is a BlobStoreUnavailableError (503 at the edge).
import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import {
  AbortMultipartUploadCommand,
  ChecksumAlgorithm,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
  type CompletedPart,
  type HeadObjectCommandOutput,
  type ListMultipartUploadsCommandOutput,
  type _Object,
} from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import type { BucketSettings } from '../config.ts'
import { BLOB_NAME, BlobStoreUnavailableError, partSegments, UPLOAD_NAME, type BlobStore, type ByteRange, type PutOutcome } from './port.ts'
import { collectingEvery, countedReads, sha256Of, trackWrites } from './writers.ts'

/**
 * Bytes per multipart part, and parts in flight at once: a put holds at most
 * (PARTS_IN_FLIGHT + 1) * PART_SIZE, whatever the blob's size. A blob of PART_SIZE or less is one PUT.
 * Exported for the upload benchmark's ceiling, which uploads with the same settings.
 */
export const PART_SIZE = 8 * 1024 * 1024
export const PARTS_IN_FLIGHT = 2
/** User metadata holding the publish time in wall-clock ms (LastModified has whole seconds only). */
const PUBLISHED_AT = 'published-at'

export interface S3BlobStore extends BlobStore {
  readonly client: S3Client
  readonly bucket: string
  /** The object key of a blob (tests and the operator's tools look at objects). */
  keyOf(hash: string): string
  /** Where writes in progress are staged. */
  readonly stagingPrefix: string
  /** Where the parts of blobs uploaded in pieces are. */
  readonly partsPrefix: string
}

export interface S3StoreOptions {
  /** Counts bytes read (the blob_bytes_read metric). */
  readonly onRead?: (bytes: number) => void
}

function notFound(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)
}

function unavailable(error: unknown): BlobStoreUnavailableError {
  if (error instanceof BlobStoreUnavailableError) return error
  return new BlobStoreUnavailableError(error instanceof Error ? error : new Error(String(error)))
}

/** `work`, with every failure of the bucket as a BlobStoreUnavailableError. */
async function reaching<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw unavailable(error)
  }
}

/** When the blob was published: the stamp a put leaves, else LastModified rounded up to its second. */
function publishedAt(head: HeadObjectCommandOutput): number {
  const stamped = Number(head.Metadata?.[PUBLISHED_AT])
  if (Number.isFinite(stamped)) return stamped
  return (head.LastModified?.getTime() ?? Number.POSITIVE_INFINITY) + 999
}

export function openS3BlobStore(settings: BucketSettings, options: S3StoreOptions = {}): S3BlobStore {
  const { bucket, prefix } = settings
  const onRead = options.onRead ?? (() => {})
  const client = new S3Client({
    region: settings.region,
    ...(settings.endpoint === null ? {} : { endpoint: settings.endpoint }),
    forcePathStyle: settings.forcePathStyle,
    // Credentials: the AWS SDK's own chain (environment, profiles, instance and pod roles).
    // An endpoint that does not answer fails a request in seconds, not minutes (the SDK retries twice).
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
  })
  const blobsPrefix = `${prefix}blobs/`
  const stagingPrefix = `${prefix}staging/`
  const partsPrefix = `${prefix}parts/`
  const partKey = (uploadId: string, hash: string, name: string): string => partsPrefix + partSegments(uploadId, hash, name).join('/')
  const writes = trackWrites()
  const keyOf = (hash: string): string => {
    if (!BLOB_NAME.test(hash)) throw new Error(`not a blob name: ${hash}`)
    return blobsPrefix + hash
  }
  const head = async (key: string): Promise<HeadObjectCommandOutput | null> => {
    try {
      return await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))
    } catch (error) {
      if (notFound(error)) return null
      throw unavailable(error)
    }
  }

  /**
   * Sends `source` (at most `size` bytes) to `key`: one PUT when it fits in a part, else a
   * multipart upload with PARTS_IN_FLIGHT parts on the way. The parts are assembled in buffers
   * reused from part to part: a fresh buffer per part (as lib-storage's Upload makes) outlives
   * the young generation while it is sent, and V8 frees such buffers only in a full collection,
   * once some 64 MiB of them have piled up.
   */
  async function send(key: string, size: number, source: AsyncIterable<Uint8Array>): Promise<void> {
    const object = { Bucket: bucket, Key: key }
    // As lib-storage does: parts carry a CRC32 unless the client computes checksums only when required.
    const checksum = (await client.config.requestChecksumCalculation()) === 'WHEN_SUPPORTED' ? ChecksumAlgorithm.CRC32 : undefined
    const spare: Buffer[] = []
    const sending: Array<Promise<void>> = []
    const parts: CompletedPart[] = []
    let failure: { readonly error: unknown } | undefined
    let uploadId: string | undefined
    let part: Buffer = Buffer.allocUnsafeSlow(Math.min(size, PART_SIZE))
    let filled = 0

    /** Starts sending the first `length` bytes of `buffer` as the next part; the buffer is spare again once they are sent. */
    async function sendPart(buffer: Buffer, length: number): Promise<void> {
      uploadId ??= (await client.send(new CreateMultipartUploadCommand({ ...object, ContentType: 'application/octet-stream', ChecksumAlgorithm: checksum })))
        .UploadId
      const PartNumber = parts.length + 1
      parts.push({ PartNumber })
      const sent = client.send(
        new UploadPartCommand({ ...object, UploadId: uploadId, PartNumber, Body: buffer.subarray(0, length), ChecksumAlgorithm: checksum }),
      )
      // Never rejects: the failure is kept, and the put stops reading and aborts.
      sending.push(
        sent.then(
          (answer) => {
            parts[PartNumber - 1] = { PartNumber, ETag: answer.ETag, ChecksumCRC32: answer.ChecksumCRC32 }
            spare.push(buffer)
          },
          (error: unknown) => {
            failure ??= { error }
          },
        ),
      )
    }

    try {
      for await (const chunk of source) {
        for (let offset = 0; offset < chunk.length; ) {
          // A full part goes only when more bytes come: a blob of exactly PART_SIZE is one PUT.
          if (filled === part.length) {
            if (sending.length === PARTS_IN_FLIGHT) await sending.shift()
            if (failure !== undefined) throw failure.error
            await sendPart(part, filled)
            part = spare.pop() ?? Buffer.allocUnsafeSlow(PART_SIZE)
            filled = 0
          }
          const copied = Math.min(chunk.length - offset, part.length - filled)
          part.set(chunk.subarray(offset, offset + copied), filled)
          filled += copied
          offset += copied
        }
      }
      if (uploadId === undefined) {
        await client.send(new PutObjectCommand({ ...object, Body: part.subarray(0, filled), ContentType: 'application/octet-stream' }))
        return
      }
      await sendPart(part, filled)
      await Promise.all(sending)
      if (failure !== undefined) throw failure.error
      await client.send(new CompleteMultipartUploadCommand({ ...object, UploadId: uploadId, MultipartUpload: { Parts: parts } }))
    } catch (error) {
      await Promise.all(sending)
      // An upload that cannot be aborted now is one the next cleanup aborts (abortLeftUploads).
      if (uploadId !== undefined) await client.send(new AbortMultipartUploadCommand({ ...object, UploadId: uploadId })).catch(() => {})
      throw error
    }
  }

  /** Streams `source` to `key`, hashing and counting; the outcome compares them with the declaration (`hash` undefined: the size only). */
  async function stage(key: string, hash: string | undefined, size: number, source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<PutOutcome> {
    const digest = createHash('sha256')
    const collect = collectingEvery()
    let received = 0
    let overflow = false
    let sourceFailure: { readonly error: unknown } | undefined
    async function* checked(): AsyncGenerator<Uint8Array> {
      // A failing upload destroys this stream, which throws its error in at the yield: that is
      // the bucket's failure, not the source's.
      let uploadFailed = false
      try {
        for await (const chunk of source) {
          received += chunk.length
          if (received > size) {
            overflow = true
            throw new Error('more bytes than declared')
          }
          digest.update(chunk)
          collect(chunk.length)
          try {
            yield chunk
          } catch (error) {
            uploadFailed = true
            throw error
          }
        }
      } catch (error) {
        if (!overflow && !uploadFailed) sourceFailure = { error }
        throw error
      }
    }
    try {
      await send(key, size, checked())
    } catch (error) {
      if (overflow) return { kind: 'mismatch', detail: `more than the declared ${size} bytes arrived` }
      // The client's stream broke (a cut connection): its error, not the bucket's.
      if (sourceFailure !== undefined) throw sourceFailure.error
      throw unavailable(error)
    }
    if (received !== size) return { kind: 'mismatch', detail: `${received} bytes arrived, ${size} were declared` }
    if (hash !== undefined && digest.digest('hex') !== hash) return { kind: 'mismatch', detail: 'the SHA-256 of the bytes differs from the declared hash' }
    return { kind: 'stored' }
  }

  /**
   * Stages `source`, and once it matches (`expected`: the SHA-256 to match, if any) copies it on the
   * bucket's side to `final`, stamped with the publish time.
   */
  async function publish(
    final: string,
    expected: string | undefined,
    size: number,
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<PutOutcome> {
    const name = writes.begin()
    const staging = stagingPrefix + name
    try {
      const outcome = await stage(staging, expected, size, source)
      if (outcome.kind !== 'stored') return outcome
      // Same name, same bytes: copying over an existing copy is harmless. The stamp is the
      // publish time: a collector that decided before it leaves the blob alone (remove).
      await reaching(() =>
        client.send(
          new CopyObjectCommand({
            Bucket: bucket,
            Key: final,
            // URL-encoded, as S3 requires (a prefix may hold %, +, spaces).
            CopySource: `${bucket}/${staging.split('/').map(encodeURIComponent).join('/')}`,
            MetadataDirective: 'REPLACE',
            Metadata: { [PUBLISHED_AT]: String(Date.now()) },
            ContentType: 'application/octet-stream',
          }),
        ),
      )
      return outcome
    } finally {
      // One that cannot be removed now (the bucket went away) is a leftover the next cleanup removes.
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: staging })).catch(() => {})
      writes.done(name)
    }
  }

  /** The object at `key` (a blob's, or a part's), or one range of it. */
  async function openObject(key: string, range?: ByteRange): Promise<Readable> {
    let body: Readable
    try {
      const answer = await client.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end}` }) }),
      )
      body = answer.Body as Readable
    } catch (error) {
      if (notFound(error)) throw new Error(`${key} is not in the bucket`, { cause: error })
      throw unavailable(error)
    }
    return countedReads(body, onRead)
  }

  const openBlob = (hash: string, range?: ByteRange): Promise<Readable> => openObject(keyOf(hash), range)

  return {
    kind: 's3',
    location: `s3://${bucket}/${prefix}`,
    client,
    bucket,
    keyOf,
    stagingPrefix,
    partsPrefix,

    put: (hash, size, source) => publish(keyOf(hash), hash, size, source),

    putPart: async (uploadId, hash, name, size, source, sha256) => publish(partKey(uploadId, hash, name), sha256, size, source),

    openPart: async (uploadId, hash, name) => openObject(partKey(uploadId, hash, name)),

    async removePart(uploadId, hash, name) {
      await reaching(() => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: partKey(uploadId, hash, name) })))
    },

    async removeParts(uploadId, hash) {
      for await (const object of objectsUnder(`${partsPrefix}${partSegments(uploadId, hash).join('/')}/`)) {
        await reaching(() => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key })))
      }
    },

    // Every part's key, in key order (so an upload's parts follow each other): parts are those of
    // uploads in flight, few; and a listing by delimiter is one some S3-compatible stores get wrong.
    async *partUploads() {
      let last = ''
      for await (const object of objectsUnder(partsPrefix)) {
        const uploadId = (object.Key ?? '').slice(partsPrefix.length).split('/')[0] ?? ''
        if (uploadId !== last && UPLOAD_NAME.test(uploadId)) yield uploadId
        last = uploadId
      }
    },

    async size(hash) {
      return (await head(keyOf(hash)))?.ContentLength ?? null
    },

    open: openBlob,

    async sha256(hash) {
      return sha256Of(await openBlob(hash))
    },

    async remove(hash, unlessModifiedSince) {
      const key = keyOf(hash)
      const found = await head(key)
      if (found === null) return false
      // A blob published again after the caller decided to remove it (a new upload of the same bytes) is kept.
      if (unlessModifiedSince !== undefined && publishedAt(found) > unlessModifiedSince) return false
      await reaching(() => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })))
      return true
    },

    async *list() {
      for await (const object of objectsUnder(blobsPrefix)) {
        const name = object.Key?.slice(blobsPrefix.length) ?? ''
        if (BLOB_NAME.test(name)) yield name
      }
    },

    async cleanLeftovers() {
      let removed = 0
      for await (const object of objectsUnder(stagingPrefix)) {
        const key = object.Key ?? ''
        if (!writes.leftBehind(key.slice(stagingPrefix.length), object.LastModified?.getTime() ?? 0)) continue
        // A put of this process that finished since the listing removed its staging object before
        // it stopped counting as in progress: only one still there is left behind.
        if ((await head(key)) === null) continue
        await reaching(() => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })))
        removed++
      }
      return removed + (await abortLeftUploads())
    },

    async ping() {
      await reaching(() => client.send(new HeadBucketCommand({ Bucket: bucket })))
    },

    presignedDownload: (hash, expiresInS) =>
      reaching(() => getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: keyOf(hash) }), { expiresIn: expiresInS })),
  }

  /** Every object under `prefix`, in key order, a page at a time. */
  async function* objectsUnder(prefix: string): AsyncGenerator<_Object> {
    let token: string | undefined
    do {
      const page = await reaching(() => client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token })))
      yield* page.Contents ?? []
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined
    } while (token !== undefined)
  }

  /** Multipart uploads a failed put could not abort (their parts are billed until aborted). */
  async function abortLeftUploads(): Promise<number> {
    let aborted = 0
    let keyMarker: string | undefined
    let uploadIdMarker: string | undefined
    for (;;) {
      let page: ListMultipartUploadsCommandOutput
      try {
        page = await client.send(
          new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: stagingPrefix, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
        )
      } catch (error) {
        // Some S3-compatible stores do not list multipart uploads; their lifecycle rule aborts them.
        if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 501) return aborted
        throw unavailable(error)
      }
      for (const upload of page.Uploads ?? []) {
        const key = upload.Key ?? ''
        if (!writes.leftBehind(key.slice(stagingPrefix.length), upload.Initiated?.getTime() ?? 0)) continue
        await reaching(() => client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: upload.UploadId })))
        aborted++
      }
      if (page.IsTruncated !== true) return aborted
      keyMarker = page.NextKeyMarker
      uploadIdMarker = page.NextUploadIdMarker
    }
  }
}
