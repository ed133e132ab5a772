// Resume inside a file (decision 0034): a blob sent in parts with Content-Range, each part
// durable and recorded as it arrives, the part that ends the blob storing it from the parts in
// order; `received` tells a client where to go on; wrong offsets, digests and sizes are refused
// without keeping anything; the parts never show as blobs, and maintenance removes those of
// sessions that ended. A blob declared under a provisional name is stored and declared under the
// Repr-Digest its last part names.
import { createHash, randomBytes } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { maintain } from '../../src/features/maintenance/sweep.service.ts'
import { fsck } from '../../src/features/integrity/fsck.service.ts'
import { sha256Hex } from '../../src/sdk/client.ts'
import { raw, type Member } from '../support/actors.ts'
import { album, ciphertext, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { partFiles, storedBytes, storedHashes } from '../support/blobs.ts'
import { readRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

const MIB = 1024 * 1024
/** Three parts: two of 1 MiB, the last one shorter. */
const SIZE = 2 * MIB + 300_000

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

function bearer(member: Member): Record<string, string> {
  return { authorization: `Bearer ${member.client.tokens!.access_token}` }
}

function contentDigest(bytes: Uint8Array): string {
  return `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`
}

interface Blob {
  readonly bytes: Buffer
  readonly hash: string
}

function blobOf(size = SIZE): Blob {
  const bytes = ciphertext(size)
  return { bytes, hash: sha256Hex(bytes) }
}

async function openSession(member: Uploader, albumId: string, blob: Blob): Promise<string> {
  const opened = await member.client.openUploadSession({
    album_id: albumId,
    crypto_suite_id: 1,
    ciphertext_hash: blob.hash,
    blobs: [{ role: 'original', hash: blob.hash, size: blob.bytes.length }],
  })
  return opened.upload_id
}

/** PUT of bytes start..end (inclusive) of the blob, with Content-Range and (unless told otherwise) Content-Digest. */
function putPart(
  member: Member,
  uploadId: string,
  blob: Blob,
  start: number,
  end: number,
  headers: Record<string, string> = {},
  body: Uint8Array = blob.bytes.subarray(start, end + 1),
) {
  return raw(server, 'PUT', `/v1/upload/${uploadId}/blobs/${blob.hash}`, {
    headers: {
      ...bearer(member),
      'content-type': 'application/octet-stream',
      'content-range': `bytes ${start}-${end}/${blob.bytes.length}`,
      'content-digest': contentDigest(body),
      ...headers,
    },
    body,
  })
}

/**
 * Two PUTs of bytes start..end of the blob at the same time: both send half their body, wait until
 * both have passed the checks made before the body is read (received, the declarations), then the rest.
 */
async function racingParts(member: Member, uploadId: string, blob: Blob, start: number, end: number, headers: Record<string, string> = {}) {
  const part = blob.bytes.subarray(start, end + 1)
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const racing = () =>
    new Promise<{ status: number; offset: string | undefined; digest: string | undefined; text: string }>((resolve, reject) => {
      const req = httpRequest(
        `${server.url}/v1/upload/${uploadId}/blobs/${blob.hash}`,
        {
          method: 'PUT',
          headers: {
            ...bearer(member),
            'content-type': 'application/octet-stream',
            'content-length': String(part.length),
            'content-range': `bytes ${start}-${end}/${blob.bytes.length}`,
            'content-digest': contentDigest(part),
            ...headers,
          },
        },
        (response) => {
          let text = ''
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => (text += chunk))
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              offset: response.headers['upload-offset'] as string | undefined,
              digest: response.headers['repr-digest'] as string | undefined,
              text,
            }),
          )
        },
      )
      req.on('error', reject)
      const half = Math.floor(part.length / 2)
      req.write(part.subarray(0, half))
      void released.then(() => req.end(part.subarray(half)))
    })
  const answers = Promise.all([racing(), racing()])
  await sleep(300)
  release()
  return answers
}

