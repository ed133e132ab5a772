// Large files against a real server (src/client/files.ts): an original larger than a part goes
// in parts; a file streamed from disk is read once, encrypted and sent as it is read, its
// original named at the last part (one pass), unless it is to be hashed first. An upload the
// network cuts keeps its session and its sealed resume point (ResumeStore), and the next call
// sends only the rest of the original: one pass reads the file once more from its start (the
// hash needs it all), a hashed-first upload only from the first chunk the server does not hold.
// A resume point whose session ended, or that does not open, is dropped and the file sent from
// the start.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { liveEntries, openAlbum, type Library } from '../../src/client/albums.ts'
import { restoreFile, type FileSource, type ResumeStore, type StoredOriginal, type StoredOriginals } from '../../src/client/files.ts'
import { backupFile, partEnd, UPLOAD_PART_BYTES } from '../../src/client/upload.ts'
import { generateMasterKey } from '../../src/client/format/keys.ts'
import { ciphertextSize, DEFAULT_CHUNK_SIZE, HEADER_BYTES } from '../../src/client/format/stream.ts'
import { CofferClient } from '../../src/sdk/client.ts'
import { photoLibrary } from '../support/albums.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let library: Library

/** A large file: three parts, the last a short one (a part is whole chunks, just under UPLOAD_PART_BYTES), so that a cut at the second leaves one after it. */
const LARGE = 2 * UPLOAD_PART_BYTES + 12_345

beforeAll(async () => {
  server = await startServer()
  library = await photoLibrary(server, 'resume')
})
afterAll(async () => {
  await server.close()
})

/** A resume store in memory, as the state store keeps one per file. */
function memoryStore(): ResumeStore & { saved: { uploadId: string; sealed: Uint8Array } | null } {
  const store = {
    saved: null as { uploadId: string; sealed: Uint8Array } | null,
    load: async () => store.saved,
    save: async (uploadId: string, sealed: Uint8Array) => {
      store.saved = { uploadId, sealed }
    },
    clear: async () => {
      store.saved = null
    },
  }
  return store
}

/** A streamed file (no digest up front, as one above the in-memory limit): counts where each read starts and the bytes read. */
function streamedFile(bytes: Uint8Array): FileSource & { starts: number[]; read: number } {
  const file = {
    name: 'clip.mp4',
    size: bytes.length,
    type: 'video/mp4',
    modified: 1_700_000_000_000,
    starts: [] as number[],
    read: 0,
    *open(start = 0) {
      file.starts.push(start)
      for (let at = start; at < bytes.length; at += 65_536) {
        const piece = bytes.subarray(at, at + 65_536)
        file.read += piece.length
        yield piece
      }
    },
  }
  return file
}

/** A client whose network fails the `cutAt`-th part PUT (a TypeError, as fetch throws for a cut connection). */
function cuttingClient(cutAt: number): CofferClient {
  let parts = 0
  const cutting: typeof fetch = async (input, init) => {
    if (init?.method === 'PUT' && new Headers(init.headers).has('content-range') && ++parts === cutAt) throw new TypeError('fetch failed (the test cut it)')
    return fetch(input, init)
  }
  return new CofferClient({ baseUrl: library.client.baseUrl, tokens: library.client.tokens, fetch: cutting })
}

