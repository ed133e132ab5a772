// The `coffer` command for operators. Commands that act on data open the database the server
// uses (same environment: DATA_DIR, DATABASE_URL, SECRET_KEY) and are safe beside a running
// server; `receipts verify` talks to a server over HTTP like any client; `blobs migrate` copies
// the blob folder into a bucket, beside running servers too, without the database. runCoffer
// reads and writes only through its CommandIo (main.ts gives it the process's own; the tests
// run it in-process), and answers the exit code.
import path from 'node:path'
import { parseArgs } from 'node:util'
import { openLocalFolderBlobStore } from '../blob-store/local-folder.ts'
import { BlobStoreUnavailableError } from '../blob-store/port.ts'
import { openS3BlobStore } from '../blob-store/s3.ts'
import { bucketAt, ConfigError, loadConfig, type BucketSettings, type Config } from '../config.ts'
import { timestamp } from '../contract/common.ts'
import { hybridVerify } from '../crypto/hybrid.ts'
import { createDeps, startUp, type Deps } from '../deps.ts'
import type { ModerationAction } from '../domain/moderation.ts'
import { rotateAttestationKey } from '../features/custody/attestation.ts'
import { backup, holdRemovals } from '../features/backup/backup.service.ts'
import { exists } from '../features/backup/files.ts'
import { deleteAccountAsOperator } from '../features/account/deletion.service.ts'
import { restore } from '../features/backup/restore.service.ts'
import { migrateBlobs, type MigrationCounts } from '../features/blobs/migrate.service.ts'
import { fsck } from '../features/integrity/fsck.service.ts'
import { maintain } from '../features/maintenance/sweep.service.ts'
import { accountOverview, accountOverviewView, findAccountsByEmail } from '../features/moderation/accounts.service.ts'
import { moderate, moderationRecordView, operatorLog } from '../features/moderation/moderation.service.ts'
import { createLogger } from '../http/logging.ts'
import { runServe } from '../main.ts'
import { CofferClient } from '../sdk/client.ts'
import { verifyReceipts } from '../sdk/receipts.ts'
import { reportStartFailure } from '../start-up-failure.ts'
import { openStorage } from '../storage/kysely/storage.ts'
import type { LoggedModerationEvent } from '../storage/port/moderation.ts'
import type { CommandIo } from './io.ts'
import { generateOpenApiDocument } from './openapi.ts'
import { bytesText, progressOnStderr } from './progress.ts'

const USAGE = `usage: coffer <command> [arguments]

  serve                                   start the server (configuration from the environment, see README)
  migrate                                 apply pending database migrations and exit
  maintain                                delete expired rows, finish the purges of deleted accounts, apply the trash's due
                                          deletes, garbage blobs, the parts of ended uploads and what failed blob writes
                                          left, and append the receipts an instance killed while it waited for them
                                          handed off, once (instances also do it periodically)
  keys rotate                             retire the active attestation key and activate a new one
  admin account <user_id>                 an account: standing, usage, second factor, moderation record
  admin accounts --email E                find the account with an email (case-insensitive): a list of one or none
  admin suspend <user_id> [--reason R]    suspend an account (content writes answer 403)
  admin reinstate <user_id> [--reason R]  reinstate it
  admin reset-second-factor <user_id> [--reason R]
                                          remove the account's TOTP (a lost authenticator) and end every session
  admin delete-account <user_id> [--reason R]
                                          delete an account and everything it holds (what a legal hold or a
                                          retention floor keeps stays until it lapses); again: nothing more
  admin take-down <asset_id> [--reason R] withhold an asset's blobs (downloads answer 451)
  admin restore <asset_id> [--reason R]   undo a takedown: the blobs are served again
  admin legal-hold <asset_id> [--reason R]  keep every blob of an asset from garbage collection
  admin lift-hold <asset_id> [--reason R]   lift it
  admin log [--account U] [--limit N]     the latest operator actions (every account's, or one's; 100 by default),
                                          oldest first, with who took each
  backup <dest> [--blobs-only]            copy the running server's database and blobs (and secret.key) into an empty
                                          folder, consistently, beside running writes; PostgreSQL: runs pg_dump;
                                          --blobs-only copies the blob folder only (see docs/operations.md)
  restore <src>                           restore a backup into an empty data folder (PostgreSQL: an empty schema),
                                          verifying every copy, then run fsck on it
  gc hold [--ttl S] [--reason R]          hold the removal of blob files on every instance (for a manual pg_dump)
  gc release <hold_id>                    release it
  fsck [--deep] [--reclaim-unowned]      check that every blob a row names is on disk with its size (--deep: and its
                                          SHA-256), the receipt chain is whole and verifies, and the rows agree; exit 1
                                          and one line per problem when not; --reclaim-unowned queues files no row names
  blobs migrate --to s3://bucket/prefix   copy every blob from the folder (BLOB_DIR) into a bucket (S3_ENDPOINT,
                                          S3_REGION, S3_FORCE_PATH_STYLE), re-hashing each; resumable, beside running
                                          servers; then switch BLOB_STORE_URL (see docs/operations.md)
  receipts verify <asset_id> --server URL --token ACCESS_TOKEN
                                          check an asset's custody receipts against the server's attestation keys
  openapi                                 print the OpenAPI document
`

