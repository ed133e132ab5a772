// lifecycle: lifecycle writes (`POST /v1/albums/{id}/ops`), each a `create` of a new asset
// whose bundle has 3 small blobs (an original and 2 derivatives). Before each measurement, every
// write is made ready as a client would: an upload session declaring the 3 blobs, the bytes
// sent, the manifest signed; only the write itself is timed (the album and ownership checks,
// the bundle check with a stat of each blob, the provenance blob stored and fsynced, one
// transaction indexing the asset, the bundle and the feed entry). Ceiling: a bare Fastify
// route at the same path that parses the same JSON body, decodes the manifest and takes its
// SHA-256 (what any server must do with this request), with no database and no files.
import { randomBytes } from 'node:crypto'
import { sha256Hex } from '../../src/sdk/client.ts'
import { accessToken, album, opBody, signedManifest, uploader, type Uploader } from '../lib/albums.ts'
import { startChild, type Child } from '../lib/child.ts'
import { startCoffer, type CofferChild } from '../lib/coffer.ts'
import { closedLoop, expectStatus, HttpClient, inParallel, preparedContender } from '../lib/loop.ts'
import { alternate, type Contender } from '../lib/measure.ts'
import { row, type Row, type Scenario } from '../lib/scenario.ts'

/** Writes in flight, each worker on an album of its own (2 albums per account). */
const CONCURRENCY = 8
const ACCOUNTS = 4
const ORIGINAL_BYTES = 4096
const DERIVATIVE_BYTES = [2048, 1024] as const
/** Writes per measurement at most: each costs a session, an upload and a signature beforehand. */
const MAX_BATCH = Number(process.env.BENCH_LIFECYCLE_BATCH ?? 2000)
const CEILING = 'bare Fastify route: JSON parse + SHA-256 of the manifest'

interface Writer {
  readonly member: Uploader
  readonly albumId: string
  /** Shared by all the writer's bundles (their bytes are uploaded once): the write's cost does not depend on it. */
  readonly derivatives: readonly Buffer[]
}

interface Write {
  readonly path: string
  readonly token: string
  readonly body: string
}

async function writersOn(server: CofferChild): Promise<Writer[]> {
  const members = await inParallel(Array.from({ length: ACCOUNTS }, (_, i) => i), ACCOUNTS, () => uploader(server))
  return inParallel(Array.from({ length: CONCURRENCY }, (_, i) => i), CONCURRENCY, async (i) => {
    const member = members[i % ACCOUNTS]
    if (member === undefined) throw new Error('no account')
    return { member, albumId: await album(member), derivatives: DERIVATIVE_BYTES.map((size) => randomBytes(size)) }
  })
}

/** One write made ready: the session open, its missing blobs sent, the manifest signed. */
async function prepareWrite(writer: Writer): Promise<Write> {
  const { member, albumId, derivatives } = writer
  const original = randomBytes(ORIGINAL_BYTES)
  const bytesByHash = new Map<string, Buffer>([[sha256Hex(original), original], ...derivatives.map((bytes) => [sha256Hex(bytes), bytes] as const)])
  const ciphertextHash = sha256Hex(original)
  const session = await member.client.openUploadSession({
    album_id: albumId,
    crypto_suite_id: 1,
    ciphertext_hash: ciphertextHash,
    blobs: [...bytesByHash].map(([hash, bytes]) => ({ role: hash === ciphertextHash ? ('original' as const) : ('derivative' as const), hash, size: bytes.length })),
  })
  for (const blob of session.blobs.filter((b) => !b.present)) await member.client.putBlob(session.upload_id, blob.hash, bytesByHash.get(blob.hash) ?? Buffer.alloc(0))
  const signed = await signedManifest(member, albumId, { ciphertextHash, derivativeHashes: derivatives.map(sha256Hex), metadataBlobHash: null })
  return { path: `/v1/albums/${albumId}/ops`, token: accessToken(member.client), body: opBody(signed) }
}

