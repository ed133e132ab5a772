#!/usr/bin/env node
// `coffer-photos` (docs/photos.md): the program is in program.ts, loaded once this start has
// the malloc arenas it should.
//
// On glibc, every thread that allocates under contention gets a malloc arena of its own and
// keeps what it freed there; sharp's libvips worker threads made a backup's resident memory
// settle 50-90 MiB higher than with two arenas (docs/benchmarks.md, "Memory"). glibc reads
// MALLOC_ARENA_MAX only when a process starts, so without it the process replaces itself (same
// pid, open files and arguments) with one that has it, before loading anything else. Someone who
// set the variable, or another libc, is left as is.
const ARENAS = '2'

const report = process.platform === 'linux' ? (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }) : {}
if (report.header?.glibcVersionRuntime !== undefined && process.env.MALLOC_ARENA_MAX === undefined && typeof process.execve === 'function') {
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, MALLOC_ARENA_MAX: ARENAS })
}
await import('./program.ts')
