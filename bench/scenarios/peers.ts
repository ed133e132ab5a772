// peers: coffer-photos beside restic and rclone on the same folder of photos, in one run (issue
// 37). Each measurement is one whole job, the real command in a process of its own, timed from
// its spawn to its exit, its CPU and its resident memory taken: a first backup into an empty
// store, the same backup again with nothing changed, and a restore into an empty folder.
// - restic (Debian's package): `restic backup <folder>` into a new local repository (encrypted,
//   deduplicated; `restic init` not timed), again into the same one, `restic restore latest`.
// - rclone (Debian's package), for information: `rclone copy <folder> peers:` to a crypt remote
//   over a new local folder, configured through environment variables only, then again.
// - coffer-photos: `backup <folder> --album Peers` from a new account on the run's Coffer on
//   SQLite, again in the same config folder, then `restore Peers <empty folder>`.
// Each coffer-photos job is a row against restic's matching one (restic's time over coffer-photos').
// Ceiling, measured in the same run: coffer-photos' own work on each photo with no server
// (servers/photos-raw.ts: read, describeMedia's derivatives, AES-256-GCM, write and fsync), as a
// row against restic too: the most a first backup could reach on this machine.
// The folders, made once per run with writePhoto: BENCH_PEERS_PHOTOS JPEGs (200) of 2 MP, as
// the issue's folder, and as many of 12 MP, as a phone takes them (BENCH_PEERS_PHONE=0: not).
// restic and rclone are installed with apt-get when either is not on PATH.
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { walkMedia } from '../../src/client/node/walk.ts'
import { writePhoto } from '../../test/support/photos.ts'
import { cpuWindow, reapedChildrenCpuSeconds } from '../lib/cpu.ts'
import { startChild, type Child } from '../lib/child.ts'
import { alternate, type Contender, type Measured } from '../lib/measure.ts'
import {
  jobMeasurement,
  jobSchedule,
  listLibrary,
  photosAccount,
  photosContender,
  photoServer,
  positiveInteger,
  rawContender,
  runSampled,
  type PhotoLibrary,
  type RunTrace,
} from '../lib/photos.ts'
import { row, type BenchContext, type Check, type Row, type Scenario, type Target } from '../lib/scenario.ts'

const run = promisify(execFile)
const MIB = 1024 * 1024
/** Photos in each folder. */
const PHOTOS = positiveInteger('BENCH_PEERS_PHOTOS', 200)
/** The folders: 2 MP as the issue's (about 0.65 MiB a photo), then 12 MP as a phone's (about 4.2 MiB) unless BENCH_PEERS_PHONE=0. */
const FOLDERS = [
  { label: '2 MP', width: 1600, height: 1200 },
  ...(process.env.BENCH_PEERS_PHONE === '0' ? [] : [{ label: '12 MP', width: 4032, height: 3024 }]),
]
const ALBUM = 'Peers'
const OWN_WORK = 'ceiling: raw read + derivatives (describeMedia) + AES-256-GCM + write + fsync, no server'
/** restic's repository password and rclone's crypt password. */
const PEER_PASSWORD = 'coffer-bench-peers'
/** coffer-photos against restic on the same job (issue 37). */
const TARGETS = { first: { min: 0.5 }, again: { min: 1 }, restore: { min: 0.5 } } as const satisfies Record<string, Target>
/** The most coffer-photos' first backup may hold resident, at its peak. */
const MEMORY_TARGET_MIB = 256

/** One measured job: wall time, the client's CPU (the server's for coffer-photos), its peak resident memory. */
interface Figures {
  readonly seconds: number
  readonly cpuS: number
  readonly serverCpuS: number | null
  readonly peak: number
}

