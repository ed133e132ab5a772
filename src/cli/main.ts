#!/usr/bin/env node
// The `coffer` command for operators: serve, migrate, openapi.
import { buildApp } from '../app.ts'
import { ConfigError, loadConfig } from '../config.ts'
import { createDeps } from '../deps.ts'
import { runServe } from '../main.ts'
import { openStorage } from '../storage/kysely/storage.ts'

const USAGE = `usage: coffer <command>

  serve      start the server (configuration from the environment, see README)
  migrate    apply pending database migrations and exit
  openapi    print the OpenAPI document to stdout
`

async function migrate(): Promise<void> {
  const config = loadConfig(process.env)
  const storage = openStorage(config.database)
  try {
    await storage.migrate()
    process.stdout.write(`migrations applied (${storage.engine})\n`)
  } finally {
    await storage.close()
  }
}

async function printOpenApi(): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:' })
  const deps = await createDeps({ ...config, passwordHash: { memoryKib: 8, iterations: 1 } })
  const app = await buildApp(deps)
  await app.ready()
  process.stdout.write(JSON.stringify(app.swagger(), null, 2) + '\n')
  await app.close()
  await deps.storage.close()
}

const commands: Record<string, () => Promise<void>> = { serve: runServe, migrate, openapi: printOpenApi }

const command = commands[process.argv[2] ?? '']
if (command === undefined) {
  process.stderr.write(USAGE)
  process.exit(process.argv[2] === undefined || process.argv[2] === 'help' ? 0 : 2)
}
try {
  await command()
} catch (error) {
  process.stderr.write(`coffer: ${error instanceof ConfigError ? `invalid configuration: ${error.message}` : error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
