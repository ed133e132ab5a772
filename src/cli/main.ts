#!/usr/bin/env node
// The `coffer` command for operators: serve, migrate, openapi.
import { ConfigError, loadConfig } from '../config.ts'
import { runServe } from '../main.ts'
import { openStorage } from '../storage/kysely/storage.ts'
import { generateOpenApiDocument } from './openapi.ts'

const USAGE = `usage: coffer <command>

  serve      start the server (configuration from the environment, see README)
  migrate    apply pending database migrations and exit
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

async function printOpenApi(): Promise<void> {
  process.stdout.write(JSON.stringify(await generateOpenApiDocument(), null, 2) + '\n')
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
