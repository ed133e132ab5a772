// library: the photo client at the size of a real library, end to end. BENCH_LIBRARY_PHOTOS
// generated photos and small videos (10,000 by default, of varied sizes, about 0.26 MiB each, in
// nested folders) are backed up by `coffer-photos backup` from device 1 (a new account, set up
// just before), verified deep there (`verify --deep`: the server re-hashes every blob, device 1
// downloads and decrypts every one and checks every custody receipt against the server's
// attestation keys), then a second config folder joins the account through the enrollment relay
// (`device add` on device 1 and `join` on device 2, each answering yes to the same 6-digit code on
// stdin), restores the album into an empty folder and checks every receipt again (`verify`);
// every restored file is then compared byte for byte with its original; a third config folder of
// the account, which never saw the album, verifies it too (its history check verifies every
// entry's signature: the cost of checking a library's history, decision 0065). Each phase is the real
// CLI, timed from its start to its exit, its resident memory sampled. Ceilings, measured once in
// the same run over the same files: those of the backup and restore scenarios
// (servers/photos-raw.ts), against which the rows hold backup and restore to their targets.
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { events, readJson, spawnPhotos, waitForEvent, type PhotosProcess } from '../../test/support/photos-cli.ts'
import type { PhotosRawResult, PhotosRawRun } from '../servers/photos-raw.ts'
import { PASSWORD } from '../lib/albums.ts'
import { startChild } from '../lib/child.ts'
import type { CofferChild } from '../lib/coffer.ts'
import { inParallel } from '../lib/loop.ts'
import { alternate, type Contender, type Measured } from '../lib/measure.ts'
import {
  CEILING_CONCURRENCY,
  generatedLibrary,
  jobSchedule,
  photoRows,
  photosAccount,
  photosContender,
  photoServer,
  positiveInteger,
  rawContender,
  runChecks,
  TARGETS,
  type Engine,
  type PhotoLibrary,
  type RunTrace,
} from '../lib/photos.ts'
import { POSTGRES_SKIPPED, type BenchContext, type Check, type Row, type Scenario, type ScenarioResult, type Target } from '../lib/scenario.ts'

const ENCRYPT = 'raw read + AES-256-GCM + write + fsync per file'
const WITH_DERIVATIVES = 'raw read + derivatives (describeMedia, sharp) + AES-256-GCM + write + fsync per file'
const DECRYPT = 'raw read + AES-256-GCM open + write + fsync per file'
const ALBUM = 'Library'
/** The most of a plain verify's time its check of the album's history may take (issue 38: "a small fraction"). */
const HISTORY_SHARE = 0.2

/** What one phase of the run did: its figures go to the checks. */
interface Phase {
  readonly label: string
  readonly seconds: number
  readonly files: number
}

/** A verify summary's counts, kept for the receipts check. */
interface VerifySummary {
  readonly assets: number
  readonly blobs: number
  readonly receipts: number
  readonly failed: number
  readonly deepPending: number
  /** Of the run's time, the check of the album's history (decision 0065), in seconds. */
  readonly historySeconds: number
}

/** Measures one whole job once (the phases depend on each other: none is repeated). */
async function once(context: BenchContext, contender: Contender): Promise<Measured> {
  const measured = await alternate([contender], { ...jobSchedule(context.schedule), rounds: 1 }, context.log)
  return measured.get(contender.name)!
}

/** SHA-256 of a file, streamed. */
async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256')
  await pipeline(createReadStream(file), hash)
  return hash.digest('hex')
}

/**
 * Whether `dest` holds exactly the library: each file under its own relative path with the same
 * bytes, and no other file (a left-over partial file among them). Answers what differs, or null.
 */