/** A client that records each part PUT (its session and first byte) and, like cuttingClient, fails the `cutAt`-th. */
function recordingClient(cutAt: number): { client: CofferClient; parts: { uploadId: string; start: number }[] } {
  const parts: { uploadId: string; start: number }[] = []
  const recording: typeof fetch = async (input, init) => {
    const range = new Headers(init?.headers).get('content-range')
    if (init?.method === 'PUT' && range !== null) {
      parts.push({ uploadId: /\/v1\/upload\/([^/]+)\//.exec(String(input))![1]!, start: Number(/^bytes (\d+)-/.exec(range)![1]) })
      if (parts.length === cutAt) throw new TypeError('fetch failed (the test cut it)')
    }
    return fetch(input, init)
  }
  return { client: new CofferClient({ baseUrl: library.client.baseUrl, tokens: library.client.tokens, fetch: recording }), parts }
}

async function restoredBytes(albumId: string, assetId: string): Promise<Buffer> {
  const entry = (await liveEntries(library.client, albumId)).find((e) => e.asset_id === assetId)!
  const restored = await restoreFile({ ...library, albumId }, entry)
  const chunks: Uint8Array[] = []
  for await (const chunk of restored.bytes) chunks.push(chunk)
  return Buffer.concat(chunks)
}

describe('backupFile in parts', () => {
  it('sends a large streamed file in one pass: read once, its original named at the last part', async () => {
    const album = await openAlbum(library, 'One pass')
    const target = { ...library, albumId: album.albumId, protocolVersion: album.protocolVersion }
    const bytes = randomBytes(LARGE)
    const file = streamedFile(bytes)
    const result = await backupFile(target, file)
    expect(result).toMatchObject({ status: 'stored', sentBytes: ciphertextSize(bytes.length), resumedBytes: 0 })
    expect(file.starts).toEqual([0])
    expect(file.read).toBe(bytes.length)
    expect((await restoredBytes(album.albumId, result.assetId)).equals(bytes)).toBe(true)
    // The same content again: found present only once it was read and sent, and not stored twice.
    const again = streamedFile(bytes)
    const feedBefore = (await liveEntries(library.client, album.albumId)).length
    expect(await backupFile(target, again, { isStored: (id) => id === result.assetId })).toMatchObject({ status: 'present', assetId: result.assetId })
    expect((await liveEntries(library.client, album.albumId)).length).toBe(feedBefore)
    // Hashed first when asked (the album may hold it): then nothing is sent.
    const hashed = streamedFile(bytes)
    expect(await backupFile(target, hashed, { isStored: (id) => id === result.assetId, hashFirst: () => true })).toMatchObject({
      status: 'present',
      sentBytes: 0,
    })
    expect(hashed.starts).toEqual([0])
  })

  it('continues a one-pass upload the network cut: the file is read once more from its start, only the rest is sent', async () => {
    const album = await openAlbum(library, 'Resume one pass')
    const target = { ...library, albumId: album.albumId, protocolVersion: album.protocolVersion }
    const bytes = randomBytes(LARGE)
    const total = ciphertextSize(bytes.length)
    // The part cut (the second) is not the last.
    expect(partEnd(partEnd(0, total, DEFAULT_CHUNK_SIZE), total, DEFAULT_CHUNK_SIZE)).toBeLessThan(total)
    const store = memoryStore()
    const cut = streamedFile(bytes)
    // The second part's request fails: the first part is stored, the session and the point are kept.
    await expect(backupFile({ ...target, client: cuttingClient(2) }, cut, { resume: store })).rejects.toThrow(/the test cut it/)
    expect(cut.read).toBeLessThan(bytes.length) // it was not read whole before sending
    expect(store.saved).not.toBeNull()
    const received = (await library.client.uploadSessionStatus(store.saved!.uploadId)).blobs.find((blob) => blob.role === 'original')!.received
    expect(received).toBe(partEnd(0, total, DEFAULT_CHUNK_SIZE))

    const file = streamedFile(bytes)
    const result = await backupFile(target, file, { resume: store })
    expect(result).toMatchObject({ status: 'stored', resumedBytes: received, sentBytes: total - received })
    // Read once, whole: the hash of the original needs its first part too; the first part is not sent again.
    expect(file.starts).toEqual([0])
    expect(file.read).toBe(bytes.length)
    expect(store.saved).toBeNull()
    expect((await restoredBytes(album.albumId, result.assetId)).equals(bytes)).toBe(true)
  })

  it('does not continue a cut upload whose file changed in place (same size and mtime): a new session under a new key (decision 0049)', async () => {
    const album = await openAlbum(library, 'Resume changed in place')
    const target = { ...library, albumId: album.albumId, protocolVersion: album.protocolVersion }
    const before = randomBytes(LARGE)
    const store = memoryStore()
    const network = recordingClient(2)
    // The second part is handed to the network and cut: it may have left the device.
    await expect(backupFile({ ...target, client: network.client }, streamedFile(before), { resume: store })).rejects.toThrow(/the test cut it/)
    const cut = network.parts[1]!
    expect(cut.start).toBeGreaterThan(0)
    expect(store.saved?.uploadId).toBe(cut.uploadId)

    // The same size and mtime (streamedFile's), other bytes: the part at the cut must not be sealed again under that key.
    const after = randomBytes(before.length)
    const result = await backupFile({ ...target, client: network.client }, streamedFile(after), { resume: store })
    const again = network.parts.slice(2)
    expect(again[0]).toMatchObject({ start: 0 })
    expect(again.every((part) => part.uploadId !== cut.uploadId)).toBe(true)
    expect(result).toMatchObject({ status: 'stored', resumedBytes: 0, sentBytes: ciphertextSize(after.length) })
    expect((await restoredBytes(album.albumId, result.assetId)).equals(after)).toBe(true)
    expect(store.saved).toBeNull()
  })

  it('finishes a one-pass upload whose last part was stored but whose write was cut: the file hashed again, nothing sent', async () => {
    const album = await openAlbum(library, 'Resume after the last part')
    const target = { ...library, albumId: album.albumId, protocolVersion: album.protocolVersion }
    const bytes = randomBytes(9 * 1024 * 1024 + 12_345) // its end is not where a chunk begins
    const store = memoryStore()
    // Every part goes through; the lifecycle write's request fails as a cut connection does.
    const cutWrite: typeof fetch = async (input, init) => {
      if (init?.method === 'POST' && String(input).endsWith('/ops')) throw new TypeError('fetch failed (the test cut it)')
      return fetch(input, init)
    }
    const client = new CofferClient({ baseUrl: library.client.baseUrl, tokens: library.client.tokens, fetch: cutWrite })
    await expect(backupFile({ ...target, client }, streamedFile(bytes), { resume: store })).rejects.toThrow(/the test cut it/)
    const held = (await library.client.uploadSessionStatus(store.saved!.uploadId)).blobs.find((blob) => blob.role === 'original')!
    expect(held).toMatchObject({ present: true, received: ciphertextSize(bytes.length) })

    const file = streamedFile(bytes)
    const result = await backupFile(target, file, { resume: store })
    expect(result).toMatchObject({ status: 'stored', ciphertextHash: held.hash, resumedBytes: ciphertextSize(bytes.length), sentBytes: 0 })
    expect(file.read).toBe(bytes.length)
    expect((await restoredBytes(album.albumId, result.assetId)).equals(bytes)).toBe(true)
  })

  it('continues a hashed-first upload the network cut, reading the file only from the first chunk the server does not hold', async () => {
    const album = await openAlbum(library, 'Resume inside a file')
    const target = { ...library, albumId: album.albumId, protocolVersion: album.protocolVersion }
    const bytes = randomBytes(LARGE)
    const total = ciphertextSize(bytes.length)
    const store = memoryStore()
    const options = { resume: store, hashFirst: () => true }
    await expect(backupFile({ ...target, client: cuttingClient(2) }, streamedFile(bytes), options)).rejects.toThrow(/the test cut it/)
    const received = (await library.client.uploadSessionStatus(store.saved!.uploadId)).blobs.find((blob) => blob.role === 'original')!.received
    expect(received).toBe(partEnd(0, total, DEFAULT_CHUNK_SIZE))

    const file = streamedFile(bytes)
    const result = await backupFile(target, file, options)
    const firstChunk = (received - HEADER_BYTES) / (DEFAULT_CHUNK_SIZE + 16)
    expect(result).toMatchObject({ status: 'stored', resumedBytes: received, sentBytes: total - received })
    // No first pass: the file is read once, from the first chunk the server did not hold.
    expect(file.starts).toEqual([firstChunk * DEFAULT_CHUNK_SIZE])
    expect(file.read).toBe(bytes.length - firstChunk * DEFAULT_CHUNK_SIZE)
    expect(store.saved).toBeNull()
    expect((await restoredBytes(album.albumId, result.assetId)).equals(bytes)).toBe(true)
  })

  it("names a stored original it is told of, and when the server no longer holds it, sends the file under keys of its own, never that original's", async () => {
    const album = await openAlbum(library, 'Stored originals')
    const target = { ...library, albumId: album.albumId, protocolVersion: album.protocolVersion }
    const bytes = randomBytes(LARGE)
    const remembered: StoredOriginal[] = []
    const originals = (known: StoredOriginal | null): StoredOriginals => ({
      find: async () => known,
      remember: async (_content, _chunkSize, original) => void remembered.push(original),
    })
    const first = await backupFile(target, streamedFile(bytes), { originals: originals(null) })
    expect(remembered).toEqual([expect.objectContaining({ ciphertextHash: first.ciphertextHash, size: bytes.length })])

    // Another file of that content, hashed first: it names the stored original, nothing of it sent.
    const copy = await backupFile(
      target,
      { ...streamedFile(bytes), name: 'copy.mp4' },
      {
        originals: originals(remembered[0]!),
        hashFirst: () => true,
        assetIdOf: async () => crypto.randomUUID(),
      },
    )
    expect(copy).toMatchObject({ status: 'stored', reusedOriginal: true, ciphertextHash: first.ciphertextHash })
    expect(copy.sentBytes).toBeLessThan(64 * 1024)
    expect((await restoredBytes(album.albumId, copy.assetId)).equals(bytes)).toBe(true)

    // An original the server does not hold (its keys known here): the upload starts again under new keys.
    const gone = { ...remembered[0]!, ciphertextHash: randomBytes(32).toString('hex') }
    const network = recordingClient(0)
    const again = await backupFile(
      { ...target, client: network.client },
      { ...streamedFile(bytes), name: 'again.mp4' },
      {
        originals: originals(gone),
        hashFirst: () => true,
        assetIdOf: async () => crypto.randomUUID(),
      },
    )
    expect(again).toMatchObject({ status: 'stored', reusedOriginal: false, sentBytes: expect.any(Number) })
    // Not those keys: under them the same bytes would have made the first upload's original again.
    expect([gone.ciphertextHash, first.ciphertextHash]).not.toContain(again.ciphertextHash)
    expect(network.parts[0]).toMatchObject({ start: 0 })
    expect(remembered.map((original) => original.ciphertextHash)).toEqual([first.ciphertextHash, again.ciphertextHash])
    expect((await restoredBytes(album.albumId, again.assetId)).equals(bytes)).toBe(true)
  })

  it('sends the file from the start when the resumed session has ended, or the point does not open', async () => {
    const album = await openAlbum(library, 'Resume, session ended')
    const target = { ...library, albumId: album.albumId, protocolVersion: album.protocolVersion }
    const bytes = randomBytes(9 * 1024 * 1024)
    const store = memoryStore()
    await expect(backupFile({ ...target, client: cuttingClient(2) }, streamedFile(bytes), { resume: store })).rejects.toThrow(/the test cut it/)
    const ended = store.saved!.uploadId
    await library.client.abortUploadSession(ended)
    const file = streamedFile(bytes)
    const result = await backupFile(target, file, { resume: store })
    expect(result).toMatchObject({ status: 'stored', resumedBytes: 0, sentBytes: ciphertextSize(bytes.length) })
    // The resumed session answers its first part 404 (it is closed): then a new one, from the start.
    expect(file.starts).toEqual([0, 0])
    expect((await restoredBytes(album.albumId, result.assetId)).equals(bytes)).toBe(true)

    // A point sealed under another master key (another account's, or altered) is dropped, its session aborted.
    const openBefore = (await library.client.storageUsage()).open_uploads
    const other = randomBytes(9 * 1024 * 1024)
    const foreign = memoryStore()
    await expect(backupFile({ ...target, masterKey: generateMasterKey(), client: cuttingClient(2) }, streamedFile(other), { resume: foreign })).rejects.toThrow(
      /the test cut it/,
    )
    expect((await library.client.storageUsage()).open_uploads).toBe(openBefore + 1)
    const again = await backupFile(target, streamedFile(other), { resume: foreign })
    expect(again).toMatchObject({ status: 'stored', resumedBytes: 0 })
    expect(foreign.saved).toBeNull()
    expect((await library.client.storageUsage()).open_uploads).toBe(openBefore)
  })

  it('without a resume store, an interrupted upload aborts its session', async () => {
    const album = await openAlbum(library, 'Resume, no store')
    const target = { ...library, albumId: album.albumId, protocolVersion: album.protocolVersion }
    const before = (await library.client.storageUsage()).open_uploads
    await expect(backupFile({ ...target, client: cuttingClient(2) }, streamedFile(randomBytes(9 * 1024 * 1024)))).rejects.toThrow(/the test cut it/)
    expect((await library.client.storageUsage()).open_uploads).toBe(before)
  })
})
