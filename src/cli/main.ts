#!/usr/bin/env node
// The `coffer` command for operators. Commands that act on data open the database the server
// uses (same environment: DATA_DIR, DATABASE_URL, SECRET_KEY) and are safe beside a running
// server; `receipts verify` talks to a server over HTTP like any client.
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '../config.ts'
import { createDeps, startUp, type Deps } from '../deps.ts'
import type { ModerationAction } from '../domain/moderation.ts'
import { rotateAttestationKey } from '../features/custody/attestation.ts'
import { fsck } from '../features/integrity/fsck.service.ts'
import { maintain } from '../features/maintenance/sweep.service.ts'
import { moderate, moderationRecordView } from '../features/moderation/moderation.service.ts'
import { createLogger } from '../http/logging.ts'
import { runServe } from '../main.ts'
import { CofferClient } from '../sdk/client.ts'
import { verifyReceipts } from '../sdk/receipts.ts'
import { openStorage } from '../storage/kysely/storage.ts'
import { generateOpenApiDocument } from './openapi.ts'
import { bytesText, progressOnStderr } from './progress.ts'

const USAGE = `usage: coffer <command> [arguments]

  serve                                   start the server (configuration from the environment, see README)
  migrate                                 apply pending database migrations and exit
  maintain                                delete expired rows and garbage blobs once (instances also do it periodically)
  keys rotate                             retire the active attestation key and activate a new one
  admin suspend <user_id> [--reason R]    suspend an account (content writes answer 403)
  admin reinstate <user_id> [--reason R]  reinstate it
  admin take-down <asset_id> [--reason R] withhold an asset's blobs (downloads answer 451)
  admin legal-hold <asset_id> [--reason R]  keep every blob of an asset from garbage collection
  admin lift-hold <asset_id> [--reason R]   lift it
  fsck [--deep] [--reclaim-unowned]      check that every blob a row names is on disk with its size (--deep: and its
                                          SHA-256), the receipt chain is whole and verifies, and the rows agree; exit 1
                                          and one line per problem when not; --reclaim-unowned queues files no row names
  receipts verify <asset_id> --server URL --token ACCESS_TOKEN
                                          check an asset's custody receipts against the server's attestation keys
  openapi                                 print the OpenAPI document
`

class UsageError extends Error {}

/** Runs `work` with the server's components on the server's database, started up as a server would. */
async function withDeps<T>(work: (deps: Deps) => Promise<T>): Promise<T> {
  const deps = await createDeps(loadConfig())
  try {
    await startUp(deps)
    return await work(deps)
  } finally {
    await deps.storage.close()
  }
}

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n')
}

async function migrate(): Promise<void> {
  const config = loadConfig()
  const storage = openStorage(config.database, { waitTimeoutS: config.databaseWaitTimeoutS, log: createLogger(config.logLevel) })
  try {
    await storage.migrate()
    process.stdout.write(`migrations applied (${storage.engine})\n`)
  } finally {
    await storage.close()
  }
}

const adminActions: Record<string, { action: ModerationAction; target: 'account' | 'asset' }> = {
  suspend: { action: 'suspend', target: 'account' },
  reinstate: { action: 'reinstate', target: 'account' },
  'take-down': { action: 'take_down', target: 'asset' },
  'legal-hold': { action: 'legal_hold', target: 'asset' },
  'lift-hold': { action: 'lift_hold', target: 'asset' },
}

async function admin(args: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { reason: { type: 'string' } } })
  const [name, id] = positionals
  const entry = adminActions[name ?? '']
  if (entry === undefined || id === undefined) throw new UsageError(`admin needs one of ${Object.keys(adminActions).join(', ')} and an id`)
  const target = entry.target === 'account' ? { userId: id } : { assetId: id }
  // The affected account's record, as the operator API answers it.
  print(moderationRecordView(await withDeps((deps) => moderate(deps, entry.action, target, values.reason ?? null))))
}

async function keys(args: string[]): Promise<void> {
  if (args[0] !== 'rotate') throw new UsageError('keys needs: rotate')
  print(await withDeps(rotateAttestationKey))
}

async function receipts(args: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { server: { type: 'string' }, token: { type: 'string' } } })
  const [verb, assetId] = positionals
  if (verb !== 'verify' || assetId === undefined || values.server === undefined || values.token === undefined) {
    throw new UsageError('receipts verify needs <asset_id> --server URL --token ACCESS_TOKEN')
  }
  const client = new CofferClient({ baseUrl: values.server, tokens: { access_token: values.token, refresh_token: '', token_type: 'Bearer', expires_by: Number.MAX_SAFE_INTEGER } })
  const [list, document] = await Promise.all([client.assetReceipts(assetId), client.attestationKeys()])
  const check = await verifyReceipts(list.receipts, document, assetId)
  print({ asset_id: assetId, receipts: list.receipts.length, valid: check.valid, problems: check.problems })
  if (!check.valid) process.exitCode = 1
}

async function fsckCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { deep: { type: 'boolean', default: false }, 'reclaim-unowned': { type: 'boolean', default: false } } })
  const progress = progressOnStderr()
  const summary = await withDeps((deps) =>
    fsck(deps, {
      deep: values.deep,
      reclaimUnowned: values['reclaim-unowned'],
      problem: (line) => (progress.done(), process.stdout.write(`problem: ${line}\n`)),
      note: (line) => (progress.done(), process.stdout.write(`note: ${line}\n`)),
      progress: ({ phase, count, bytes }) => progress.update(`fsck: ${count} ${phase}${bytes > 0 ? ` (${bytesText(bytes)})` : ''}`),
    }),
  )
  progress.done()
  process.stdout.write(
    `fsck: ${summary.problems} problem${summary.problems === 1 ? '' : 's'}, ${summary.notes} note${summary.notes === 1 ? '' : 's'}; ` +
      `${summary.blobs} blobs (${bytesText(summary.bytes)}) ${summary.rehashed ? 're-hashed' : 'checked for presence and size'}, ${summary.receipts} receipts verified` +
      `${summary.unownedFiles > 0 ? `, ${summary.unownedFiles} files no row names${summary.queuedNow > 0 ? ` (${summary.queuedNow} queued for removal)` : ''}` : ''}\n`,
  )
  if (summary.problems > 0) process.exitCode = 1
}

const commands: Record<string, (args: string[]) => Promise<void>> = {
  serve: () => runServe(),
  migrate: () => migrate(),
  maintain: async () => print(await withDeps(maintain)),
  keys,
  admin,
  receipts,
  fsck: fsckCommand,
  openapi: async () => print(await generateOpenApiDocument()),
}

const [name, ...rest] = process.argv.slice(2)
const command = commands[name ?? '']
if (command === undefined) {
  process.stderr.write(USAGE)
  process.exit(name === undefined || name === 'help' ? 0 : 2)
}
try {
  await command(rest)
} catch (error) {
  if (error instanceof UsageError) {
    process.stderr.write(`coffer: ${error.message}\n\n${USAGE}`)
    process.exit(2)
  }
  process.stderr.write(`coffer: ${error instanceof ConfigError ? `invalid configuration: ${error.message}` : error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
