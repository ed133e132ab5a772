// import: `coffer-photos import takeout` of a Google Takeout export against `coffer-photos
// backup` of a folder of the same photos (issue 42), each the real CLI process from a cold start
// (a new account and config folder, set up just before, not timed), timed from its start to its
// exit, alternated on the same server. The photos: the backup scenario's generator
// (BENCH_IMPORT_PHOTOS, 2,000 by default: the backup scenario's very library when BENCH_PHOTOS is
// the same, shared in a run of both), written once as that folder and once as an export
// (lib/takeout-export.ts): every photo in a "Photos from 20xx" folder with its sidecar, about one
// in ten also in 2-3 of 5 album folders (each with a metadata.json, each copy with its sidecar),
// in 2 deflated zip archives. The ceiling is the backup: the same photos, hashed, described,
// encrypted and sent the same way, without the archives, sidecars or album copies. Rows: photos
// and MiB per second against it; and the import up to its last photo stored (the copies into the
// further albums left out), from its `file` events' times. Checks: where the import's time went
// (start-up and plan, photos stored, copies), resident memory and CPU per photo of both.
import { rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { alternate, pool, type Measured } from '../lib/measure.ts'
import {
  jobSchedule,
  generatedLibrary,
  photoLibrary,
  PHOTO_LIBRARY_OPTIONS,
  photoRows,
  photosAccount,
  photosContender,
  photoServer,
  positiveInteger,
  runChecks,
  type PhotoLibrary,
  type RunTrace,
} from '../lib/photos.ts'
import { POSTGRES_SKIPPED, row, type BenchContext, type Check, type Row, type Scenario } from '../lib/scenario.ts'
import { writeTakeoutExport, type TakeoutExport } from '../lib/takeout-export.ts'

/** Photos (and small videos) in the library and its export. */
const PHOTOS = positiveInteger('BENCH_IMPORT_PHOTOS', 2000)
const ALBUM = 'Bench'
const EXPORT = { seed: 2042, archives: 2, albums: 5, inAlbumsShare: 0.1 } as const

/** When an import's events came, in seconds from its spawn. */
interface ImportPhases {
  /** Its `plan` event: archives listed, photos matched with their sidecars, signed in not yet. */
  plan: number | null
  firstFile: number | null
  lastFile: number | null
  summary: number | null
  /** The summary's own `seconds` (from after the plan and the sign-in to the summary). */
  reported: number | null
  copies: number
}

const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)
const s = (seconds: number): string => `${seconds.toFixed(1)} s`

/** The backup scenario's library when the counts agree (shared in a run of both), else one of BENCH_IMPORT_PHOTOS from the same generator and seed. */
async function library(context: BenchContext): Promise<PhotoLibrary> {
  if (PHOTOS === PHOTO_LIBRARY_OPTIONS.count) return photoLibrary(context, 'photos')
  return generatedLibrary(context, 'import', { ...PHOTO_LIBRARY_OPTIONS, count: PHOTOS })
}