/** A folder of PHOTOS JPEGs of `width` × `height` (one in four portrait) with capture dates, as coffer-photos walks it. */
async function photoFolder(context: BenchContext, { label, width, height }: (typeof FOLDERS)[number]): Promise<PhotoLibrary> {
  const folder = path.join(context.workDir, `peers-${width}x${height}`)
  const t0 = performance.now()
  const left = Array.from({ length: PHOTOS }, (_, n) => n)
  // Four at a time, as generateLibrary; the sizes are read from the folder afterwards.
  const worker = async (): Promise<void> => {
    for (let n = left.shift(); n !== undefined; n = left.shift()) {
      const portrait = n % 4 === 3
      const file = path.join(folder, `IMG_${String(n + 1).padStart(4, '0')}.jpg`)
      const captured = new Date(Date.UTC(2025, 5, 1) + n * 3_600_000)
      await writePhoto(file, { format: 'jpeg', width: portrait ? height : width, height: portrait ? width : height, seed: 3700 + n, captured })
    }
  }
  await Promise.all([worker(), worker(), worker(), worker()])
  return listLibrary(context, 'peers', folder, t0, `${PHOTOS} photos of ${label}`)
}

const errorText = (error: unknown): string => {
  const { stderr, message } = error as { stderr?: string; message?: string }
  return (stderr || message || String(error)).trim().split('\n').slice(-5).join(' / ')
}