async function sessionBlobs(member: Member, uploadId: string): Promise<Array<{ hash: string; present: boolean; received: number }>> {
  const answer = await raw(server, 'GET', `/v1/upload/${uploadId}`, { headers: bearer(member) })
  expect(answer.status, answer.text).toBe(200)
  return (answer.json as { blobs: Array<{ hash: string; present: boolean; received: number }> }).blobs
}

async function receivedOf(member: Member, uploadId: string, hash: string): Promise<number> {
  return (await sessionBlobs(member, uploadId)).find((blob) => blob.hash === hash)!.received
}

async function partRows(uploadId: string): Promise<number> {
  const rows = await readRows(server.database, `SELECT count(*) AS n FROM upload_parts WHERE upload_id = '${uploadId}'`)
  return Number(rows[0]!.n)
}

async function filesOf(uploadId: string): Promise<string[]> {
  return (await partFiles(server)).filter((name) => name.startsWith(`${uploadId}/`))
}

describe('a blob sent in parts', () => {
  let member: Uploader
  let albumId: string
  beforeAll(async () => {
    member = await uploader(server, 'parts')
    albumId = await album(member)
  })

  it('keeps each part, tells received after each, and the last part stores the blob: exact bytes, downloadable, parts gone', async () => {
    const blob = blobOf()
    const uploadId = await openSession(member, albumId, blob)
    expect(await sessionBlobs(member, uploadId)).toEqual([expect.objectContaining({ hash: blob.hash, present: false, received: 0 })])

    const first = await putPart(member, uploadId, blob, 0, MIB - 1)
    expect(first.status, first.text).toBe(204)
    expect(first.headers.get('upload-offset')).toBe(String(MIB))
    expect(await receivedOf(member, uploadId, blob.hash)).toBe(MIB)
    const second = await putPart(member, uploadId, blob, MIB, 2 * MIB - 1)
    expect(second.status, second.text).toBe(204)
    expect(second.headers.get('upload-offset')).toBe(String(2 * MIB))
    expect(await receivedOf(member, uploadId, blob.hash)).toBe(2 * MIB)
    expect(await filesOf(uploadId)).toHaveLength(2)
    expect(await partRows(uploadId)).toBe(2)
    // Not a blob yet, and nothing of the parts shows as one.
    expect(await storedBytes(server, blob.hash)).toBeNull()
    expect(await storedHashes(server)).not.toContain(blob.hash)

    const last = await putPart(member, uploadId, blob, 2 * MIB, SIZE - 1)
    expect(last.status, last.text).toBe(204)
    expect(last.headers.get('upload-offset')).toBe(String(SIZE))
    expect((await storedBytes(server, blob.hash))?.equals(blob.bytes)).toBe(true)
    expect(await sessionBlobs(member, uploadId)).toEqual([expect.objectContaining({ hash: blob.hash, present: true, received: SIZE })])
    expect(await filesOf(uploadId)).toEqual([])
    expect(await partRows(uploadId)).toBe(0)

    // The stored blob is the session's: the create needs nothing more sent, and it downloads.
    const applied = await member.client.uploadAsset({
      albumId,
      cryptoSuiteId: 1,
      original: blob.bytes,
      sign: (hashes) => signedManifest(member, hashes, { albumId }),
    })
    expect(applied.sent).toBe(0)
    expect(Buffer.from(await member.client.downloadBlob(blob.hash)).equals(blob.bytes)).toBe(true)
  })

  it('takes the whole blob as one range, and other digest algorithms beside sha-256', async () => {
    const blob = blobOf(5_000)
    const uploadId = await openSession(member, albumId, blob)
    const whole = await putPart(member, uploadId, blob, 0, 4_999, {
      'content-digest': `sha-512=:${createHash('sha512').update(blob.bytes).digest('base64')}:, ${contentDigest(blob.bytes)}`,
    })
    expect(whole.status, whole.text).toBe(204)
    expect(whole.headers.get('upload-offset')).toBe('5000')
    expect((await storedBytes(server, blob.hash))?.equals(blob.bytes)).toBe(true)
  })

  it('answers a part at another offset than received with 409 offset_mismatch, received and Upload-Offset, keeping nothing', async () => {
    const blob = blobOf()
    const uploadId = await openSession(member, albumId, blob)
    const ahead = await putPart(member, uploadId, blob, MIB, 2 * MIB - 1)
    expect(ahead.status, ahead.text).toBe(409)
    expect(ahead.json).toMatchObject({ code: 'error.upload.offset_mismatch', received: 0 })
    expect(ahead.headers.get('upload-offset')).toBe('0')
    expect((await putPart(member, uploadId, blob, 0, MIB - 1)).status).toBe(204)
    // A part sent again (its answer was lost) is refused: the client goes on from received.
    const again = await putPart(member, uploadId, blob, 0, MIB - 1)
    expect(again.status).toBe(409)
    expect(again.json).toMatchObject({ code: 'error.upload.offset_mismatch', received: MIB })
    expect(again.headers.get('upload-offset')).toBe(String(MIB))
    expect(await filesOf(uploadId)).toHaveLength(1)
    expect(await receivedOf(member, uploadId, blob.hash)).toBe(MIB)
  })

  it('refuses a part whose bytes differ from Content-Digest with 422, keeping nothing of it', async () => {
    const blob = blobOf()
    const uploadId = await openSession(member, albumId, blob)
    expect((await putPart(member, uploadId, blob, 0, MIB - 1)).status).toBe(204)
    const wrong = await putPart(member, uploadId, blob, MIB, 2 * MIB - 1, { 'content-digest': contentDigest(ciphertext(10)) })
    expect(wrong.status, wrong.text).toBe(422)
    expect(wrong.json?.code).toBe('error.upload.hash_mismatch')
    expect(await receivedOf(member, uploadId, blob.hash)).toBe(MIB)
    expect(await filesOf(uploadId)).toHaveLength(1)
    // The last part too: the parts before it stay.
    expect((await putPart(member, uploadId, blob, MIB, 2 * MIB - 1)).status).toBe(204)
    const wrongLast = await putPart(member, uploadId, blob, 2 * MIB, SIZE - 1, { 'content-digest': contentDigest(ciphertext(10)) })
    expect(wrongLast.status, wrongLast.text).toBe(422)
    expect(wrongLast.json?.code).toBe('error.upload.hash_mismatch')
    expect(await storedBytes(server, blob.hash)).toBeNull()
    expect(await receivedOf(member, uploadId, blob.hash)).toBe(2 * MIB)
    expect((await putPart(member, uploadId, blob, 2 * MIB, SIZE - 1)).status).toBe(204)
    expect((await storedBytes(server, blob.hash))?.equals(blob.bytes)).toBe(true)
  })

  it('refuses a part that does not end the blob and is shorter than 1 MiB with 422 error.request.invalid', async () => {
    const blob = blobOf()
    const uploadId = await openSession(member, albumId, blob)
    const short = await putPart(member, uploadId, blob, 0, MIB - 2)
    expect(short.status, short.text).toBe(422)
    expect(short.json?.code).toBe('error.request.invalid')
    expect(await receivedOf(member, uploadId, blob.hash)).toBe(0)
    expect(await filesOf(uploadId)).toEqual([])
  })

  it('drops every part when the last part makes other bytes than declared: 422, received 0, no part left', async () => {
    const blob = blobOf()
    const uploadId = await openSession(member, albumId, blob)
    expect((await putPart(member, uploadId, blob, 0, MIB - 1)).status).toBe(204)
    expect((await putPart(member, uploadId, blob, MIB, 2 * MIB - 1)).status).toBe(204)
    const other = ciphertext(SIZE - 2 * MIB)
    const last = await putPart(member, uploadId, blob, 2 * MIB, SIZE - 1, {}, other)
    expect(last.status, last.text).toBe(422)
    expect(last.json?.code).toBe('error.upload.hash_mismatch')
    expect(await storedBytes(server, blob.hash)).toBeNull()
    expect(await receivedOf(member, uploadId, blob.hash)).toBe(0)
    expect(await filesOf(uploadId)).toEqual([])
    expect(await partRows(uploadId)).toBe(0)
    // Sent again from its start, it is stored.
    expect((await putPart(member, uploadId, blob, 0, MIB - 1)).status).toBe(204)
    expect((await putPart(member, uploadId, blob, MIB, SIZE - 1)).status).toBe(204)
    expect((await storedBytes(server, blob.hash))?.equals(blob.bytes)).toBe(true)
  })

  it('answers a part of a blob the caller already stores with 204 and Upload-Offset its size, at once', async () => {
    const blob = blobOf(5_000)
    const first = await openSession(member, albumId, blob)
    await member.client.putBlob(first, blob.hash, blob.bytes)
    const uploadId = await openSession(member, albumId, blob)
    // Any offset: nothing is read.
    const part = await putPart(member, uploadId, blob, 1_000, 1_999)
    expect(part.status, part.text).toBe(204)
    expect(part.headers.get('upload-offset')).toBe('5000')
    expect(await filesOf(uploadId)).toEqual([])
  })

  it('refuses malformed headers with 400 and a size, length or hash other than declared with 422, keeping nothing', async () => {
    const blob = blobOf()
    const uploadId = await openSession(member, albumId, blob)
    const part = blob.bytes.subarray(0, MIB)
    for (const range of [
      'bytes 0-1048575',
      `bytes=0-1048575/${SIZE}`,
      `bytes 0-x/${SIZE}`,
      `bytes 10-9/${SIZE}`,
      `bytes 0-${SIZE}/${SIZE}`,
      `bytes */${SIZE}`,
    ]) {
      const answer = await putPart(member, uploadId, blob, 0, MIB - 1, { 'content-range': range })
      expect(answer.status, range).toBe(400)
      expect(answer.json?.code).toBe('error.request.malformed')
    }
    for (const digest of ['sha-512=:AAAA:', 'sha-256=abc', 'sha-256=:AAAA:', 'sha-256=:not base64!:']) {
      const answer = await putPart(member, uploadId, blob, 0, MIB - 1, { 'content-digest': digest })
      expect(answer.status, digest).toBe(400)
      expect(answer.json?.code).toBe('error.request.malformed')
    }
    const otherSize = await putPart(member, uploadId, blob, 0, MIB - 1, { 'content-range': `bytes 0-${MIB - 1}/${SIZE + 1}` })
    expect(otherSize.status).toBe(422)
    expect(otherSize.json?.code).toBe('error.upload.hash_mismatch')
    // Content-Length (the body's) other than the range's length.
    const longer = await putPart(
      member,
      uploadId,
      blob,
      0,
      MIB - 1,
      { 'content-digest': contentDigest(blob.bytes.subarray(0, MIB + 1)) },
      blob.bytes.subarray(0, MIB + 1),
    )
    expect(longer.status).toBe(422)
    expect(longer.json?.code).toBe('error.upload.hash_mismatch')
    expect(await receivedOf(member, uploadId, blob.hash)).toBe(0)
    expect(await filesOf(uploadId)).toEqual([])
    expect((await putPart(member, uploadId, blob, 0, MIB - 1, {}, part)).status).toBe(204)
  })

  it('lets one of two parts racing for one offset win (204), the other 409, and keeps the winner’s bytes', async () => {
    const blob = blobOf()
    const uploadId = await openSession(member, albumId, blob)
    const answers = await racingParts(member, uploadId, blob, 0, MIB - 1)
    const statuses = answers.map((answer) => answer.status).sort()
    expect(statuses, JSON.stringify(answers)).toEqual([204, 409])
    expect(answers.map((answer) => answer.offset)).toEqual([String(MIB), String(MIB)])
    expect(await filesOf(uploadId)).toHaveLength(1)
    expect(await partRows(uploadId)).toBe(1)
    // The winner's file is whole: the blob is stored from it.
    expect((await putPart(member, uploadId, blob, MIB, SIZE - 1)).status).toBe(204)
    expect((await storedBytes(server, blob.hash))?.equals(blob.bytes)).toBe(true)
  })

  describe('named at its last part', () => {
    /** A random provisional name and the session declaring the blob (its original) under it. */
    async function openProvisional(
      blob: Blob,
      extra: Array<{ role: 'derivative'; hash: string; size: number }> = [],
    ): Promise<{ uploadId: string; provisional: Blob }> {
      const provisional = { bytes: blob.bytes, hash: randomBytes(32).toString('hex') }
      const opened = await member.client.openUploadSession({
        album_id: albumId,
        crypto_suite_id: 1,
        ciphertext_hash: provisional.hash,
        blobs: [{ role: 'original', hash: provisional.hash, size: blob.bytes.length }, ...extra],
      })
      return { uploadId: opened.upload_id, provisional }
    }

    const reprDigest = (hash: string) => `sha-256=:${Buffer.from(hash, 'hex').toString('base64')}:`

    it('stores the blob under the Repr-Digest of its last part and renames the declaration: present, downloadable, applied by a write naming it', async () => {
      const blob = blobOf()
      const { uploadId, provisional } = await openProvisional(blob)
      expect((await putPart(member, uploadId, provisional, 0, MIB - 1)).status).toBe(204)
      expect((await putPart(member, uploadId, provisional, MIB, 2 * MIB - 1, { 'repr-digest': 'ignored on a part that does not end the blob' })).status).toBe(
        204,
      )
      const last = await putPart(member, uploadId, provisional, 2 * MIB, SIZE - 1, { 'repr-digest': reprDigest(blob.hash) })
      expect(last.status, last.text).toBe(204)
      expect(last.headers.get('upload-offset')).toBe(String(SIZE))
      expect(last.headers.get('repr-digest')).toBe(reprDigest(blob.hash))
      expect(await sessionBlobs(member, uploadId)).toEqual([expect.objectContaining({ hash: blob.hash, present: true, received: SIZE })])
      expect((await storedBytes(server, blob.hash))?.equals(blob.bytes)).toBe(true)
      expect(await storedBytes(server, provisional.hash)).toBeNull()
      expect(await filesOf(uploadId)).toEqual([])
      expect(await partRows(uploadId)).toBe(0)
      // The provisional name is no longer declared.
      const again = await putPart(member, uploadId, provisional, 0, MIB - 1)
      expect(again.status, again.text).toBe(404)

      // A lifecycle write naming the real hash finds this session, and the feed has it.
      const signed = await signedManifest(member, { ciphertextHash: blob.hash, derivativeHashes: [], metadataBlobHash: null }, { albumId })
      const manifest = Buffer.from(signed.manifestCbor)
      const applied = await member.client.applyManifest(albumId, {
        manifest_envelope: signed.envelope,
        manifest_cbor: manifest.toString('base64'),
        metadata_blob: null,
      })
      expect(applied.replayed).toBe(false)
      const feed = await member.client.feed(albumId, 0, 1000)
      expect(feed.entries.map((entry) => entry.manifest_cbor)).toContain(manifest.toString('base64'))
      expect(Buffer.from(await member.client.downloadBlob(blob.hash)).equals(blob.bytes)).toBe(true)
      const sessions = await readRows(server.database, `SELECT ciphertext_hash, closed_at FROM upload_sessions WHERE upload_id = '${uploadId}'`)
      expect(sessions[0]?.ciphertext_hash).toBe(blob.hash)
      expect(sessions[0]?.closed_at).not.toBeNull()
    })

    it('renames a blob sent as one range 0..n-1, and changes nothing when Repr-Digest is the URL’s hash', async () => {
      const blob = blobOf(5_000)
      const { uploadId, provisional } = await openProvisional(blob)
      const whole = await putPart(member, uploadId, provisional, 0, 4_999, { 'repr-digest': reprDigest(blob.hash) })
      expect(whole.status, whole.text).toBe(204)
      expect(whole.headers.get('upload-offset')).toBe('5000')
      expect(await sessionBlobs(member, uploadId)).toEqual([expect.objectContaining({ hash: blob.hash, present: true, received: 5_000 })])
      expect((await storedBytes(server, blob.hash))?.equals(blob.bytes)).toBe(true)

      const same = blobOf(5_000)
      const session = await openSession(member, albumId, same)
      const answer = await putPart(member, session, same, 0, 4_999, { 'repr-digest': reprDigest(same.hash) })
      expect(answer.status, answer.text).toBe(204)
      expect(answer.headers.get('repr-digest')).toBe(reprDigest(same.hash))
      expect(await sessionBlobs(member, session)).toEqual([expect.objectContaining({ hash: same.hash, present: true, received: 5_000 })])
    })

    it('drops every part when the blob is not what Repr-Digest names: 422, received 0, nothing stored', async () => {
      const blob = blobOf()
      const { uploadId, provisional } = await openProvisional(blob)
      expect((await putPart(member, uploadId, provisional, 0, MIB - 1)).status).toBe(204)
      const other = sha256Hex(ciphertext(10))
      const last = await putPart(member, uploadId, provisional, MIB, SIZE - 1, { 'repr-digest': reprDigest(other) })
      expect(last.status, last.text).toBe(422)
      expect(last.json?.code).toBe('error.upload.hash_mismatch')
      expect(await storedBytes(server, other)).toBeNull()
      expect(await storedBytes(server, blob.hash)).toBeNull()
      expect(await sessionBlobs(member, uploadId)).toEqual([expect.objectContaining({ hash: provisional.hash, present: false, received: 0 })])
      expect(await filesOf(uploadId)).toEqual([])
      expect(await partRows(uploadId)).toBe(0)
      // Sent again from its start with the right digest, it is stored under it.
      expect((await putPart(member, uploadId, provisional, 0, MIB - 1)).status).toBe(204)
      expect((await putPart(member, uploadId, provisional, MIB, SIZE - 1, { 'repr-digest': reprDigest(blob.hash) })).status).toBe(204)
      expect(await sessionBlobs(member, uploadId)).toEqual([expect.objectContaining({ hash: blob.hash, present: true, received: SIZE })])
    })

    it('refuses, before reading the body, a Repr-Digest naming another blob of the session (422), keeping the parts', async () => {
      const blob = blobOf()
      const derivative = blobOf(300)
      const { uploadId, provisional } = await openProvisional(blob, [{ role: 'derivative', hash: derivative.hash, size: derivative.bytes.length }])
      expect((await putPart(member, uploadId, provisional, 0, MIB - 1)).status).toBe(204)
      const last = await putPart(member, uploadId, provisional, MIB, SIZE - 1, { 'repr-digest': reprDigest(derivative.hash) })
      expect(last.status, last.text).toBe(422)
      expect(last.json?.code).toBe('error.request.invalid')
      expect(last.headers.get('connection')).toBe('close')
      expect(await receivedOf(member, uploadId, provisional.hash)).toBe(MIB)
      expect(await filesOf(uploadId)).toHaveLength(1)
      expect(await storedBytes(server, derivative.hash)).toBeNull()
    })

    it('refuses a malformed Repr-Digest on the part that ends the blob with 400', async () => {
      const blob = blobOf(5_000)
      const { uploadId, provisional } = await openProvisional(blob)
      for (const digest of ['sha-512=:AAAA:', 'sha-256=abc', 'sha-256=:AAAA:']) {
        const answer = await putPart(member, uploadId, provisional, 0, 4_999, { 'repr-digest': digest })
        expect(answer.status, digest).toBe(400)
        expect(answer.json?.code).toBe('error.request.malformed')
      }
      expect(await sessionBlobs(member, uploadId)).toEqual([expect.objectContaining({ hash: provisional.hash, present: false, received: 0 })])
    })

    it('answers both of two last parts racing with 204 under the real hash', async () => {
      const blob = blobOf()
      const { uploadId, provisional } = await openProvisional(blob)
      expect((await putPart(member, uploadId, provisional, 0, 2 * MIB - 1)).status).toBe(204)
      const answers = await racingParts(member, uploadId, provisional, 2 * MIB, SIZE - 1, { 'repr-digest': reprDigest(blob.hash) })
      expect(
        answers.map((answer) => answer.status),
        JSON.stringify(answers),
      ).toEqual([204, 204])
      expect(answers.map((answer) => [answer.offset, answer.digest])).toEqual([
        [String(SIZE), reprDigest(blob.hash)],
        [String(SIZE), reprDigest(blob.hash)],
      ])
      expect(await sessionBlobs(member, uploadId)).toEqual([expect.objectContaining({ hash: blob.hash, present: true, received: SIZE })])
      expect((await storedBytes(server, blob.hash))?.equals(blob.bytes)).toBe(true)
      expect(await filesOf(uploadId)).toEqual([])
      const owned = await readRows(server.database, `SELECT count(*) AS n FROM blobs WHERE hash = '${blob.hash}'`)
      expect(Number(owned[0]!.n)).toBe(1)
    })
  })
})