class UsageError extends Error {}

/** What a command's outcome is: 0 done, 1 done but something is wrong (a problem found, a copy incomplete). */
type Outcome = 0 | 1

/** The command's log goes to stderr (synchronous on Linux for a pipe, a file or a terminal): stdout carries what the command prints. */
function commandLog(config: Config, io: CommandIo) {
  return createLogger(config.logLevel, io.stderr)
}

/** Runs `work` with the server's components on the server's database, started up as a server would. */
async function withDeps<T>(io: CommandIo, work: (deps: Deps) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env)
  const deps = await createDeps(config, { log: commandLog(config, io) })
  try {
    await startUp(deps)
    return await work(deps)
  } finally {
    await deps.storage.close()
  }
}

function print(io: CommandIo, value: unknown): Outcome {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
  return 0
}

async function migrate(io: CommandIo): Promise<Outcome> {
  const config = loadConfig(io.env)
  const storage = openStorage(config.database, { waitTimeoutS: config.databaseWaitTimeoutS, log: commandLog(config, io) })
  try {
    await storage.migrate()
    io.stdout.write(`migrations applied (${storage.engine})\n`)
    return 0
  } finally {
    await storage.close()
  }
}

const adminActions: Record<string, { action: ModerationAction; target: 'account' | 'asset' }> = {
  suspend: { action: 'suspend', target: 'account' },
  reinstate: { action: 'reinstate', target: 'account' },
  'reset-second-factor': { action: 'reset_second_factor', target: 'account' },
  'take-down': { action: 'take_down', target: 'asset' },
  restore: { action: 'restore', target: 'asset' },
  'legal-hold': { action: 'legal_hold', target: 'asset' },
  'lift-hold': { action: 'lift_hold', target: 'asset' },
}

const LOG_LIMIT = 100
const MAX_LOG_LIMIT = 10_000

/** One line of `coffer admin log`: the event as the owner's record shows it, and whose record and who acted. */
function operatorLogEntry(event: LoggedModerationEvent) {
  return {
    user_id: event.userId,
    seq: event.seq,
    action: event.action,
    ...(event.assetId === null ? {} : { asset_id: event.assetId }),
    at: timestamp(event.at),
    ...(event.reason === null ? {} : { reason: event.reason }),
    actor: event.actor ?? 'unrecorded',
  }
}

