#!/usr/bin/env node
// `coffer-photos` (docs/photos.md): the program is in program.ts, loaded once this start has
// the memory settings it should and Node's compile cache is on (compile-cache.ts). The memory
// settings are read only when a process starts, so without them the
// process replaces itself (same pid, open files and arguments) with one that has them, before
// loading anything else:
//
// - On glibc, every thread that allocates under contention gets a malloc arena of its own and
//   keeps what it freed there; sharp's libvips worker threads made a backup's resident memory
//   settle 50-90 MiB higher than with two arenas (docs/benchmarks.md, "Memory"). Someone who
//   set MALLOC_ARENA_MAX, or another libc, is left as is.
// - V8 sizes the young generation from the machine's memory: semi-spaces of 32 MiB on a 24 GiB
//   machine, which a verify of an album kept filled with the garbage of its feed pages and
//   receipts (its resident memory 60-70 MiB higher than with 8 MiB, and no faster). A
//   --max-semi-space-size given to node is left as is.
import { cacheCompiledModules } from './compile-cache.ts'

const ARENAS = '2'
const SEMI_SPACE_FLAG = '--max-semi-space-size'
const SEMI_SPACE_MIB = 8

const report = process.platform === 'linux' ? (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }) : {}
const setArenas = report.header?.glibcVersionRuntime !== undefined && process.env.MALLOC_ARENA_MAX === undefined
const setSemiSpace = !process.execArgv.some((flag) => flag.startsWith(SEMI_SPACE_FLAG))
if ((setArenas || setSemiSpace) && typeof process.execve === 'function') {
  const execArgv = setSemiSpace ? [`${SEMI_SPACE_FLAG}=${SEMI_SPACE_MIB}`, ...process.execArgv] : process.execArgv
  process.execve(process.execPath, [process.execPath, ...execArgv, ...process.argv.slice(1)], setArenas ? { ...process.env, MALLOC_ARENA_MAX: ARENAS } : process.env)
}
cacheCompiledModules(process.env)
await import('./program.ts')
