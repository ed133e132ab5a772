// The upload's stages (upload.ts) against a test double of the HTTP client: which way each file's
// original goes (whole, in parts, in one pass, held by the server, not at all), what is read for
// it and what is sent, and the progress each tells (its stages in order, bytes that only grow,
// totals that say what the way costs: two reads, one read, nothing sent). The double answers as the server does for what these tests ask (declared
// blobs, parts from where it is, a provisional name replaced at the last part); the HTTP
// behaviour itself is tested against the real server (test/client/resume.test.ts,
// test/http/client-library.test.ts, test/client/edits.test.ts).
import { sha256 } from '@noble/hashes/sha2.js'
import { describe, expect, it } from 'vitest'
import { concatBytes, toHex } from '../sdk/bytes.ts'
import { CofferProblem, type CofferClient, type LifecycleWrite, type UploadSessionView } from '../sdk/client.ts'
import { IdentityKey } from '../sdk/identity.ts'
import { memorySource, uploadFraction, type BackupTarget, type FileSource, type MediaFacts, type UploadProgress } from './files.ts'
import { generateMasterKey } from './format/keys.ts'
import { ciphertextSize, DEFAULT_CHUNK_SIZE } from './format/stream.ts'
import { backupFile, partEnd } from './upload.ts'

const ALBUM = '0190b6a2-4c1e-8f3a-9b2d-3e4f5a6b7c8d'
const identity = IdentityKey.generate()

const problem = (status: number, code: string): CofferProblem =>
  new CofferProblem(status, { type: 'about:blank', title: code, status, code, detail: code, instance: '/' }, new Headers())

interface DeclaredBlob {
  hash: string
  readonly role: string
  readonly size: number
  present: boolean
  received: number
  parts: Uint8Array[]
}

/** The HTTP client's calls an upload makes, answered from memory and recorded. */
class FakeCoffer {
  /** Every call, by method name (and the blob's role for a put). */
  readonly calls: string[] = []
  /** Blob hashes the account stores: those of the writes applied. */
  readonly stored = new Set<string>()
  readonly applied: LifecycleWrite[] = []
  /** How many writes to refuse with 409 error.upgrade.in_flight (an upgrade window opened by another device). */
  upgradeWindows = 0
  readonly #sessions = new Map<string, DeclaredBlob[]>()

  get open(): number {
    return this.#sessions.size
  }

  #view(uploadId: string): UploadSessionView {
    const blobs = this.#sessions.get(uploadId)
    if (blobs === undefined) throw problem(404, 'error.not_found')
    return {
      upload_id: uploadId,
      album_id: ALBUM,
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      blobs: blobs.map(({ hash, role, size, present, received }) => ({ hash, role, size, present, received })),
    }
  }

  #blob(uploadId: string, hash: string): DeclaredBlob {
    const blob = this.#sessions.get(uploadId)?.find((b) => b.hash === hash)
    if (blob === undefined) throw new Error(`no blob ${hash} declared in ${uploadId}`)
    return blob
  }

  #store(blob: DeclaredBlob, name: string): void {
    const bytes = concatBytes(...blob.parts)
    expect(bytes.length).toBe(blob.size)
    expect(toHex(sha256(bytes))).toBe(name)
    blob.hash = name
    blob.present = true
    blob.received = blob.size
    blob.parts = []
  }

  async openUploadSession(declaration: { blobs: readonly { role: string; hash: string; size: number }[] }): Promise<UploadSessionView> {
    this.calls.push('openUploadSession')
    const uploadId = crypto.randomUUID()
    this.#sessions.set(
      uploadId,
      declaration.blobs.map((b) => ({ ...b, present: this.stored.has(b.hash), received: this.stored.has(b.hash) ? b.size : 0, parts: [] })),
    )
    return this.#view(uploadId)
  }

  async uploadSessionStatus(uploadId: string): Promise<UploadSessionView> {
    this.calls.push('uploadSessionStatus')
    return this.#view(uploadId)
  }

  async abortUploadSession(uploadId: string): Promise<void> {
    this.calls.push('abortUploadSession')
    this.#sessions.delete(uploadId)
  }

  async putBlob(uploadId: string, hash: string, bytes: Uint8Array | AsyncIterable<Uint8Array>): Promise<void> {
    const blob = this.#blob(uploadId, hash)
    this.calls.push(`putBlob ${blob.role}`)
    if (bytes instanceof Uint8Array) blob.parts.push(bytes.slice())
    else for await (const piece of bytes) blob.parts.push(piece.slice())
    this.#store(blob, hash)
  }

  async putBlobPart(
    uploadId: string,
    hash: string,
    start: number,
    total: number,
    bytes: Uint8Array,
    options: { readonly digest?: Uint8Array; readonly blobDigest?: Uint8Array } = {},
  ): Promise<number> {
    const blob = this.#blob(uploadId, hash)
    this.calls.push(`putBlobPart ${blob.role}`)
    expect([start, total]).toEqual([blob.received, blob.size])
    expect(options.digest).toEqual(sha256(bytes))
    blob.parts.push(bytes.slice())
    blob.received += bytes.length
    if (blob.received === blob.size) this.#store(blob, options.blobDigest === undefined ? hash : toHex(options.blobDigest))
    return blob.received
  }

  async applyManifest(_albumId: string, write: LifecycleWrite) {
    this.calls.push('applyManifest')
    if (this.upgradeWindows > 0) {
      this.upgradeWindows--
      throw problem(409, 'error.upgrade.in_flight')
    }
    this.applied.push(write)
    // The write takes what the sessions hold (the double does not tell which session a write closes).
    for (const [uploadId, blobs] of this.#sessions) {
      for (const blob of blobs) if (blob.present) this.stored.add(blob.hash)
      this.#sessions.delete(uploadId)
    }
    return { asset_id: crypto.randomUUID(), sync_seq: this.applied.length, action: 'create', replayed: false }
  }

  async readUpgrade() {
    this.calls.push('readUpgrade')
    return { intent_id: null, in_flight: 0 }
  }

  async listAlbums() {
    this.calls.push('listAlbums')
    return { albums: [{ album_id: ALBUM, protocol_version: '2026-06-01' }] }
  }
}