async function admin(args: string[], io: CommandIo): Promise<Outcome> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { reason: { type: 'string' }, email: { type: 'string' }, account: { type: 'string' }, limit: { type: 'string' } },
  })
  const [name, id] = positionals
  // The lookups print what the operator API answers.
  if (name === 'account' && id !== undefined) return print(io, accountOverviewView(await withDeps(io, (deps) => accountOverview(deps, id))))
  if (name === 'accounts' && id === undefined && values.email !== undefined) {
    const email = values.email
    return print(io, { accounts: (await withDeps(io, (deps) => findAccountsByEmail(deps, email))).map(accountOverviewView) })
  }
  if (name === 'log' && id === undefined) {
    const limit = Number(values.limit ?? LOG_LIMIT)
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LOG_LIMIT)
      throw new UsageError(`admin log --limit takes a whole number from 1 to ${MAX_LOG_LIMIT}`)
    const userId = values.account
    const events = await withDeps(io, (deps) => operatorLog(deps, { limit, ...(userId === undefined ? {} : { userId }) }))
    return print(io, { events: events.map(operatorLogEntry) })
  }
  if (name === 'delete-account' && id !== undefined) {
    const reason = values.reason ?? null
    return print(io, moderationRecordView(await withDeps(io, (deps) => deleteAccountAsOperator(deps, id, reason, 'cli'))))
  }
  const entry = adminActions[name ?? '']
  if (entry === undefined || id === undefined) {
    throw new UsageError(
      `admin needs account <user_id>, accounts --email E, log, or one of ${[...Object.keys(adminActions), 'delete-account'].join(', ')} and an id`,
    )
  }
  const target = entry.target === 'account' ? { userId: id } : { assetId: id }
  // The affected account's record, as the operator API answers it.
  return print(io, moderationRecordView(await withDeps(io, (deps) => moderate(deps, entry.action, target, values.reason ?? null, 'cli'))))
}

async function keys(args: string[], io: CommandIo): Promise<Outcome> {
  if (args[0] !== 'rotate') throw new UsageError('keys needs: rotate')
  return print(io, await withDeps(io, rotateAttestationKey))
}

async function receipts(args: string[], io: CommandIo): Promise<Outcome> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { server: { type: 'string' }, token: { type: 'string' } } })
  const [verb, assetId] = positionals
  if (verb !== 'verify' || assetId === undefined || values.server === undefined || values.token === undefined) {
    throw new UsageError('receipts verify needs <asset_id> --server URL --token ACCESS_TOKEN')
  }
  const client = new CofferClient({
    baseUrl: values.server,
    tokens: { access_token: values.token, refresh_token: '', token_type: 'Bearer', expires_by: Number.MAX_SAFE_INTEGER },
  })
  const [list, document] = await Promise.all([client.assetReceipts(assetId), client.attestationKeys()])
  const check = await verifyReceipts(list.receipts, document, assetId, hybridVerify)
  print(io, { asset_id: assetId, receipts: list.receipts.length, valid: check.valid, problems: check.problems })
  return check.valid ? 0 : 1
}

async function fsckCommand(args: string[], io: CommandIo): Promise<Outcome> {
  const { values } = parseArgs({ args, options: { deep: { type: 'boolean', default: false }, 'reclaim-unowned': { type: 'boolean', default: false } } })
  const progress = progressOnStderr(io.stderr)
  const summary = await withDeps(io, (deps) =>
    fsck(deps, {
      deep: values.deep,
      reclaimUnowned: values['reclaim-unowned'],
      problem: (line) => {
        progress.done()
        io.stdout.write(`problem: ${line}\n`)
      },
      note: (line) => {
        progress.done()
        io.stdout.write(`note: ${line}\n`)
      },
      progress: ({ phase, count, bytes }) => progress.update(`fsck: ${count} ${phase}${bytes > 0 ? ` (${bytesText(bytes)})` : ''}`),
    }),
  )
  progress.done()
  io.stdout.write(
    `fsck: ${summary.problems} problem${summary.problems === 1 ? '' : 's'}, ${summary.notes} note${summary.notes === 1 ? '' : 's'}; ` +
      `${summary.blobs} blobs (${bytesText(summary.bytes)}) ${summary.rehashed ? 're-hashed' : 'checked for presence and size'}, ${summary.receipts} receipts verified` +
      `${summary.unownedFiles > 0 ? `, ${summary.unownedFiles} files no row names${summary.queuedNow > 0 ? ` (${summary.queuedNow} queued for removal)` : ''}` : ''}\n`,
  )
  return summary.problems > 0 ? 1 : 0
}