async function sendWrite(http: HttpClient, write: Write): Promise<number> {
  const answer = await http.call('POST', write.path, { 'content-type': 'application/json', authorization: `Bearer ${write.token}` }, write.body)
  expectStatus(answer, 200, 'lifecycle write')
  const outcome = JSON.parse(answer.body.toString('utf8')) as { action: string; replayed: boolean }
  if (outcome.action !== 'create' || outcome.replayed) throw new Error(`lifecycle write: ${answer.body.toString('utf8').slice(0, 160)}`)
  return 1
}

function lifecycleLoad(name: string, server: CofferChild, writers: readonly Writer[]): Contender {
  return preparedContender<Write>({
    name,
    url: server.ready.url,
    concurrency: CONCURRENCY,
    subjectCpu: () => server.cpuSeconds(),
    initialRate: 200,
    maxBatch: MAX_BATCH,
    prepare: (perWorker) =>
      Promise.all(writers.map((writer) => inParallel(Array.from({ length: perWorker }, (_, i) => i), 2, () => prepareWrite(writer)))),
    run: (write, http) => sendWrite(http, write),
  })
}

/** The ceiling is sent writes of the same shape and size, over and over (it keeps nothing). */
function ceilingLoad(child: Child<{ readonly url: string }>, writes: readonly Write[]): Contender {
  return {
    name: CEILING,
    async measure(seconds) {
      const http = new HttpClient(child.ready.url)
      const turns = Array.from({ length: CONCURRENCY }, (_, i) => i)
      try {
        return await closedLoop({ concurrency: CONCURRENCY, seconds, subjectCpu: () => child.cpuSeconds() }, async (worker) => {
          const turn = (turns[worker] = (turns[worker] ?? 0) + CONCURRENCY)
          const write = writes[turn % writes.length]
          if (write === undefined) throw new Error('no write')
          return sendWrite(http, write)
        })
      } finally {
        http.close()
      }
    },
  }
}

export const lifecycle: Scenario = {
  name: 'lifecycle',
  summary: `POST /v1/albums/{id}/ops, a create with 3 blobs already uploaded, ${CONCURRENCY} in flight on ${CONCURRENCY} albums; ceiling: ${CEILING}`,
  async run(context) {
    const contenders: Contender[] = []
    const rows: Array<[subject: string, target: Row['target']]> = []

    const sqlite = await startCoffer(context, { engine: 'sqlite', logLevel: 'info' })
    const writers = await writersOn(sqlite)
    // The ceiling's bodies: real writes of this server's writers (made ready, never sent to it).
    const ceilingWrites = await inParallel(Array.from({ length: 64 }, (_, i) => i), 8, (i) => prepareWrite(writers[i % writers.length] as Writer))
    const ceiling = await startChild<{ url: string }>('servers/bare-lifecycle.ts')
    context.defer(() => ceiling.stop())
    contenders.push(ceilingLoad(ceiling, ceilingWrites))
    contenders.push(lifecycleLoad('lifecycle, coffer sqlite', sqlite, writers))
    rows.push(['lifecycle, coffer sqlite', null])

    const notes = [
      `Each write: a create whose bundle is a ${ORIGINAL_BYTES}-byte original (new each time) and 2 derivatives (${DERIVATIVE_BYTES.join(' and ')} bytes, shared by the bundles of one album so that they are uploaded once); the signed manifest is about ${Math.round((ceilingWrites[0]?.body.length ?? 0) / 1024)} KiB of JSON. Sessions, uploads and signatures are made before each measurement (at most ${MAX_BATCH} writes, BENCH_LIFECYCLE_BATCH): a measurement may end early when its batch is spent.`,
    ]
    if (context.postgresUrl !== null) {
      const postgres = await startCoffer(context, { engine: 'postgres', logLevel: 'info' })
      contenders.push(lifecycleLoad('lifecycle, coffer postgres', postgres, await writersOn(postgres)))
      rows.push(['lifecycle, coffer postgres', null])
    } else {
      notes.push('PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL to measure it too.')
    }

    const measured = await alternate(contenders, context.schedule, context.log)
    return {
      rows: rows.map(([subject, target]) => row('lifecycle', measured, subject, CEILING, target, 'write')),
      measured: [...measured.values()],
      notes,
    }
  },
}
