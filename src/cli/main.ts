#!/usr/bin/env node
// The `coffer` command for operators: serve, migrate, openapi.
import { ConfigError, loadConfig } from '../config.ts'
import { runServe } from '../main.ts'
import { createDeps } from '../deps.ts'
import { maintain } from '../features/maintenance/sweep.service.ts'
import { openStorage } from '../storage/kysely/storage.ts'
import { generateOpenApiDocument } from './openapi.ts'

const USAGE = `usage: coffer <command>

  serve      start the server (configuration from the environment, see README)
  migrate    apply pending database migrations and exit
  maintain   delete expired rows and garbage blobs once (every instance also does it periodically)
  openapi    print the OpenAPI document to stdout
`

async function migrate(): Promise<void> {
  const config = loadConfig()
  const storage = openStorage(config.database)
  try {
    await storage.migrate()
    process.stdout.write(`migrations applied (${storage.engine})\n`)
  } finally {
    await storage.close()
  }
}

async function maintainOnce(): Promise<void> {
  const deps = await createDeps(loadConfig())
  try {
    await deps.storage.migrate()
    process.stdout.write(JSON.stringify(await maintain(deps)) + '\n')
  } finally {
    await deps.storage.close()
  }
}

async function printOpenApi(): Promise<void> {
  process.stdout.write(JSON.stringify(await generateOpenApiDocument(), null, 2) + '\n')
}

const commands: Record<string, () => Promise<void>> = { serve: runServe, migrate, maintain: maintainOnce, openapi: printOpenApi }

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