async function backupCommand(args: string[], io: CommandIo): Promise<Outcome> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { 'blobs-only': { type: 'boolean', default: false } } })
  const [dest] = positionals
  if (dest === undefined || positionals.length > 1) throw new UsageError('backup needs one destination folder')
  const progress = progressOnStderr(io.stderr)
  const started = Date.now()
  const manifest = await withDeps(io, (deps) =>
    backup(deps, path.resolve(io.cwd, dest), {
      blobsOnly: values['blobs-only'],
      progress: ({ phase, count, bytes, total }) =>
        progress.update(
          phase === 'database' ? 'backup: copying the database' : `backup: ${count}${total === null ? '' : `/${total}`} blobs copied (${bytesText(bytes)})`,
        ),
    }),
  )
  progress.done()
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  const what = [
    manifest.database === null ? 'no database (--blobs-only)' : `database ${manifest.database.file} (${bytesText(manifest.database.bytes)})`,
    `${manifest.blobs.count} blobs (${bytesText(manifest.blobs.bytes)})`,
    manifest.secret_key ? 'secret.key (keep this backup as secret as the key)' : 'no secret.key',
  ]
  io.stdout.write(`backup: ${path.resolve(io.cwd, dest)}: ${what.join(', ')} in ${seconds} s\n`)
  for (const hash of manifest.missing) io.stdout.write(`problem: blob ${hash}: named by the database, missing from the blob store (not in the backup)\n`)
  for (const hash of manifest.corrupt) io.stdout.write(`problem: blob ${hash}: its file does not match its name (not in the backup)\n`)
  if (manifest.missing.length + manifest.corrupt.length > 0) {
    io.stdout.write(`backup: incomplete: ${manifest.missing.length + manifest.corrupt.length} blobs could not be copied; run coffer fsck\n`)
    return 1
  }
  return 0
}

async function restoreCommand(args: string[], io: CommandIo): Promise<Outcome> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} })
  const [src] = positionals
  if (src === undefined || positionals.length > 1) throw new UsageError('restore needs one backup folder')
  const config = loadConfig(io.env)
  const progress = progressOnStderr(io.stderr)
  const outcome = await restore(config, path.resolve(io.cwd, src), {
    postgres: () => openStorage(config.database, { waitTimeoutS: config.databaseWaitTimeoutS, log: commandLog(config, io) }),
    progress: ({ count, bytes, total }) => progress.update(`restore: ${count}/${total} blobs copied (${bytesText(bytes)})`),
  })
  progress.done()
  io.stdout.write(
    `restore: ${outcome.manifest.database === null ? 'no database (restore it with pg_restore)' : `database ${outcome.manifest.database.file}`}, ${outcome.blobs.count} blobs (${bytesText(outcome.blobs.bytes)})${outcome.manifest.secret_key ? ', secret.key' : ''}; checking it (fsck)\n`,
  )
  for (const hash of outcome.corrupt) io.stdout.write(`problem: blob ${hash}: the backup's copy does not match its name (not restored)\n`)
  const complete = outcome.blobs.count + outcome.corrupt.length === outcome.manifest.blobs.count
  if (!complete) {
    io.stdout.write(
      `problem: the backup's manifest lists ${outcome.manifest.blobs.count} blobs, its folder holds ${outcome.blobs.count + outcome.corrupt.length}\n`,
    )
  }
  // Files the database does not name (on PostgreSQL, those written after the dump) go at the
  // restored server's first maintenance pass.
  const checked = await fsckCommand(['--reclaim-unowned'], io)
  return complete && outcome.corrupt.length === 0 ? checked : 1
}

async function gcCommand(args: string[], io: CommandIo): Promise<Outcome> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { ttl: { type: 'string', default: '3600' }, reason: { type: 'string', default: 'operator hold (coffer gc hold)' } },
  })
  const [verb, holdId] = positionals
  if (verb === 'hold' && holdId === undefined) {
    const ttlS = Number(values.ttl)
    if (!Number.isInteger(ttlS) || ttlS < 1 || ttlS > 7 * 86_400) throw new UsageError('gc hold --ttl takes whole seconds, 1 to 604800')
    return print(io, await withDeps(io, (deps) => holdRemovals(deps, values.reason, ttlS * 1000)))
  } else if (verb === 'release' && holdId !== undefined) {
    await withDeps(io, (deps) => deps.storage.releaseGcHold(holdId))
    return print(io, { released: holdId })
  }
  throw new UsageError('gc needs: hold [--ttl S] [--reason R], or release <hold_id>')
}