/** restic's and rclone's versions; when either is not on PATH, Debian's packages installed first. */
async function peerVersions(context: BenchContext): Promise<string[]> {
  const versions = async () => [(await run('restic', ['version'])).stdout.trim(), (await run('rclone', ['version'])).stdout.split('\n')[0]!.trim()]
  try {
    return await versions()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  context.log('  restic or rclone is not on PATH: apt-get install -y restic rclone')
  try {
    await run('apt-get', ['install', '-y', 'restic', 'rclone'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, maxBuffer: 16 * MIB })
  } catch (error) {
    throw new Error(
      `peers needs restic and rclone, and \`apt-get install -y restic rclone\` failed (${errorText(error)}): install them (after apt-get update, as root) or put them on PATH`,
    )
  }
  const installed = await versions()
  context.log(`  installed: ${installed.join('; ')}`)
  return installed
}

/** Writes out what the jobs before left in the page cache (not timed), so that no job pays for another's writeback. */
async function flushWrites(): Promise<void> {
  await run('sync')
}

/** A restic or rclone job: its command, and whether it did what it should (null: it did; else the problem). */
interface PeerJob {
  readonly command: string
  readonly args: readonly string[]
  readonly env: Record<string, string>
  check(stdout: readonly string[], stderr: string): Promise<string | null> | string | null
  cleanUp?(): Promise<void>
}

/** A contender that is one whole restic or rclone job: `prepare` (not timed) makes its store and answers the job. */
function peerContender(name: string, library: PhotoLibrary, figures: Figures[], prepare: () => Promise<PeerJob>): Contender {
  return {
    name,
    async measure() {
      const job = await prepare()
      await flushWrites()
      const stdout: string[] = []
      const cpu0 = reapedChildrenCpuSeconds()
      const cpu = cpuWindow(reapedChildrenCpuSeconds)
      const done = await runSampled(job.command, job.args, { env: job.env, onLine: (line) => stdout.push(line) })
      const { subjectCores, loadgenCores, otherCores } = cpu.end()
      if (done.code !== 0) throw new Error(`${name} failed (exit ${done.code}): ${done.stderr}`)
      figures.push({ seconds: done.seconds, cpuS: reapedChildrenCpuSeconds() - cpu0, serverCpuS: null, peak: done.peak })
      const problem = await job.check(stdout, done.stderr)
      await job.cleanUp?.()
      return jobMeasurement(library.files.length, done.seconds, subjectCores, loadgenCores, otherCores, problem === null ? [] : [problem])
    },
  }
}

/** The last JSON object with `key` among `lines` (restic's --json summary, rclone's JSON log of its stats), or null. */
function lastJson(lines: readonly string[], key: string, value?: string): Record<string, unknown> | null {
  for (const line of [...lines].reverse()) {
    let object: Record<string, unknown>
    try {
      object = JSON.parse(line) as Record<string, unknown>
    } catch {
      continue // not JSON, or the start of stderr's tail cut through it
    }
    if (object !== null && typeof object === 'object' && key in object && (value === undefined || object[key] === value)) return object
  }
  return null
}

/** Whether `folder` holds the library's files again (as many, as many bytes), wherever below it. */
async function holdsLibrary(folder: string, library: PhotoLibrary): Promise<string | null> {
  let files = 0
  let bytes = 0
  for await (const file of walkMedia(folder)) {
    files++
    bytes += file.size
  }
  return files === library.files.length && bytes === library.bytes
    ? null
    : `restored ${files} files of ${bytes} bytes, the folder has ${library.files.length} of ${library.bytes}`
}

const mismatch = (what: string, actual: unknown, expected: unknown): string | null =>
  actual === expected ? null : `${what}: ${String(actual)}, expected ${expected}`
const firstProblem = (...problems: (string | null)[]): string | null => problems.find((p) => p !== null) ?? null

/** The contenders on one folder, in the order of a round; each job's figures under its contender's name. */
async function contenders(context: BenchContext, library: PhotoLibrary, figures: Map<string, Figures[]>, coffer: Map<string, RunTrace[]>, raw: Child<unknown>) {
  const files = library.files.length
  const names = {
    resticFirst: `restic backup, ${library.name}`,
    resticAgain: `restic backup again (unchanged), ${library.name}`,
    resticRestore: `restic restore, ${library.name}`,
    rcloneFirst: `rclone copy (crypt), ${library.name}`,
    rcloneAgain: `rclone copy again (unchanged), ${library.name}`,
    cofferFirst: `coffer-photos backup, ${library.name}, coffer sqlite`,
    cofferAgain: `coffer-photos backup again (unchanged), ${library.name}, coffer sqlite`,
    cofferRestore: `coffer-photos restore, ${library.name}, coffer sqlite`,
    ownWork: `${OWN_WORK}, ${library.name}`,
  }
  const figuresOf = (name: string) => figures.set(name, figures.get(name) ?? []).get(name)!
  const tracesOf = (name: string) => coffer.set(name, coffer.get(name) ?? []).get(name)!
  const home = await mkdtemp(path.join(context.workDir, 'peers-home-'))
  const rcloneConfig = path.join(home, 'rclone.conf')
  await writeFile(rcloneConfig, '') // an empty one: no notice that there is none
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    RESTIC_PASSWORD: PEER_PASSWORD,
    RESTIC_CACHE_DIR: path.join(home, 'restic-cache'),
    RCLONE_CONFIG: rcloneConfig,
    RCLONE_CONFIG_PEERS_TYPE: 'crypt',
    RCLONE_CONFIG_PEERS_PASSWORD: (await run('rclone', ['obscure', PEER_PASSWORD])).stdout.trim(),
  }
  const server = await photoServer(context, 'sqlite')

  // What a round's first job makes and the next ones of the same tool use.
  let repository = ''
  let remote = ''
  let account = ''
  const restic = (args: string[], check: PeerJob['check'], cleanUp?: () => Promise<void>): PeerJob => ({
    command: 'restic',
    args,
    env: { ...env, RESTIC_REPOSITORY: repository },
    check,
    ...(cleanUp === undefined ? {} : { cleanUp }),
  })
  const resticSummary = (stdout: readonly string[], field: string) => {
    const summary = lastJson(stdout, 'message_type', 'summary')
    return summary === null ? 'restic printed no summary' : mismatch(`restic's ${field}`, summary[field], files)
  }
  const rclone = (transfers: number): PeerJob => ({
    command: 'rclone',
    args: ['copy', library.folder, 'peers:', '--use-json-log', '--stats-log-level', 'NOTICE'],
    env: { ...env, RCLONE_CONFIG_PEERS_REMOTE: remote },
    check: (_, stderr) => {
      const stats = lastJson(stderr.split('\n'), 'stats')?.stats as Record<string, unknown> | undefined
      return stats === undefined
        ? 'rclone logged no stats'
        : firstProblem(mismatch("rclone's transfers", stats.transfers, transfers), mismatch("rclone's errors", stats.errors, 0))
    },
  })

  return {
    names,
    list: [
      peerContender(names.resticFirst, library, figuresOf(names.resticFirst), async () => {
        repository = await mkdtemp(path.join(context.workDir, 'restic-'))
        await run('restic', ['init'], { env: { ...env, RESTIC_REPOSITORY: repository } })
        // Every restic command opens this key first: scrypt, its cost calibrated by `restic init` on this machine (about 0.5 s).
        const [key] = await readdir(path.join(repository, 'keys'))
        const { N, r, p } = JSON.parse(await readFile(path.join(repository, 'keys', key!), 'utf8')) as Record<string, number>
        context.log(`  (restic init: its key's scrypt N=${N} r=${r} p=${p})`)
        return restic(['backup', '--json', library.folder], (stdout) => resticSummary(stdout, 'files_new'))
      }),
      peerContender(names.resticAgain, library, figuresOf(names.resticAgain), async () =>
        restic(['backup', '--json', library.folder], (stdout) => resticSummary(stdout, 'files_unmodified')),
      ),
      peerContender(names.resticRestore, library, figuresOf(names.resticRestore), async () => {
        const target = await mkdtemp(path.join(context.workDir, 'restic-restored-'))
        const stored = repository
        return restic(
          ['restore', 'latest', '--target', target],
          () => holdsLibrary(target, library),
          async () => {
            await rm(target, { recursive: true, force: true })
            await rm(stored, { recursive: true, force: true })
          },
        )
      }),
      peerContender(names.rcloneFirst, library, figuresOf(names.rcloneFirst), async () => {
        remote = await mkdtemp(path.join(context.workDir, 'rclone-'))
        return rclone(files)
      }),
      peerContender(names.rcloneAgain, library, figuresOf(names.rcloneAgain), async () => {
        const stored = remote
        return { ...rclone(0), cleanUp: () => rm(stored, { recursive: true, force: true }) }
      }),
      photosContender(
        names.cofferFirst,
        server,
        library,
        tracesOf(names.cofferFirst),
        async () => {
          account = await photosAccount(context, server)
          await flushWrites()
          return { home: account, args: ['backup', library.folder, '--album', ALBUM] }
        },
        (summary) => firstProblem(mismatch('stored', summary.stored, files), mismatch('failed', summary.failed, 0)),
      ),
      photosContender(
        names.cofferAgain,
        server,
        library,
        tracesOf(names.cofferAgain),
        async () => {
          await flushWrites()
          return { home: account, args: ['backup', library.folder, '--album', ALBUM] }
        },
        (summary) =>
          firstProblem(mismatch('unchanged', summary.unchanged, files), mismatch('stored', summary.stored, 0), mismatch('failed', summary.failed, 0)),
      ),
      photosContender(
        names.cofferRestore,
        server,
        library,
        tracesOf(names.cofferRestore),
        async () => {
          const target = await mkdtemp(path.join(context.workDir, 'coffer-restored-'))
          await flushWrites()
          return { home: account, args: ['restore', ALBUM, target], cleanUp: () => rm(target, { recursive: true, force: true }) }
        },
        (summary) => firstProblem(mismatch('restored', summary.restored, files), mismatch('failed', summary.failed, 0)),
      ),
      rawContender(names.ownWork, raw, context, library, { kind: 'encrypt', files: library.files, derivatives: true }),
    ],
  }
}