const targetOn = (fake: FakeCoffer): BackupTarget => ({
  client: fake as unknown as CofferClient,
  identity,
  userId: '0190b6a2-4c1e-8f3a-9b2d-222222222222',
  deviceId: '0190b6a2-4c1e-8f3a-9b2d-333333333333',
  masterKey: MASTER_KEY,
  albumId: ALBUM,
  protocolVersion: '2026-06-01',
})
const MASTER_KEY = generateMasterKey()

/** `size` bytes that differ from file to file (seeded), made quickly. */
function bytesOf(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size)
  let x = seed * 2654435761 + 1
  for (let i = 0; i < size; i += 4) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    bytes[i] = x
    bytes[i + 1] = x >>> 8
    bytes[i + 2] = x >>> 16
    bytes[i + 3] = x >>> 24
  }
  return bytes
}

/** A file streamed from "disk" (no digest: its hash is not known up front), counting its reads. */
function streamed(bytes: Uint8Array, name = 'VID_0001.mp4'): FileSource & { readonly reads: number[] } {
  const reads: number[] = []
  return {
    name,
    size: bytes.length,
    type: 'video/mp4',
    modified: null,
    reads,
    async *open(start = 0) {
      reads.push(start)
      for (let at = start; at < bytes.length; at += 1 << 20) yield bytes.subarray(at, at + (1 << 20))
    },
  }
}

/** The progress events of one upload, and what they must always say. */
function progressLog() {
  const events: UploadProgress[] = []
  return {
    events,
    onProgress: (progress: UploadProgress) => void events.push(progress),
    /** The stages in the order they were entered. */
    get stages() {
      return events.map((e) => e.stage).filter((stage, i, all) => all[i - 1] !== stage)
    },
    get last() {
      return events.at(-1)!
    },
    /** Bytes only grow, never past what is expected; the fraction drawn from them only grows; at the end they are what was expected. */
    check() {
      for (const [i, e] of events.entries()) {
        for (const kind of ['read', 'encrypted', 'sent'] as const) {
          expect(e[kind]).toBeLessThanOrEqual(e.expected[kind])
          if (i > 0) expect(e[kind]).toBeGreaterThanOrEqual(events[i - 1]![kind])
        }
      }
      const last = events.at(-1)!
      expect(last.stage).toBe('done')
      expect({ read: last.read, encrypted: last.encrypted, sent: last.sent }).toEqual(last.expected)
      expect(uploadFraction(last)).toBe(1)
    },
    /** The fractions a bar shows while the file goes (stage changes aside), in order. */
    get fractions() {
      return events.map(uploadFraction)
    },
  }
}

const THUMBNAIL = bytesOf(3000, 99)
const describeWithThumbnail = async (): Promise<MediaFacts> => ({
  captured: null,
  width: 4,
  height: 3,
  derivatives: [{ kind: 'thumbnail', type: 'image/webp', bytes: THUMBNAIL }],
})