/** Copies the folder's blobs into a bucket; it reads no database. */
async function blobsCommand(args: string[], io: CommandIo): Promise<Outcome> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { to: { type: 'string' } } })
  if (positionals.length !== 1 || positionals[0] !== 'migrate' || values.to === undefined) throw new UsageError('blobs needs: migrate --to s3://bucket/prefix')
  let settings: BucketSettings
  try {
    settings = bucketAt('--to', values.to, io.env)
  } catch (error) {
    if (error instanceof ConfigError && error.variable === '--to') throw new UsageError(error.message)
    throw error
  }
  const config = loadConfig(io.env)
  // Opening the folder would make it: a mistyped BLOB_DIR would then migrate nothing, and say so as if done.
  if (!(await exists(config.blobDir))) throw new Error(`BLOB_DIR=${config.blobDir} does not exist; run this with the servers' environment (DATA_DIR, BLOB_DIR)`)
  const source = await openLocalFolderBlobStore(config.blobDir)
  const target = openS3BlobStore(settings)
  const progress = progressOnStderr(io.stderr)
  const started = Date.now()
  let counts: MigrationCounts
  try {
    counts = await migrateBlobs(source, target, {
      damaged: (hash, why) => {
        progress.done()
        io.stdout.write(`problem: blob ${hash}: ${why}; not copied\n`)
      },
      progress: ({ done, total, copied, copiedBytes, alreadyThere }) =>
        progress.update(`blobs migrate: ${done}/${total} blobs, ${copied} copied (${bytesText(copiedBytes)}), ${alreadyThere} already there`),
    })
  } catch (error) {
    if (!(error instanceof BlobStoreUnavailableError)) throw error
    throw new Error(
      `the bucket ${target.location} cannot be used: ${error.message}; check --to, S3_ENDPOINT and the credentials, then run the command again: it goes on where it stopped`,
      { cause: error },
    )
  } finally {
    progress.done()
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  const removed = counts.removedMeanwhile > 0 ? `, ${counts.removedMeanwhile} removed from the folder meanwhile (garbage)` : ''
  io.stdout.write(
    `blobs migrate: ${counts.copied} copied (${bytesText(counts.copiedBytes)}), ${counts.alreadyThere} already there, ${counts.damaged} damaged${removed}; ` +
      `${source.location} to ${target.location} in ${seconds} s\n`,
  )
  if (counts.damaged > 0) {
    io.stdout.write(
      `blobs migrate: ${counts.damaged} blob${counts.damaged === 1 ? ' was' : 's were'} not copied (damaged in the folder): run coffer fsck --deep; a blob a row names can only come back from a backup\n`,
    )
  }
  // Servers keep writing to the folder until they are switched.
  io.stdout.write(
    `blobs migrate: blobs uploaded while this ran may not be in the bucket: run it once more right before switching (it copies only what is new), ` +
      `then set BLOB_STORE_URL=${values.to} on every instance and restart them (docs/operations.md)\n`,
  )
  return counts.damaged > 0 ? 1 : 0
}

const commands: Record<string, (args: string[], io: CommandIo) => Promise<Outcome>> = {
  // The server itself: it runs on the process (its signals, its exit), not in-process.
  serve: async () => {
    await runServe()
    return 0
  },
  migrate: (_, io) => migrate(io),
  maintain: async (_, io) => print(io, await withDeps(io, maintain)),
  keys,
  admin,
  receipts,
  fsck: fsckCommand,
  backup: backupCommand,
  restore: restoreCommand,
  gc: gcCommand,
  blobs: blobsCommand,
  openapi: async (_, io) => print(io, await generateOpenApiDocument()),
}

/** Runs `coffer <args>` on `io`; answers the exit code: 0 done, 1 failed or found a problem, 2 wrong usage. */
export async function runCoffer(args: readonly string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = args
  const command = commands[name ?? '']
  if (command === undefined) {
    io.stderr.write(USAGE)
    return name === undefined || name === 'help' ? 0 : 2
  }
  try {
    return await command(rest, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`coffer: ${error.message}\n\n${USAGE}`)
      return 2
    }
    // A command meets the server's start-up faults too (configuration, folders, database, keys).
    let config: Config | null = null
    try {
      config = loadConfig(io.env)
    } catch {
      // Reported as the error itself.
    }
    reportStartFailure(config, error, '', io.stderr)
    return 1
  }
}
