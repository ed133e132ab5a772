// The composition root: every component the routes and services use, built once from config.
import path from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import { openLocalFolderBlobStore } from './blob-store/local-folder.ts'
import type { BlobStore } from './blob-store/port.ts'
import { openS3BlobStore } from './blob-store/s3.ts'
import type { Config } from './config.ts'
import { createPasswordHasher, type PasswordHasher } from './crypto/passwords.ts'
import { createSecretBox, type SecretBox } from './crypto/secret-box.ts'
import { deriveKey, resolveSecretKey, SECRET_KEY_FILE } from './crypto/secret-key.ts'
import { createAttestationKeyring, ensureAttestationKey, warnOfAnotherIssuer, type AttestationKeyring } from './features/custody/attestation.ts'
import { createReceiptSequencer, type ReceiptSequencer } from './features/custody/receipts.ts'
import { totpAssociatedData } from './features/totp/totp.service.ts'
import { createLogger } from './http/logging.ts'
import { createMetrics, type Metrics } from './http/metrics.ts'
import { StartUpError } from './start-up-failure.ts'
import { StorageUnavailableError, type Storage } from './storage/port.ts'
import { openStorage, type DatabaseTarget } from './storage/kysely/storage.ts'

export interface Clock {
  /** Unix milliseconds. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

export interface Deps {
  readonly config: Config
  /** The process's log (Fastify's logger, and the storage's for connections lost between requests). */
  readonly log: FastifyBaseLogger
  readonly clock: Clock
  readonly storage: Storage
  /** The folder (BLOB_DIR) or the bucket (BLOB_STORE_URL), chosen at start-up. */
  readonly blobs: BlobStore
  readonly passwords: PasswordHasher
  /** Seals TOTP secrets at rest. */
  readonly totpSecrets: SecretBox
  /** Derives a refresh token's successor pair (crypto/tokens.ts). */
  readonly refreshKey: Buffer
  /** Keys the hashes of second-factor recovery codes (crypto/recovery-codes.ts). */
  readonly recoveryCodeKey: Buffer
  /** Seals and opens the attestation keys that sign custody receipts. */
  readonly attestation: AttestationKeyring
  /** Signs custody receipts ahead of the transactions that append them (its head is a guess the database checks). */
  readonly receiptChain: ReceiptSequencer
  readonly metrics: Metrics
}

export interface DepsOverrides {
  readonly clock?: Clock
  /** Tests keep every line. */
  readonly log?: FastifyBaseLogger
  /** Tests point each file at its own PostgreSQL schema. */
  readonly database?: DatabaseTarget
}

export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const secretKey = await resolveSecretKey(config.secretKey, config.dataDir)
  const metrics = createMetrics()
  const passwords = await createPasswordHasher(config.passwordHash, () => metrics.passwordVerifications.inc())
  const log = overrides.log ?? createLogger(config.logLevel)
  return {
    config,
    log,
    clock: overrides.clock ?? systemClock,
    storage: openStorage(overrides.database ?? config.database, { waitTimeoutS: config.databaseWaitTimeoutS, log }),
    blobs: await openBlobStore(config, (bytes) => metrics.blobBytesRead.inc(bytes)),
    passwords,
    totpSecrets: createSecretBox(deriveKey(secretKey, 'totp-secret')),
    refreshKey: deriveKey(secretKey, 'refresh-successor'),
    recoveryCodeKey: deriveKey(secretKey, 'recovery-code'),
    attestation: createAttestationKeyring(createSecretBox(deriveKey(secretKey, 'attestation-key'))),
    receiptChain: createReceiptSequencer(),
    metrics,
  }
}

/** The store BLOB_STORE_URL names: the bucket when set, else the folder. */
export async function openBlobStore(config: Config, onRead?: (bytes: number) => void): Promise<BlobStore> {
  if (config.blobBucket !== null) return openS3BlobStore(config.blobBucket, onRead === undefined ? {} : { onRead })
  return openLocalFolderBlobStore(config.blobDir, onRead)
}

/**
 * What every start does before serving: migrations, the leftovers of interrupted blob writes,
 * the first attestation key, the check that SECRET_KEY opens what the database holds sealed,
 * and a warning when PUBLIC_ORIGIN is not the issuer of the newest receipts.
 * Answers how many leftover files went.
 */
export async function startUp(deps: Deps): Promise<number> {
  await deps.storage.migrate()
  // A bucket that is missing, refuses the credentials or does not answer stops the start here.
  await deps.blobs.ping()
  const leftovers = await deps.blobs.cleanLeftovers()
  await checkSecretKeyOpensSealed(deps, await ensureAttestationKey(deps))
  await warnOfAnotherIssuer(deps)
  return leftovers
}

/**
 * A SECRET_KEY other than the one the database was set up with would serve, and then fail every
 * upload (its receipt cannot be signed) and every TOTP sign-in: refuse to start instead.
 */
async function checkSecretKeyOpensSealed(deps: Deps, activeKeyId: string): Promise<void> {
  const unopened: string[] = []
  try {
    await deps.attestation.signingKey(deps.storage, activeKeyId)
  } catch (error) {
    if (error instanceof StorageUnavailableError) throw error
    unopened.push(`the receipt-signing key ${activeKeyId}`)
  }
  const secondFactor = await deps.storage.anySecondFactor()
  if (secondFactor !== undefined) {
    try {
      deps.totpSecrets.open(secondFactor.secretBox, totpAssociatedData(secondFactor.userId))
    } catch {
      unopened.push('the TOTP secrets')
    }
  }
  if (unopened.length === 0) return
  const source = deps.config.secretKey === null ? `read from ${path.join(deps.config.dataDir, SECRET_KEY_FILE)}` : 'set in the environment'
  throw new StartUpError(
    `SECRET_KEY (${source}) does not open ${unopened.join(' or ')} this database holds: it was set up with another key. ` +
      'Start with the SECRET_KEY it was set up with (every instance of a deployment shares one; when SECRET_KEY is unset, it is $DATA_DIR/secret.key)',
  )
}
