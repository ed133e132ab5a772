// restore: `coffer-photos restore` of an album into an empty folder, the real CLI process timed
// from its start to its exit: it lists the album (each manifest's signature checked, each
// metadata blob downloaded and opened), then downloads each original, checks its hash, decrypts
// it and writes it under its name, fsynced, with its modification time. The albums hold the
// backup scenario's libraries (BENCH_PHOTOS photos and small videos; one big video of
// BENCH_PHOTOS_BIG_MIB): those the backup scenario stored when it ran before in the same run,
// else stored by coffer-photos here before the measurements. Its resident memory is sampled
// throughout. Ceiling: servers/photos-raw.ts reading the same files encrypted (as it wrote them)
// from local disk, decrypting each 64 KiB chunk and writing the plaintext with an fsync per
// file, in one process.
import { mkdtemp, rm } from 'node:fs/promises'
import path from 'node:path'
import type { PhotosRawResult, PhotosRawRun } from '../servers/photos-raw.ts'
import { startChild } from '../lib/child.ts'
import { alternate, type Measured } from '../lib/measure.ts'
import {
  CEILING_CONCURRENCY,
  jobSchedule,
  photoLibrary,
  photoRows,
  photosAccount,
  photosContender,
  photoServer,
  rawContender,
  rememberAlbum,
  runChecks,
  runPhotos,
  storedAlbum,
  TARGETS,
  type Engine,
  type PhotoLibrary,
  type RunTrace,
  type StoredAlbum,
} from '../lib/photos.ts'
import { POSTGRES_SKIPPED, type BenchContext, type Check, type Row, type Scenario } from '../lib/scenario.ts'

const CEILING = 'raw read + AES-256-GCM open + write + fsync per file'

/** The album holding `library` on the run's `engine` server: the backup scenario's, or one stored now (not measured). */
async function albumOf(context: BenchContext, engine: Engine, library: PhotoLibrary): Promise<StoredAlbum> {
  const stored = storedAlbum(context, engine, library)
  if (stored !== null) return stored
  const made = { home: await photosAccount(context, await photoServer(context, engine)), album: 'Bench' }
  const run = await runPhotos(made.home, ['backup', library.folder, '--album', made.album], library.files.length)
  context.log(`  stored ${library.name} on coffer ${engine} (${run.seconds.toFixed(1)} s, not measured)`)
  rememberAlbum(context, engine, library, made)
  return made
}

export const restore: Scenario = {
  name: 'restore',
  summary: `coffer-photos restore of an album of generated photos into an empty folder, and of one big video; ceiling: ${CEILING}, one process`,
  async run(context) {
    const libraries = [await photoLibrary(context, 'photos'), await photoLibrary(context, 'big')]
    const raw = await startChild<unknown>('servers/photos-raw.ts')
    context.defer(() => raw.stop())
    const engines = context.postgresUrl === null ? (['sqlite'] as const) : (['sqlite', 'postgres'] as const)

    const rows: Row[] = []
    const checks: Check[] = []
    const measured: Measured[] = []
    for (const [i, library] of libraries.entries()) {
      const ceiling = `${CEILING}: ${library.name}`
      const encrypted = path.join(context.workDir, `raw-encrypted-${i}`)
      const sealed = await raw.request<PhotosRawResult>({
        kind: 'encrypt',
        files: library.files,
        directory: encrypted,
        concurrency: CEILING_CONCURRENCY,
      } satisfies PhotosRawRun)
      const traces = new Map(engines.map((engine) => [engine, [] as RunTrace[]]))
      const subjects = []
      for (const engine of engines) {
        const server = await photoServer(context, engine)
        const { home, album } = await albumOf(context, engine, library)
        const name = `coffer-photos restore, ${library.name}, coffer ${engine}`
        subjects.push({
          name,
          engine,
          contender: photosContender(
            name,
            server,
            library,
            traces.get(engine)!,
            async () => {
              const dest = await mkdtemp(path.join(context.workDir, 'restored-'))
              return { home, args: ['restore', album, dest], cleanUp: () => rm(dest, { recursive: true, force: true }) }
            },
            (summary) =>
              summary.restored === library.files.length && summary.failed === 0
                ? null
                : `restored ${summary.restored} of ${library.files.length} files, ${summary.failed} failed`,
          ),
        })
      }
      const results = await alternate(
        [rawContender(ceiling, raw, context, library, { kind: 'decrypt', files: sealed.outputs }), ...subjects.map((s) => s.contender)],
        jobSchedule(context.schedule),
        context.log,
      )
      await rm(encrypted, { recursive: true, force: true })
      rows.push(...photoRows('restore', results, library, subjects, ceiling, library.kind === 'photos' ? TARGETS.restoreVsRaw : null))
      measured.push(...results.values())
      for (const [engine, engineTraces] of traces) checks.push(...runChecks('restore', `coffer-photos restore, coffer ${engine}`, library, engineTraces))
    }
    const notes = [
      `Each measurement is one whole restore into a new empty folder (removed after it), timed from the CLI's start to its exit, no warm-up; BENCH_PHOTOS_ROUNDS per contender (default 1). The server's blobs and the ceiling's encrypted files were written shortly before: both are read from the page cache. Subject CPU: coffer-photos, the server and PostgreSQL's backends; no per-file latency for coffer-photos (p50 and p99 read 0).`,
      `Resident memory: VmRSS of coffer-photos every 50 ms; growth = the highest from its "start" event (signed in, the album planned from the feed: no file opened yet; files are then opened a window at a time) to its exit, minus the value at that event.`,
    ]
    if (context.postgresUrl === null) notes.push(POSTGRES_SKIPPED)
    return { rows, checks, measured, notes }
  },
}