export const importTakeout: Scenario = {
  name: 'import',
  summary:
    'coffer-photos import takeout of a Google Takeout export (2 zip archives, sidecars, album copies) against coffer-photos backup of a folder of the same photos',
  async run(context) {
    const photos = await library(context)
    const t0 = performance.now()
    const exportFolder = path.join(context.workDir, `takeout-${photos.files.length}`)
    const files = await Promise.all(photos.files.map(async (file) => ({ file, size: (await stat(file)).size })))
    const exported: TakeoutExport = await writeTakeoutExport(exportFolder, files, EXPORT)
    context.defer(() => rm(exportFolder, { recursive: true, force: true }))
    context.log(
      `  export: ${exported.photos} photos in year folders with a sidecar each, ${exported.inAlbums} also in ${exported.albums} albums (${exported.copies} album copies), ` +
        `${exported.archives.length} archives of ${(exported.archiveBytes / 2 ** 20).toFixed(0)} MiB, written in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    )
    const engines = context.postgresUrl === null ? (['sqlite'] as const) : (['sqlite', 'postgres'] as const)
    const rows: Row[] = []
    const checks: Check[] = []
    const measured: Measured[] = []
    for (const engine of engines) {
      const server = await photoServer(context, engine)
      const backupName = `coffer-photos backup of the folder, ${photos.name}, coffer ${engine}`
      const importName = `coffer-photos import takeout, the same in ${exported.archives.length} archives, coffer ${engine}`
      const backupTraces: RunTrace[] = []
      const importTraces: RunTrace[] = []
      const phases: ImportPhases[] = []
      const backup = photosContender(
        backupName,
        server,
        photos,
        backupTraces,
        async () => ({ home: await photosAccount(context, server), args: ['backup', photos.folder, '--album', ALBUM] }),
        (summary) =>
          summary.stored === photos.files.length && summary.failed === 0
            ? null
            : `stored ${summary.stored} of ${photos.files.length} files, ${summary.failed} failed`,
      )
      const importing = photosContender(
        importName,
        server,
        photos,
        importTraces,
        async () => {
          const run: ImportPhases = { plan: null, firstFile: null, lastFile: null, summary: null, reported: null, copies: 0 }
          phases.push(run)
          return {
            home: await photosAccount(context, server),
            args: ['import', 'takeout', ...exported.archives],
            events: {
              startEvent: 'plan',
              onEvent: (event, at) => {
                if (event.event === 'plan') run.plan = at
                else if (event.event === 'file') {
                  run.firstFile ??= at
                  run.lastFile = at
                } else if (event.event === 'copy') run.copies++
                else if (event.event === 'summary') {
                  run.summary = at
                  run.reported = typeof event.seconds === 'number' ? event.seconds : null
                }
              },
            },
          }
        },
        (summary) => {
          const problems: string[] = []
          const copies = summary.copies as { added: number; present: number; failed: number }
          const matched = summary.with_sidecar as { own: number }
          if (summary.photos !== photos.files.length) problems.push(`${summary.photos} photos planned, ${photos.files.length} in the export`)
          if (summary.imported !== photos.files.length || summary.failed !== 0)
            problems.push(`imported ${summary.imported} of ${photos.files.length}, ${summary.failed} failed`)
          if (copies.added !== exported.copies || copies.failed !== 0)
            problems.push(`${copies.added} album copies added of ${exported.copies}, ${copies.failed} failed`)
          if (matched.own !== photos.files.length) problems.push(`${matched.own} photos matched with their own sidecar of ${photos.files.length}`)
          return problems.length === 0 ? null : problems.join('; ')
        },
      )
      const results = await alternate([backup, importing], jobSchedule(context.schedule), context.log)
      rows.push(...photoRows('import', results, photos, [{ name: importName, engine }], backupName, null))

      // The same runs up to the import's last photo stored: its copies into further albums left out.
      const whole = results.get(importName)!
      const storedName = `${importName}, to its last photo stored (album copies left out)`
      const rounds = whole.rounds.map((m, i) => {
        const seconds = phases[i]?.lastFile ?? m.seconds
        return { ...m, seconds, rate: m.completed / seconds }
      })
      const stored: Measured = { name: storedName, rounds, pooled: pool(rounds) }
      rows.push(row('import', new Map([...results, [storedName, stored]]), storedName, backupName, null, 'file'))
      measured.push(...results.values(), stored)

      const done = phases.filter((p) => p.plan !== null && p.firstFile !== null && p.lastFile !== null && p.summary !== null)
      if (done.length > 0) {
        const copiesS = mean(done.map((p) => p.summary! - p.lastFile!))
        const copies = mean(done.map((p) => p.copies))
        const wall = mean(importTraces.map((t) => t.seconds))
        checks.push({
          scenario: 'import',
          name: `coffer-photos import takeout, coffer ${engine}: where the time went (mean of ${done.length} run${done.length === 1 ? '' : 's'})`,
          value:
            `plan (start-up, archives listed, sidecars matched) ${s(mean(done.map((p) => p.plan!)))}; sign-in to first photo stored ${s(mean(done.map((p) => p.firstFile! - p.plan!)))}; ` +
            `photos stored ${s(mean(done.map((p) => p.lastFile! - p.firstFile!)))}; album copies ${s(copiesS)} (${copies.toFixed(0)} copies, ${copies === 0 ? '-' : ((copiesS * 1000) / copies).toFixed(1)} ms each); ` +
            `summary to exit ${s(wall - mean(done.map((p) => p.summary!)))}; wall ${s(wall)} (its summary's seconds: ${s(mean(done.map((p) => p.reported ?? 0)))})`,
          target: '-',
          pass: null,
        })
      }
      checks.push(
        ...runChecks('import', `coffer-photos import takeout, coffer ${engine}`, photos, importTraces),
        ...runChecks('import', `coffer-photos backup of the folder, coffer ${engine}`, photos, backupTraces),
      )
    }
    const notes = [
      `Each measurement is one whole job from a cold start (a new account, config folder and state store), timed from the CLI's start to its exit, no warm-up; BENCH_PHOTOS_ROUNDS per contender (default 1), backup and import alternated. The ceiling is the backup of the same photos from a folder (its album "${ALBUM}"); the import reads them from ${exported.archives.length} deflated zip archives (${(exported.archiveBytes / 2 ** 20).toFixed(0)} MiB, in the page cache), each photo with its sidecar, into the album "Google Photos", then adds ${exported.copies} album copies (${exported.inAlbums} photos in 2-3 of ${exported.albums} albums) without sending them again.`,
      `"to its last photo stored": the same import runs, timed to their last "file" event (the album copies come after it). Resident memory of the import: growth from its "plan" event (archives listed, before the sign-in).`,
    ]
    if (context.postgresUrl === null) notes.push(POSTGRES_SKIPPED)
    return { rows, checks, measured, notes }
  },
}