/** More than one part of ciphertext: it goes in parts. */
const LARGE = 9 * 1024 * 1024
const sealedSize = (size: number) => ciphertextSize(size, DEFAULT_CHUNK_SIZE)
const thumbnailSealed = sealedSize(THUMBNAIL.length) // a derivative is one STREAM of the default chunk size

describe('the ways an original goes', () => {
  it('whole: a photo held in memory is hashed in a first pass, then sent in one request with its thumbnail', async () => {
    const fake = new FakeCoffer()
    const bytes = bytesOf(200_000, 1)
    let opened = 0
    const source = { ...memorySource(bytes, { name: 'IMG_0001.jpg', type: 'image/jpeg', modified: null }) }
    const open = source.open.bind(source)
    const log = progressLog()
    const counting = {
      ...source,
      open: (start?: number) => {
        opened++
        return open(start)
      },
    }
    const result = await backupFile(targetOn(fake), counting, { describe: describeWithThumbnail, onProgress: log.onProgress })
    expect(opened).toBe(2)
    expect(fake.calls).toEqual(['openUploadSession', 'putBlob original', 'putBlob derivative', 'applyManifest'])
    expect(result).toMatchObject({ status: 'stored', sentBytes: sealedSize(bytes.length) + thumbnailSealed, resumedBytes: 0, reusedOriginal: false })
    expect(fake.stored.has(result.ciphertextHash!)).toBe(true)
    log.check()
    expect(log.stages).toEqual(['plan', 'hash', 'describe', 'session', 'send', 'commit', 'done'])
    // Planned from the start as what it cost: the bytes read twice, the original and its thumbnail sent.
    expect(log.events[0]).toMatchObject({
      name: 'IMG_0001.jpg',
      size: bytes.length,
      way: 'whole',
      expected: { read: 2 * bytes.length, sent: sealedSize(bytes.length) },
    })
    expect(log.last).toMatchObject({ way: 'whole', read: 2 * bytes.length, encrypted: 2 * sealedSize(bytes.length) + thumbnailSealed, sent: result.sentBytes })
  })

  it('parts: a large file hashed first (the album may hold it) is read twice and sent in parts', async () => {
    const fake = new FakeCoffer()
    const source = streamed(bytesOf(LARGE, 2))
    const log = progressLog()
    const result = await backupFile(targetOn(fake), source, { hashFirst: () => true, onProgress: log.onProgress })
    expect(source.reads).toEqual([0, 0])
    expect(fake.calls).toEqual(['openUploadSession', 'putBlobPart original', 'putBlobPart original', 'applyManifest'])
    expect(result).toMatchObject({ status: 'stored', sentBytes: sealedSize(LARGE) })
    log.check()
    expect(log.events[0]).toMatchObject({ way: 'parts', expected: { read: 2 * LARGE, sent: sealedSize(LARGE) } })
    expect(log.last).toMatchObject({ read: 2 * LARGE, sent: sealedSize(LARGE) })
    expect(partEnd(0, sealedSize(LARGE), DEFAULT_CHUNK_SIZE)).toBeLessThan(sealedSize(LARGE))
  })

  it('one pass: a large file streamed from disk is read once, sent under a provisional name, and named at its last part', async () => {
    const fake = new FakeCoffer()
    const source = streamed(bytesOf(LARGE, 3))
    const log = progressLog()
    const result = await backupFile(targetOn(fake), source, { onProgress: log.onProgress })
    expect(source.reads).toEqual([0])
    expect(fake.calls).toEqual(['openUploadSession', 'putBlobPart original', 'putBlobPart original', 'applyManifest'])
    expect(result).toMatchObject({ status: 'stored', sentBytes: sealedSize(LARGE) })
    expect(fake.stored).toEqual(new Set([result.ciphertextHash]))
    log.check()
    // No first pass: read once, from the plan on; the bar moves all the way while the file is read and sent.
    expect(log.stages).toEqual(['plan', 'describe', 'session', 'send', 'commit', 'done'])
    expect(log.events.every((e) => e.way === 'one-pass' && e.expected.read === LARGE && e.expected.sent === sealedSize(LARGE))).toBe(true)
    const sending = log.events.filter((e) => e.stage === 'send').map(uploadFraction)
    expect(sending.every((f, i) => i === 0 || f >= sending[i - 1]!)).toBe(true)
    expect(new Set(sending.filter((f) => f > 0 && f < 1)).size).toBeGreaterThanOrEqual(9) // a step per MiB read, and per part sent
    expect(sending.at(-1)).toBe(1)
  })

  it('held: the same photo in a second album is the same encrypted original, which the server holds: only the thumbnail is sent', async () => {
    const fake = new FakeCoffer()
    const bytes = bytesOf(150_000, 4)
    const photo = memorySource(bytes, { name: 'IMG_0002.jpg', type: 'image/jpeg', modified: null })
    const first = await backupFile(targetOn(fake), photo, { describe: describeWithThumbnail })
    fake.calls.length = 0
    const log = progressLog()
    const again = await backupFile({ ...targetOn(fake), albumId: '0190b6a2-4c1e-8f3a-9b2d-444444444444' }, photo, {
      onProgress: log.onProgress,
      describe: async () => ({ ...(await describeWithThumbnail()), derivatives: [{ kind: 'thumbnail', type: 'image/webp', bytes: bytesOf(3000, 98) }] }),
    })
    expect(again.ciphertextHash).toBe(first.ciphertextHash)
    expect(fake.calls).toEqual(['openUploadSession', 'putBlob derivative', 'applyManifest'])
    expect(again).toMatchObject({ status: 'stored', reusedOriginal: true, sentBytes: thumbnailSealed })
    log.check()
    // Planned as two passes; once the session says the server holds the original, only the first pass and the thumbnail are left.
    expect(log.events[0]).toMatchObject({ way: 'whole', expected: { read: 2 * bytes.length } })
    expect(log.events.find((e) => e.stage === 'send')).toMatchObject({ way: 'held', expected: { read: bytes.length, sent: thumbnailSealed } })
    expect(log.last).toMatchObject({ way: 'held', read: bytes.length, sent: thumbnailSealed })
  })

  it('none: content the album holds is found by the first pass and nothing is sent, no session opened', async () => {
    const fake = new FakeCoffer()
    const source = streamed(bytesOf(300_000, 5))
    const log = progressLog()
    const result = await backupFile(targetOn(fake), source, {
      isStored: () => true,
      describe: () => Promise.reject(new Error('not asked')),
      onProgress: log.onProgress,
    })
    expect(result).toMatchObject({ status: 'present', sentBytes: 0, ciphertextHash: null })
    expect(source.reads).toEqual([0])
    expect(fake.calls).toEqual([])
    log.check()
    expect(log.stages).toEqual(['plan', 'hash', 'done'])
    expect(log.last).toMatchObject({ way: 'none', read: 300_000, sent: 0 })
  })

  it('a file sent in one pass whose content the album holds is found at its end: the session is aborted, nothing stored', async () => {
    const fake = new FakeCoffer()
    const source = streamed(bytesOf(LARGE, 6))
    const log = progressLog()
    const result = await backupFile(targetOn(fake), source, { isStored: () => true, onProgress: log.onProgress })
    expect(result).toMatchObject({ status: 'present', sentBytes: 0 })
    log.check()
    expect(log.last).toMatchObject({ way: 'none', read: LARGE, sent: sealedSize(LARGE) })
    expect(fake.calls).toEqual(['openUploadSession', 'putBlobPart original', 'putBlobPart original', 'abortUploadSession'])
    expect(fake.open).toBe(0)
  })

  it('an upgrade window met at the write ends the session, waits for it to close, and sends again', async () => {
    const fake = new FakeCoffer()
    fake.upgradeWindows = 1
    const source = streamed(bytesOf(LARGE, 7))
    const log = progressLog()
    const result = await backupFile(targetOn(fake), source, { onProgress: log.onProgress })
    // The one-pass file is known after the first round: the second round sends it in parts, read again.
    expect(source.reads).toEqual([0, 0])
    log.check()
    // Each round counts: the totals grow by the second round's read and send when it begins.
    expect(log.stages).toEqual(['plan', 'describe', 'session', 'send', 'commit', 'session', 'send', 'commit', 'done'])
    expect(log.last).toMatchObject({ way: 'parts', read: 2 * LARGE, sent: 2 * sealedSize(LARGE) })
    expect(fake.calls).toEqual([
      'openUploadSession',
      'putBlobPart original',
      'putBlobPart original',
      'applyManifest',
      'abortUploadSession',
      'readUpgrade',
      'listAlbums',
      'openUploadSession',
      'putBlobPart original',
      'putBlobPart original',
      'applyManifest',
    ])
    expect(result).toMatchObject({ status: 'stored', sentBytes: sealedSize(LARGE) })
    expect(fake.applied).toHaveLength(1)
  })
})
