// cli: how long `coffer-photos` takes to start, from the shell's fork to its exit, one run after
// another (issue 34). The ceiling is `node -e 0`, the same Node starting and doing nothing,
// measured in the same run; each command is a row against it (the ratio is node's start over the
// command's). Targets are times a person notices, checked on the median: `--help` at most
// 150 ms, and `status` at most 300 ms, logged in and set up, asking a local Coffer (SQLite) whether
// it still takes the session (one request). `backup --help` loads the backup's own code (sharp,
// the image pipeline), for information. The compile cache is on, as for a person (warm from the
// warm-up runs), in a cache folder of the run's own.
import { spawn } from 'node:child_process'
import { mkdtemp } from 'node:fs/promises'
import path from 'node:path'
import { PHOTOS_CLI } from '../../test/support/photos-cli.ts'
import { reapedChildrenCpuSeconds } from '../lib/cpu.ts'
import { closedLoop } from '../lib/loop.ts'
import { alternate, type Contender } from '../lib/measure.ts'
import { photosAccount, photoServer } from '../lib/photos.ts'
import { row, type Check, type Scenario } from '../lib/scenario.ts'

const CEILING = 'node -e 0'
const HELP = 'coffer-photos --help'
const STATUS = 'coffer-photos status'
const BACKUP_HELP = 'coffer-photos backup --help'
/** The most each may take, the median of its runs, in ms. */
const LIMITS_MS: ReadonlyArray<readonly [string, number]> = [
  [HELP, 150],
  [STATUS, 300],
]

/** Runs `node <args>` to its end; throws unless it exits 0. */
function run(args: readonly string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`node ${args.join(' ')} exited ${code}: ${stderr.slice(0, 200)}`))))
  })
}

/** A contender that runs one command after another; its CPU is what the finished runs used. */
function commandContender(name: string, args: readonly string[], env: Record<string, string>): Contender {
  return {
    name,
    measure: (seconds) =>
      closedLoop({ concurrency: 1, seconds, subjectCpu: reapedChildrenCpuSeconds }, async () => {
        await run(args, env)
        return 1
      }),
  }
}

export const cli: Scenario = {
  name: 'cli',
  summary: 'coffer-photos start-up: --help, status and backup --help against node -e 0',
  async run(context) {
    const server = await photoServer(context, 'sqlite')
    const home = await photosAccount(context, server)
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: context.workDir,
      XDG_CACHE_HOME: await mkdtemp(path.join(context.workDir, 'cache-')),
      COFFER_PHOTOS_HOME: home,
    }
    const contenders = [
      commandContender(CEILING, ['-e', '0'], env),
      commandContender(HELP, [PHOTOS_CLI, '--help'], env),
      commandContender(STATUS, [PHOTOS_CLI, 'status'], env),
      commandContender(BACKUP_HELP, [PHOTOS_CLI, 'backup', '--help'], env),
    ]
    const measured = await alternate(contenders, context.schedule, context.log)
    const checks: Check[] = LIMITS_MS.map(([name, limit]) => {
      const p50 = measured.get(name)!.pooled.p50Ms
      return {
        scenario: 'cli',
        name: `${name}, median`,
        value: `${p50.toFixed(0)} ms (node -e 0: ${measured.get(CEILING)!.pooled.p50Ms.toFixed(0)} ms)`,
        target: `<= ${limit} ms`,
        pass: p50 <= limit,
      }
    })
    return {
      rows: [HELP, STATUS, BACKUP_HELP].map((name) => row('cli', measured, name, CEILING, null, 'run')),
      measured: [...measured.values()],
      checks,
      notes: ["one run at a time from fork to exit; the ratio is node -e 0's time over the command's (1.0: it starts as fast as node itself)."],
    }
  },
}