const seconds = (s: number): string => `${s.toFixed(s < 10 ? 2 : 1)} s`
const mib = (bytes: number): string => `${(bytes / MIB).toFixed(0)} MiB`

/** A contender's figures over its rounds: mean wall and CPU, the highest peak. */
function summarise(all: readonly Figures[]) {
  const mean = (pick: (f: Figures) => number) => all.reduce((sum, f) => sum + pick(f), 0) / all.length
  return {
    seconds: mean((f) => f.seconds),
    cpuS: mean((f) => f.cpuS),
    serverCpuS: all.every((f) => f.serverCpuS !== null) ? mean((f) => f.serverCpuS ?? 0) : null,
    peak: Math.max(...all.map((f) => f.peak)),
  }
}

export const peers: Scenario = {
  name: 'peers',
  summary: 'coffer-photos backup (first, again unchanged) and restore against restic and rclone on the same folders of JPEGs',
  async run(context) {
    const versions = await peerVersions(context)
    context.log(`  peers: ${versions.join('; ')}`)
    const rows: Row[] = []
    const checks: Check[] = []
    const measured: Measured[] = []
    const raw = await startChild<unknown>('servers/photos-raw.ts')
    context.defer(() => raw.stop())
    for (const folder of FOLDERS) {
      const library = await photoFolder(context, folder)
      const figures = new Map<string, Figures[]>()
      const traces = new Map<string, RunTrace[]>()
      const { names, list } = await contenders(context, library, figures, traces, raw)
      const results = await alternate(list, jobSchedule(context.schedule), context.log)
      measured.push(...results.values())
      rows.push(
        row('peers', results, names.cofferFirst, names.resticFirst, TARGETS.first, 'file'),
        row('peers', results, names.cofferAgain, names.resticAgain, TARGETS.again, 'file'),
        row('peers', results, names.cofferRestore, names.resticRestore, TARGETS.restore, 'file'),
        row('peers', results, names.rcloneFirst, names.resticFirst, null, 'file'),
        row('peers', results, names.rcloneAgain, names.resticAgain, null, 'file'),
        row('peers', results, names.ownWork, names.resticFirst, null, 'file'),
        row('peers', results, names.cofferFirst, names.ownWork, null, 'file'),
      )
      for (const [name, runs] of traces)
        figures.set(
          name,
          runs.map((t) => ({ seconds: t.seconds, cpuS: t.clientCpuS, serverCpuS: t.serverCpuS, peak: t.memory.overall })),
        )
      const byName = new Map([...figures].map(([name, all]) => [name, summarise(all)]))
      const first = byName.get(names.cofferFirst)!
      checks.push({
        scenario: 'peers',
        name: `${names.cofferFirst}: peak resident memory`,
        value: `${mib(first.peak)} (restic ${mib(byName.get(names.resticFirst)!.peak)}, rclone ${mib(byName.get(names.rcloneFirst)!.peak)})`,
        target: `< ${MEMORY_TARGET_MIB} MiB`,
        pass: first.peak < MEMORY_TARGET_MIB * MIB,
      })
      for (const name of Object.values(names)) {
        const f = byName.get(name)
        if (f === undefined) continue // the ceiling: its row says it
        checks.push({
          scenario: 'peers',
          name: `${name}: wall, client CPU, peak memory`,
          value: `${seconds(f.seconds)}, ${seconds(f.cpuS)} CPU${f.serverCpuS === null ? '' : ` (server ${seconds(f.serverCpuS)})`}, ${mib(f.peak)}`,
          target: '-',
          pass: null,
        })
      }
    }
    const notes = [
      `Each measurement is one whole job, the command in a process of its own timed from its spawn to its exit, no warm-up; BENCH_PHOTOS_ROUNDS rounds (default 1), each in this order: restic backup, again, restore; rclone copy, again; coffer-photos backup, again, restore. A first backup goes into a new store (a new restic repository, made by \`restic init\` not timed; a new empty folder under rclone's crypt remote; a new coffer-photos account, config folder and album); "again" is the same command on the unchanged folder into the same store; a restore goes into a new empty folder. Before each job, not timed, \`sync\` writes out what the jobs before left in the page cache; the folders themselves stay in it. Peers: ${versions.join('; ')}.`,
      "Client CPU: the job's process (its user and system time once reaped); for coffer-photos the CLI only, the server's CPU in brackets. Peak memory: the highest VmRSS of the job's process, sampled every 50 ms from its spawn to its exit (the same for all three; a peak shorter than 50 ms can be missed). The rows' subject and ceiling rates are files per second: the ratio is restic's time over the other's.",
      "Durability is not the same: restic fsyncs its pack files, coffer-photos' server each blob and its restore each file; rclone does not fsync, nor restic the files it restores. Every restic command first opens the repository's key (scrypt, calibrated by `restic init` to about half a second on this machine): most of an unchanged re-run. The rclone rows are for information (its remote is a folder with names and contents encrypted, no deduplication, no history).",
    ]
    return { rows, checks, measured, notes }
  },
}
