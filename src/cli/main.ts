#!/usr/bin/env node
// `coffer`, the command for operators (README, "The `coffer` command"): program.ts on the
// process's streams, environment and folder. A command that failed leaves at once: what it
// opened (a database pool, a bucket client) must not keep the process up.
import { processIo } from './io.ts'
import { runCoffer } from './program.ts'

const code = await runCoffer(process.argv.slice(2), processIo())
if (code !== 0) process.exit(code)
