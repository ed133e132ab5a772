#!/usr/bin/env node
// `coffer-photos` (docs/photos.md): the process around program.ts. It gives the program the
// process's streams, environment and folder, turns SIGINT and SIGTERM into a stop, and exits with
// the command's code. Commands that work on the photos themselves (commands.ts, photoWork) run
// with memory settings that are read only when a process starts, so for those the process
// replaces itself (same pid, open files and arguments) with one that has them, before loading
// anything else; the overview and the account commands start at once without:
//
// - On glibc, every thread that allocates under contention gets a malloc arena of its own and
//   keeps what it freed there; sharp's libvips worker threads made a backup's resident memory
//   settle 50-90 MiB higher than with two arenas (docs/benchmarks.md, "Memory"). And glibc
//   raises its mmap threshold each time a large block is freed, after which decoded images (a few
//   MiB each) come from the arenas and stay resident when freed; a fixed threshold (128 KiB, its
//   starting value) gives them back at once: the image pipeline over 12-megapixel photos peaked
//   about 40 MiB lower (a whole backup's peak moved less), for about 3% more CPU in the kernel
//   (decision 0064). Someone who set either variable,
//   or another libc, is left as is.
// - V8 sizes the young generation from the machine's memory: semi-spaces of 32 MiB on a 24 GiB
//   machine, which a verify of an album kept filled with the garbage of its feed pages and
//   receipts (its resident memory 60-70 MiB higher than with 8 MiB, and no faster). A
//   --max-semi-space-size given to node is left as is.
import { EXIT } from './command.ts'
import { COMMANDS } from './commands.ts'
import { cacheCompiledModules } from './compile-cache.ts'
import { processIo } from '../io.ts'

/** glibc's tunables for photo work, each set unless already in the environment. */
const GLIBC_MALLOC = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: String(128 * 1024) } as const
const SEMI_SPACE_FLAG = '--max-semi-space-size'
const SEMI_SPACE_MIB = 8

const args = process.argv.slice(2)
if (COMMANDS.find((c) => c.name === args[0])?.photoWork === true && typeof process.execve === 'function') {
  const report = process.platform === 'linux' ? (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }) : {}
  const malloc = report.header?.glibcVersionRuntime === undefined ? [] : Object.entries(GLIBC_MALLOC).filter(([name]) => process.env[name] === undefined)
  const setSemiSpace = !process.execArgv.some((flag) => flag.startsWith(SEMI_SPACE_FLAG))
  if (malloc.length > 0 || setSemiSpace) {
    const execArgv = setSemiSpace ? [`${SEMI_SPACE_FLAG}=${SEMI_SPACE_MIB}`, ...process.execArgv] : process.execArgv
    process.execve(process.execPath, [process.execPath, ...execArgv, ...process.argv.slice(1)], { ...process.env, ...Object.fromEntries(malloc) })
  }
}
cacheCompiledModules(process.env)
const [{ runPhotos }, { installNativePrimitives }] = await Promise.all([import('./program.ts'), import('../../client/node/primitives.ts')])
installNativePrimitives()

const run = runPhotos(args, processIo())
const interrupt = (): void => {
  if (!run.interrupt()) process.exit(EXIT.interrupted) // a second Ctrl-C: leave now
}
process.on('SIGINT', interrupt)
process.on('SIGTERM', interrupt)
// A reader that stops early (`coffer-photos ls ... | head`) is not an error of ours.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok)
  throw error
})
process.exitCode = await run.exit
