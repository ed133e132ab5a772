// lifecycle: lifecycle writes (`POST /v1/albums/{id}/ops`), each a `create` of a new asset
// whose bundle has 3 small blobs (an original and 2 derivatives). Before each measurement, every
// write is made ready as a client would: an upload session declaring the 3 blobs, the bytes
// sent, the manifest signed; only the write itself is timed (the album and ownership checks,
// the bundle check with a stat of each blob, the provenance blob stored and fsynced, one
// transaction indexing the asset, the bundle and the feed entry, and signing its custody
// receipts). Ceiling: a bare Fastify route at the same path that parses the same JSON body,
// decodes the manifest and takes its SHA-256 (what any server must do with this request), with
// no database and no files.
import { startChild, type Child } from '../lib/child.ts'
import { startCoffer } from '../lib/coffer.ts'
import {
  MAX_WRITE_BATCH,
  prepareWrite,
  sendWrite,
  WRITE_SERVER_ENV,
  WRITE_SHAPE,
  writeLoad,
  writersOn,
  WRITERS,
  type Write,
  type Writer,
} from '../lib/lifecycle-writes.ts'
import { closedLoop, HttpClient, inParallel, preparedContender } from '../lib/loop.ts'
import type { Contender } from '../lib/measure.ts'
import { measureAgainst, POSTGRES_SKIPPED, type Scenario, type Target } from '../lib/scenario.ts'

const CEILING = 'bare Fastify route: JSON parse + SHA-256 of the manifest'

/** The ceiling is sent writes of the same shape and size, over and over (it keeps nothing). */
function ceilingLoad(child: Child<{ readonly url: string }>, writes: readonly Write[]): Contender {
  return {
    name: CEILING,
    async measure(seconds) {
      const http = new HttpClient(child.ready.url)
      const turns = Array.from({ length: WRITERS }, (_, i) => i)
      try {
        return await closedLoop({ concurrency: WRITERS, seconds, subjectCpu: () => child.cpuSeconds() }, async (worker) => {
          const turn = (turns[worker] ?? 0) + WRITERS
          turns[worker] = turn
          const write = writes[turn % writes.length]
          if (write === undefined) throw new Error('no write')
          await sendWrite(http, write)
          return 1
        })
      } finally {
        http.close()
      }
    },
  }
}

export const lifecycle: Scenario = {
  name: 'lifecycle',
  summary: `POST /v1/albums/{id}/ops, a create with 3 blobs already uploaded, ${WRITERS} in flight on ${WRITERS} albums; ceiling: ${CEILING}`,
  async run(context) {
    const subjects: Array<[subject: string, target: Target | null]> = []

    const sqlite = await startCoffer(context, { engine: 'sqlite', logLevel: 'info', env: WRITE_SERVER_ENV })
    const writers = await writersOn(sqlite)
    // The ceiling's bodies: real writes of this server's writers (made ready, never sent to it).
    const ceilingWrites = await inParallel(
      Array.from({ length: 64 }, (_, i) => i),
      8,
      (i) => prepareWrite(writers[i % writers.length] as Writer),
    )
    const ceiling = await startChild<{ url: string }>('servers/bare-lifecycle.ts')
    context.defer(() => ceiling.stop())
    const contenders = [ceilingLoad(ceiling, ceilingWrites), preparedContender(writeLoad('lifecycle, coffer sqlite', sqlite, writers))]
    subjects.push(['lifecycle, coffer sqlite', null])

    const notes = [
      `Each write: ${WRITE_SHAPE}; the signed manifest is about ${Math.round((ceilingWrites[0]?.body.length ?? 0) / 1024)} KiB of JSON. Sessions, uploads and signatures are made before each measurement (at most ${MAX_WRITE_BATCH} writes, BENCH_LIFECYCLE_BATCH): a measurement may end early when its batch is spent.`,
    ]
    if (context.postgresUrl !== null) {
      const postgres = await startCoffer(context, { engine: 'postgres', logLevel: 'info', env: WRITE_SERVER_ENV })
      contenders.push(preparedContender(writeLoad('lifecycle, coffer postgres', postgres, await writersOn(postgres))))
      subjects.push(['lifecycle, coffer postgres', null])
    } else {
      notes.push(POSTGRES_SKIPPED)
    }
    return measureAgainst(context, 'lifecycle', contenders, subjects, CEILING, 'write', notes)
  },
}
