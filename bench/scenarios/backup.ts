// backup: `coffer-photos backup` of a generated photo library (BENCH_PHOTOS photos and small
// videos, 2,000 of about 0.26 MiB by default) from a cold start: a fresh config folder with an
// empty state store, logged in and set up just before, an empty album, the real CLI process
// timed from its start to its exit. It hashes and encrypts each file, makes a thumbnail and a
// preview with sharp, uploads, and signs a manifest per file. The same for a second library of
// one big video (BENCH_PHOTOS_BIG_MIB, 1 GiB). The CLI's resident memory is sampled throughout.
// Ceiling: servers/photos-raw.ts reading the same files, encrypting them with AES-256-GCM in
// 64 KiB chunks and writing them to local disk with an fsync per file, in one process. Second
// ceiling, for the photos, the one their target is set against (TARGETS): the same with the
// derivatives coffer-photos makes (its describeMedia, sharp), sealed after each original.
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
  TARGETS,
  type RunTrace,
} from '../lib/photos.ts'
import { POSTGRES_SKIPPED, type Check, type Row, type Scenario } from '../lib/scenario.ts'

const CEILING = 'raw read + AES-256-GCM + write + fsync per file'
const WITH_DERIVATIVES = 'raw read + derivatives (describeMedia, sharp) + AES-256-GCM + write + fsync per file'
const ALBUM = 'Bench'

export const backup: Scenario = {
  name: 'backup',
  summary: `coffer-photos backup of a generated library from a cold start, and of one big video; ceiling: ${CEILING}, one process`,
  async run(context) {
    const libraries = [await photoLibrary(context, 'photos'), await photoLibrary(context, 'big')]
    const raw = await startChild<unknown>('servers/photos-raw.ts')
    context.defer(() => raw.stop())
    const engines = context.postgresUrl === null ? (['sqlite'] as const) : (['sqlite', 'postgres'] as const)
    const servers = await Promise.all(engines.map(async (engine) => ({ engine, server: await photoServer(context, engine) })))

    const rows: Row[] = []
    const checks: Check[] = []
    const measured: Measured[] = []
    for (const library of libraries) {
      const ceiling = `${CEILING}: ${library.name}`
      const traces = new Map(engines.map((engine) => [engine, [] as RunTrace[]]))
      const subjects = servers.map(({ engine, server }) => {
        const name = `coffer-photos backup, ${library.name}, coffer ${engine}`
        return {
          name,
          engine,
          contender: photosContender(
            name,
            server,
            library,
            traces.get(engine)!,
            async () => {
              const home = await photosAccount(context, server)
              return { home, args: ['backup', library.folder, '--album', ALBUM] }
            },
            (summary, home) => {
              if (summary.stored !== library.files.length || summary.failed !== 0)
                return `stored ${summary.stored} of ${library.files.length} files, ${summary.failed} failed`
              rememberAlbum(context, engine, library, { home, album: ALBUM }) // the restore scenario restores it
              return null
            },
          ),
        }
      })
      context.log(`  ${library.name}: ${(library.bytes / 2 ** 20).toFixed(0)} MiB`)
      // A video has no derivatives: the second ceiling would be the first one again.
      const withDerivatives = library.kind === 'photos' ? `${WITH_DERIVATIVES}: ${library.name}` : null
      const ceilings = [rawContender(ceiling, raw, context, library, { kind: 'encrypt', files: library.files })]
      if (withDerivatives !== null)
        ceilings.push(rawContender(withDerivatives, raw, context, library, { kind: 'encrypt', files: library.files, derivatives: true }))
      const results = await alternate([...ceilings, ...subjects.map((s) => s.contender)], jobSchedule(context.schedule), context.log)
      rows.push(...photoRows('backup', results, library, subjects, ceiling, library.kind === 'photos' ? TARGETS.backupVsRawFloor : null))
      if (withDerivatives !== null) rows.push(...photoRows('backup', results, library, subjects, withDerivatives, TARGETS.backupVsDerivatives))
      measured.push(...results.values())
      for (const [engine, engineTraces] of traces) checks.push(...runChecks('backup', `coffer-photos backup, coffer ${engine}`, library, engineTraces))
    }
    const notes = [
      `Each measurement is one whole backup from a cold start (a new account, config folder and state store, an empty album), timed from the CLI's start to its exit, no warm-up; BENCH_PHOTOS_ROUNDS per contender (default 1). The library files are in the page cache on both sides (written just before). Subject CPU: coffer-photos, the server and PostgreSQL's backends; no per-file latency for coffer-photos (p50 and p99 read 0). The ceilings run ${CEILING_CONCURRENCY} files at a time, as coffer-photos by default.`,
      `Resident memory: VmRSS of coffer-photos every 50 ms; growth = the highest from its "start" event (loaded, signed in, album opened) to its exit, minus the value at that event.`,
    ]
    if (context.postgresUrl === null) notes.push(POSTGRES_SKIPPED)
    return { rows, checks, measured, notes }
  },
}