describe('maintenance of parts', () => {
  let own: TestServer
  let member: Uploader
  let albumId: string
  beforeAll(async () => {
    own = await startServer()
    member = await uploader(own, 'parts-maintenance')
    albumId = await album(member)
  })
  afterAll(() => own.close())

  async function openWithPart(blob: Blob): Promise<string> {
    const uploadId = await openSession(member, albumId, blob)
    const part = blob.bytes.subarray(0, MIB)
    const answer = await raw(own, 'PUT', `/v1/upload/${uploadId}/blobs/${blob.hash}`, {
      headers: {
        ...bearer(member),
        'content-type': 'application/octet-stream',
        'content-range': `bytes 0-${MIB - 1}/${blob.bytes.length}`,
        'content-digest': contentDigest(part),
      },
      body: part,
    })
    expect(answer.status, answer.text).toBe(204)
    return uploadId
  }

  const uploadsWithParts = async () => [...new Set((await partFiles(own)).map((name) => name.split('/')[0]))].sort()

  it('never shows parts as blobs: list and fsck see none, and fsck finds nothing wrong', async () => {
    const blob = blobOf()
    await openWithPart(blob)
    expect(await partFiles(own)).toHaveLength(1)
    expect(await storedHashes(own)).toEqual([])
    const lines: string[] = []
    const summary = await fsck(own.deps, { deep: true, reclaimUnowned: false, problem: (line) => lines.push(line), note: (line) => lines.push(line) })
    expect(lines).toEqual([])
    expect(summary).toMatchObject({ problems: 0, notes: 0, unownedFiles: 0 })
  })

  it('removes the parts of an aborted session once 10 minutes passed, and of a session the sweep deleted', async () => {
    const kept = await openWithPart(blobOf())
    const aborted = await openWithPart(blobOf())
    expect(await member.client.abortUploadSession(aborted)).toBeUndefined()
    // Within the grace: a part of it may still be landing.
    expect((await maintain(own.deps)).partUploads).toBe(0)
    own.clock.advance(9 * 60 * 1000)
    expect((await maintain(own.deps)).partUploads).toBe(0)
    expect(await uploadsWithParts()).toContain(aborted)
    own.clock.advance(2 * 60 * 1000)
    const [pass, concurrent] = await Promise.all([maintain(own.deps), maintain(own.deps)])
    expect(pass.partUploads + concurrent.partUploads).toBeGreaterThanOrEqual(1)
    expect(await uploadsWithParts()).not.toContain(aborted)
    expect(await uploadsWithParts()).toContain(kept)
    const rows = await readRows(own.database, `SELECT upload_id FROM upload_parts`)
    expect(rows.map((row) => row.upload_id)).not.toContain(aborted)
    expect(rows.map((row) => row.upload_id)).toContain(kept)

    // Past its lifetime the sweep deletes the session (its rows go with it) and the same pass its files.
    own.clock.advance(86_400 * 1000)
    const swept = await maintain(own.deps)
    expect(swept.deleted.upload_sessions).toBeGreaterThanOrEqual(1)
    expect(swept.partUploads).toBeGreaterThanOrEqual(1)
    expect(await partFiles(own)).toEqual([])
    expect(await readRows(own.database, `SELECT upload_id FROM upload_parts`)).toEqual([])
    expect((await maintain(own.deps)).partUploads).toBe(0)
  })
})
