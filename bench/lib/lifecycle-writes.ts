// Lifecycle writes (`POST /v1/albums/{id}/ops`, a `create` of a new asset) made ready and sent
// as a client does, shared by the scenarios that drive them (lifecycle, receipts,
// healthz-under-load). Each bundle has 3 small blobs: an original (new for each write) and 2
// derivatives (shared by the bundles of one album, so uploaded once; the write does the same
// with them either way). Before a measurement every write is made ready: an upload session
// declaring the 3 blobs, the missing bytes sent, the manifest signed with the account's
// identity key. Only the write itself is then timed.
import { randomBytes } from 'node:crypto'
import { sha256Hex } from '../../src/sdk/client.ts'
import { accessToken, album, opBody, signedManifest, uploader, type Uploader } from './albums.ts'
import type { CofferChild } from './coffer.ts'
import { expectStatus, inParallel, preparedBatches, type HttpClient, type PreparedLoad } from './loop.ts'

/** Writes in flight, each worker on an album of its own (2 albums per account). */
export const WRITERS = 8
const ACCOUNTS = 4
export const ORIGINAL_BYTES = 4096
export const DERIVATIVE_BYTES = [2048, 1024] as const
/** Receipts a write issues: one per blob of its bundle (the original, the derivatives) and one for the manifest (provenance). */
export const RECEIPTS_PER_WRITE = 1 + DERIVATIVE_BYTES.length + 1
/** Writes per measurement at most: each costs a session, an upload and a signature beforehand. */
export const MAX_WRITE_BATCH = Number(process.env.BENCH_LIFECYCLE_BATCH ?? 2000)

/**
 * Server variables of the scenarios that send prepared writes: each write holds an open upload
 * session from its preparation on (a batch ended early leaves its sessions open), far more than a
 * client keeps open, so the cap on open sessions is set where no run reaches it.
 */
export const WRITE_SERVER_ENV = { MAX_OPEN_UPLOADS: String(1_000_000) }

export interface Writer {
  readonly member: Uploader
  readonly albumId: string
  /** Shared by all the writer's bundles (their bytes are uploaded once): the write's cost does not depend on it. */
  readonly derivatives: readonly Buffer[]
}

export interface Write {
  readonly path: string
  readonly token: string
  readonly body: string
}

/** WRITERS writers on `server`: ACCOUNTS accounts (with published directories), an album each. */
export async function writersOn(server: CofferChild): Promise<Writer[]> {
  const members = await inParallel(
    Array.from({ length: ACCOUNTS }, (_, i) => i),
    ACCOUNTS,
    () => uploader(server),
  )
  return inParallel(
    Array.from({ length: WRITERS }, (_, i) => i),
    WRITERS,
    async (i) => {
      const member = members[i % ACCOUNTS]
      if (member === undefined) throw new Error('no account')
      return { member, albumId: await album(member), derivatives: DERIVATIVE_BYTES.map((size) => randomBytes(size)) }
    },
  )
}

/** One write made ready: the session open, its missing blobs sent, the manifest signed. */
export async function prepareWrite(writer: Writer): Promise<Write> {
  const { member, albumId, derivatives } = writer
  const original = randomBytes(ORIGINAL_BYTES)
  const bytesByHash = new Map<string, Buffer>([[sha256Hex(original), original], ...derivatives.map((bytes) => [sha256Hex(bytes), bytes] as const)])
  const ciphertextHash = sha256Hex(original)
  const session = await member.client.openUploadSession({
    album_id: albumId,
    crypto_suite_id: 1,
    ciphertext_hash: ciphertextHash,
    blobs: [...bytesByHash].map(([hash, bytes]) => ({
      role: hash === ciphertextHash ? ('original' as const) : ('derivative' as const),
      hash,
      size: bytes.length,
    })),
  })
  for (const blob of session.blobs.filter((b) => !b.present))
    await member.client.putBlob(session.upload_id, blob.hash, bytesByHash.get(blob.hash) ?? Buffer.alloc(0))
  const signed = await signedManifest(member, albumId, { ciphertextHash, derivativeHashes: derivatives.map(sha256Hex), metadataBlobHash: null })
  return { path: `/v1/albums/${albumId}/ops`, token: accessToken(member.client), body: opBody(signed) }
}

/** Sends a write; throws unless it was applied as a new create. Answers the asset's id. */
export async function sendWrite(http: HttpClient, write: Write): Promise<string> {
  const answer = await http.call('POST', write.path, { 'content-type': 'application/json', authorization: `Bearer ${write.token}` }, write.body)
  expectStatus(answer, 200, 'lifecycle write')
  const outcome = JSON.parse(answer.body.toString('utf8')) as { asset_id: string; action: string; replayed: boolean }
  if (outcome.action !== 'create' || outcome.replayed) throw new Error(`lifecycle write: ${answer.body.toString('utf8').slice(0, 160)}`)
  return outcome.asset_id
}

/** The writes as single-use operations, WRITERS in flight (loop.ts PreparedLoad). */
export function writeLoad(name: string, server: CofferChild, writers: readonly Writer[]): PreparedLoad<Write> {
  return {
    name,
    url: server.ready.url,
    concurrency: WRITERS,
    subjectCpu: () => server.cpuSeconds(),
    initialRate: 200,
    maxBatch: MAX_WRITE_BATCH,
    prepare: (perWorker) =>
      Promise.all(
        writers.map((writer) =>
          inParallel(
            Array.from({ length: perWorker }, (_, i) => i),
            2,
            () => prepareWrite(writer),
          ),
        ),
      ),
    run: async (write, http) => {
      await sendWrite(http, write)
      return 1
    },
  }
}

/** Batches of writes, one per measurement (see loop.ts preparedBatches). */
export function writeBatches(server: CofferChild, writers: readonly Writer[]) {
  return preparedBatches(writeLoad('lifecycle writes', server, writers))
}

export const WRITE_SHAPE = `a create whose bundle is a ${ORIGINAL_BYTES}-byte original (new each time) and 2 derivatives (${DERIVATIVE_BYTES.join(' and ')} bytes, shared by the bundles of one album so that they are uploaded once)`