async function compareRestored(library: PhotoLibrary, dest: string): Promise<string | null> {
  const relative = library.files.map((file) => path.relative(library.folder, file))
  const differing: string[] = []
  await inParallel(relative, CEILING_CONCURRENCY, async (name) => {
    const [original, restored] = await Promise.all([sha256Of(path.join(library.folder, name)), sha256Of(path.join(dest, name)).catch(() => 'missing')])
    if (original !== restored) differing.push(name)
  })
  const present = (await readdir(dest, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).length
  if (differing.length > 0) return `${differing.length} of ${relative.length} files differ or are missing, e.g. ${differing.slice(0, 3).join(', ')}`
  return present === relative.length ? null : `${present} files in the restored folder, the library has ${relative.length}`
}

/** Answers yes to the "same code?" question and closes stdin. */
function sayYes(run: PhotosProcess): void {
  run.write('yes\n')
  run.endStdin()
}

/**
 * Device 2 (config folder `home2`) joins the account of device 1 (`home1`) through the relay, as
 * a person would with the two commands: `device add` shows the pairing code, `join` redeems it,
 * both show the same 6-digit code and both are told yes. Answers the seconds from the start of
 * `device add` to the exit of both; throws unless the two codes match and both exit 0.
 */
async function joinThroughRelay(server: CofferChild, home1: string, home2: string): Promise<number> {
  const { email } = await readJson(home1, 'account.json')
  const t0 = performance.now()
  const add = spawnPhotos(home1, ['device', 'add', '--password-stdin', '--json'], { stdin: `${PASSWORD}\n`, keepStdinOpen: true })
  const pairing = await waitForEvent(add, 'pairing_code')
  const join = spawnPhotos(
    home2,
    ['join', server.ready.url, String(pairing.pairing_code), '--email', email!, '--password-stdin', '--device-name', 'Device 2', '--json'],
    {
      stdin: `${PASSWORD}\n`,
      keepStdinOpen: true,
    },
  )
  const [added, joined] = await Promise.all([waitForEvent(add, 'sas'), waitForEvent(join, 'sas')])
  if (added.sas !== joined.sas) throw new Error(`the two devices show different codes: ${String(added.sas)} and ${String(joined.sas)}`)
  sayYes(join)
  sayYes(add)
  const [ranAdd, ranJoin] = await Promise.all([add.done, join.done])
  const seconds = (performance.now() - t0) / 1000
  for (const [name, run] of [
    ['device add', ranAdd],
    ['join', ranJoin],
  ] as const) {
    if (run.code !== 0) throw new Error(`coffer-photos ${name} failed (exit ${run.code}): ${run.stderr}`)
  }
  if (!events(ranJoin).some((e) => e.event === 'joined')) throw new Error(`coffer-photos join printed no "joined" event: ${ranJoin.stdout}`)
  return seconds
}

/** A third config folder on device 1's account, as joining leaves one (its own session, the account's keys): it has never seen an album. */
async function copyAccount(server: CofferChild, home1: string, home3: string): Promise<void> {
  const { email } = await readJson(home1, 'account.json')
  const login = await spawnPhotos(home3, ['login', server.ready.url, '--email', email!, '--password-stdin'], { stdin: `${PASSWORD}\n` }).done
  if (login.code !== 0) throw new Error(`coffer-photos login failed (exit ${login.code}): ${login.stderr}`)
  await copyFile(path.join(home1, 'keys.json'), path.join(home3, 'keys.json'))
}

function verifySummary(summary: Record<string, unknown>): VerifySummary {
  return {
    assets: Number(summary.assets),
    blobs: Number(summary.blobs),
    receipts: Number(summary.receipts),
    failed: Number(summary.failed),
    deepPending: Number(summary.deep_pending),
    historySeconds: Number(summary.history_seconds),
  }
}

/** A verify run's problem for the measurement (null: every asset of the library and the album record verified). */
function verifyProblem(summary: VerifySummary, library: PhotoLibrary): string | null {
  if (summary.failed !== 0) return `${summary.failed} of ${summary.assets} assets not verified`
  return summary.assets === library.files.length + 1 ? null : `verified ${summary.assets} assets, the album holds ${library.files.length + 1}`
}

/** The whole run on one engine's server: its rows against the ceilings, its checks, and what it measured. */
async function onEngine(
  context: BenchContext,
  engine: Engine,
  library: PhotoLibrary,
  ceilings: ReadonlyMap<string, Measured>,
): Promise<{ rows: Row[]; checks: Check[]; measured: Measured[] }> {
  const server = await photoServer(context, engine)
  const on = `coffer ${engine}, ${library.name}`
  const home1 = await photosAccount(context, server)
  const home2 = path.join(await mkdtemp(path.join(context.workDir, 'photos-home-')), 'device-2')
  const home3 = path.join(await mkdtemp(path.join(context.workDir, 'photos-home-')), 'device-3')
  const dest = await mkdtemp(path.join(context.workDir, 'restored-'))
  const phases: Phase[] = []
  const checks: Check[] = []
  const measured: Measured[] = []
  const traces = new Map<string, RunTrace[]>()
  const verified = new Map<string, VerifySummary>()

  /** One phase: coffer-photos run once with `home` and `args`, `check` reading its summary. */
  const phase = async (
    label: string,
    home: string,
    args: readonly string[],
    check: (summary: Record<string, unknown>) => string | null,
    progressEvent = 'file',
  ): Promise<Measured> => {
    const name = `library: ${label}, ${on}`
    const phaseTraces: RunTrace[] = []
    traces.set(label, phaseTraces)
    const result = await once(
      context,
      photosContender(name, server, library, phaseTraces, async () => ({ home, args, progressEvent }), check),
    )
    phases.push({ label, seconds: result.pooled.seconds, files: library.files.length })
    measured.push(result)
    return result
  }
  const verifyCheck = (label: string) => (summary: Record<string, unknown>) => {
    const counts = verifySummary(summary)
    verified.set(label, counts)
    return verifyProblem(counts, library)
  }

  const backup = await phase('backup on device 1', home1, ['backup', library.folder, '--album', ALBUM], (summary) =>
    summary.stored === library.files.length && summary.failed === 0
      ? null
      : `stored ${String(summary.stored)} of ${library.files.length} files, ${String(summary.failed)} failed`,
  )
  const deepVerify = await phase('verify --deep on device 1', home1, ['verify', ALBUM, '--deep'], verifyCheck('verify --deep on device 1'), 'asset')
  const joinSeconds = await joinThroughRelay(server, home1, home2)
  context.log(`  device 2 joined through the relay in ${joinSeconds.toFixed(1)} s`)
  const restore = await phase('restore on device 2', home2, ['restore', ALBUM, dest], (summary) =>
    summary.restored === library.files.length && summary.failed === 0
      ? null
      : `restored ${String(summary.restored)} of ${library.files.length} files, ${String(summary.failed)} failed`,
  )
  const compared = performance.now()
  const difference = await compareRestored(library, dest)
  context.log(`  compared the restored files with the originals in ${((performance.now() - compared) / 1000).toFixed(1)} s`)
  await rm(dest, { recursive: true, force: true })
  await phase('verify on device 2', home2, ['verify', ALBUM], verifyCheck('verify on device 2'), 'asset')
  // A device that never saw the album: its history check verifies every entry's signature.
  await copyAccount(server, home1, home3)
  await phase('verify on device 3 (new)', home3, ['verify', ALBUM], verifyCheck('verify on device 3 (new)'), 'asset')

  const scenario = 'library'
  const all = new Map([...ceilings, ...measured.map((m) => [m.name, m] as const)])
  const against = (subject: Measured, ceiling: string, target: Target | null) =>
    photoRows(scenario, all, library, [{ name: subject.name, engine }], `${ceiling}: ${library.name}`, target)
  const rows = [
    ...against(backup, ENCRYPT, TARGETS.backupVsRawFloor),
    ...against(backup, WITH_DERIVATIVES, TARGETS.backupVsDerivatives),
    ...against(restore, DECRYPT, TARGETS.restoreVsRaw),
    // Deep verification downloads and decrypts every blob as restore does, and writes nothing: for information.
    ...against(deepVerify, DECRYPT, null),
  ]
  for (const { label, seconds, files } of [
    ...phases.slice(0, 2),
    { label: 'device 2 joins through the relay (device add + join)', seconds: joinSeconds, files: 0 },
    ...phases.slice(2),
  ]) {
    checks.push({
      scenario,
      name: `${label}, ${on}: wall time`,
      value: `${seconds.toFixed(1)} s${files > 0 ? ` (${(files / seconds).toFixed(1)} files/s)` : ''}`,
      target: '-',
      pass: null,
    })
  }
  for (const [label, phaseTraces] of traces) checks.push(...runChecks(scenario, `${label}, coffer ${engine}`, library, phaseTraces))
  checks.push({
    scenario,
    name: `restored on device 2, ${on}: byte for byte against the originals`,
    value: difference ?? `all ${library.files.length} files identical, no other file`,
    target: 'every file, nothing else',
    pass: difference === null,
  })
  const phaseSeconds = new Map(phases.map((p) => [p.label, p.seconds]))
  for (const [label, counts] of verified) {
    const seconds = phaseSeconds.get(label)!
    // Device 1 checks each entry's signature once (its backup noted them unchecked), device 3 every one; device 2's restore checked them first.
    checks.push({
      scenario,
      name: `${label}, ${on}: the check of the album's history (${library.files.length + 1} entries), of the run's wall time`,
      value: `${counts.historySeconds.toFixed(2)} s of ${seconds.toFixed(1)} s (${((100 * counts.historySeconds) / seconds).toFixed(1)} %)`,
      target: label.includes('--deep') ? '-' : `<= ${100 * HISTORY_SHARE} %`,
      pass: label.includes('--deep') ? null : counts.historySeconds <= HISTORY_SHARE * seconds,
    })
    checks.push({
      scenario,
      name: `${label}, ${on}: blobs backed by a custody receipt verified here`,
      value: `${counts.blobs} blobs of ${counts.assets} assets, ${counts.receipts} receipts; ${counts.failed} assets not verified${label.includes('--deep') ? `; ${counts.deepPending} blobs not re-hashed by the server` : ''}`,
      target: 'every blob',
      pass: counts.failed === 0 && counts.receipts >= counts.blobs && (!label.includes('--deep') || counts.deepPending === 0),
    })
  }
  return { rows, checks, measured }
}

export interface LibraryRun {
  /** Generated photos and small videos in the library. */
  readonly photos: number
  /** The engines to run it on; SQLite, and PostgreSQL when the run has a URL for it, unless given. */
  readonly engines?: readonly Engine[]
}

/** The scenario for a library of `run.photos` (test/e2e/library.test.ts runs a small one on the suite's engine). */
export function libraryScenario(run: LibraryRun): Scenario {
  return {
    name: 'library',
    summary: `a library of ${run.photos.toLocaleString('en-US')} generated photos (BENCH_LIBRARY_PHOTOS) backed up from device 1, verified deep, restored byte-identical on device 2 joined through the relay; ceilings: ${WITH_DERIVATIVES}, ${DECRYPT}, one process`,
    run: (context) => runLibrary(context, run),
  }
}

export const library = libraryScenario({ photos: positiveInteger('BENCH_LIBRARY_PHOTOS', 10_000) })

async function runLibrary(context: BenchContext, run: LibraryRun): Promise<ScenarioResult> {
  const photos = await generatedLibrary(context, 'library', { count: run.photos, seed: 2027, subfolders: 8 })
  const raw = await startChild<unknown>('servers/photos-raw.ts')
  context.defer(() => raw.stop())
  const engines = run.engines ?? (context.postgresUrl === null ? (['sqlite'] as const) : (['sqlite', 'postgres'] as const))

  // The ceilings once, before any server works: the decrypt ceiling reads what an unmeasured encrypt wrote.
  const encrypted = path.join(context.workDir, 'library-raw-encrypted')
  const sealed = await raw.request<PhotosRawResult>({
    kind: 'encrypt',
    files: photos.files,
    directory: encrypted,
    concurrency: CEILING_CONCURRENCY,
  } satisfies PhotosRawRun)
  const ceilings = await alternate(
    [
      rawContender(`${ENCRYPT}: ${photos.name}`, raw, context, photos, { kind: 'encrypt', files: photos.files }),
      rawContender(`${WITH_DERIVATIVES}: ${photos.name}`, raw, context, photos, { kind: 'encrypt', files: photos.files, derivatives: true }),
      rawContender(`${DECRYPT}: ${photos.name}`, raw, context, photos, { kind: 'decrypt', files: sealed.outputs }),
    ],
    { ...jobSchedule(context.schedule), rounds: 1 },
    context.log,
  )
  await rm(encrypted, { recursive: true, force: true })

  const rows: Row[] = []
  const checks: Check[] = []
  const measured: Measured[] = [...ceilings.values()]
  for (const engine of engines) {
    const result = await onEngine(context, engine, photos, ceilings)
    rows.push(...result.rows)
    checks.push(...result.checks)
    measured.push(...result.measured)
  }
  const notes = [
    `Each phase is one whole run of coffer-photos, once (each needs the one before), timed from the CLI's start to its exit; the ceilings are measured once each, before. The library's files are in the page cache (written just before). The server's deep-scan budget is unbounded here (DEEP_SCAN_BUDGET_BYTES), so that verify --deep has it re-hash every blob.`,
    `Resident memory: VmRSS of coffer-photos every 50 ms; growth = the highest from its "start" event (signed in, the album found or planned) to its exit, minus the value at that event.`,
  ]
  if (!engines.includes('postgres')) notes.push(POSTGRES_SKIPPED)
  return { rows, checks, measured, notes }
}
