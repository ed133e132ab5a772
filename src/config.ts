// The only reader of process.env. Names and defaults are those of API.md section 9; a bad
// value stops start-up with a ConfigError naming the variable.
import { isIP } from 'node:net'
import path from 'node:path'

export class ConfigError extends Error {
  readonly variable: string
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`)
    this.variable = variable
  }
}

type Env = Readonly<Record<string, string | undefined>>

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
/** Chains beyond this gain nothing on any machine we size for (a chain is about one core of signing). */
export const MAX_RECEIPT_CHAINS = 64
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export interface Config {
  readonly port: number
  readonly host: string
  readonly dataDir: string
  /** `sqlite:<file>` or a `postgres://` URL. */
  readonly database: { readonly engine: 'sqlite'; readonly file: string } | { readonly engine: 'postgres'; readonly url: string }
  /** How long an operation waits for a PostgreSQL connection or SQLite's write lock before it answers 503. */
  readonly databaseWaitTimeoutS: number
  readonly publicOrigin: string
  /** 32 bytes; null means "read or generate `$DATA_DIR/secret.key`" (crypto/secret-key.ts). */
  readonly secretKey: Buffer | null
  readonly bodyLimitBytes: number
  readonly trustProxy: boolean
  readonly logLevel: LogLevel
  readonly passwordHash: { readonly memoryKib: number; readonly iterations: number }
  readonly lockout: { readonly threshold: number; readonly durationS: number }
  readonly tokens: { readonly accessTtlS: number; readonly refreshTtlS: number; readonly refreshGraceS: number }
  readonly secondFactor: {
    readonly challengeTtlS: number
    readonly verifyMaxAttempts: number
    /** Wrong codes an account may send (every operation that takes one) per window. */
    readonly maxFailures: number
    readonly failureWindowS: number
  }
  /** How long an owner's security events are kept. */
  readonly securityEventRetentionS: number
  /** How long an asset stays in the trash before its delete is applied (decision 0059). */
  readonly trashRetentionS: number
  /** Sharing (decision 0067): invitations an account has outstanding at once, and account lookups per account per window. */
  readonly sharing: { readonly invitationsMax: number; readonly lookupMax: number; readonly lookupWindowS: number }
  /**
   * Public links (decision 0068): links that still work per account; how long an open lasts;
   * reads per link and per client address per window; refused opens (a wrong password) per link
   * and per client address per window.
   */
  readonly links: {
    readonly max: number
    readonly sessionTtlS: number
    readonly readsPerLink: number
    readonly readsPerAddress: number
    readonly readWindowS: number
    readonly openFailuresPerLink: number
    readonly openFailuresPerAddress: number
    readonly openFailureWindowS: number
  }
  readonly freshnessWindowS: number
  readonly revokeChallengeTtlS: number
  readonly enrollment: { readonly codeTtlS: number; readonly redeemMaxFailures: number; readonly redeemWindowS: number; readonly channelTtlS: number }
  /** How often each instance deletes expired rows. */
  readonly sweepIntervalS: number
  /** The blob folder: the store when `blobBucket` is null, and what `coffer blobs migrate` copies from. */
  readonly blobDir: string
  /** BLOB_STORE_URL=s3://bucket/prefix: blobs in an S3-compatible bucket instead of the folder. */
  readonly blobBucket: BucketSettings | null
  /** `redirect`: a download answers 307 to a presigned URL of the bucket (BLOB_DOWNLOAD). */
  readonly blobDownload: 'stream' | 'redirect'
  /** Most blob bytes one batch download answers (POST /v1/blobs/batch); the rest answer 413 in it. */
  readonly blobBatchMaxBytes: number
  /** Batch downloads in flight at once: per account on every instance together (429 past it), and per process (503). */
  readonly batchDownloads: { readonly perAccount: number; readonly perProcess: number }
  readonly cryptoSuites: readonly number[]
  readonly uploadSessionTtlS: number
  readonly maxBlobBytes: number
  /** Per account: bytes stored plus declared by open upload sessions (null: no limit), and open upload sessions. */
  readonly storageQuota: { readonly accountBytes: number | null; readonly maxOpenUploads: number }
  readonly protocol: { readonly min: string; readonly current: string; readonly max: string }
  readonly upgradeWindowS: number
  /** Null: the operator API is off (every /v1/admin path answers 404). */
  readonly adminToken: string | null
  readonly verification: { readonly maxAssets: number; readonly maxHashes: number; readonly deepScanBudgetBytes: number; readonly deepScanWindowS: number }
  /** Custody receipt chains the server appends to (decision 0072); fixed once the first receipt is issued. */
  readonly receiptChains: number
  /** How long a write on an instance without its chain's lease waits for the holder to append its receipts before appending them itself (decision 0073). */
  readonly receiptHandoffWaitMs: number
  /** Account exports each account may start per window (GET /v1/account/export). */
  readonly accountExport: { readonly maxPerWindow: number; readonly windowS: number }
}

export interface BucketSettings {
  readonly bucket: string
  /** Empty, or ends in `/`. */
  readonly prefix: string
  /** Null: AWS's own endpoint for the region. */
  readonly endpoint: string | null
  readonly region: string
  readonly forcePathStyle: boolean
}

/**
 * A variable's value, or undefined when it is not set. Set but empty is refused: it is how a
 * mistake looks (`SECRET_KEY=$(cat missing-file)`, a template variable with no value), and
 * taking it as "unset" would quietly pick a default, such as a new SECRET_KEY.
 */
function read(env: Env, name: string): string | undefined {
  const value = env[name]
  if (value === undefined) return undefined
  if (value.trim() === '') throw new ConfigError(name, 'is set but empty; give it a value, or unset it to use the default')
  return value.trim()
}

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = read(env, name)
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`)
  const value = Number(raw)
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`)
  return value
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = read(env, name)
  if (raw === undefined) return fallback
  if (/^(true|1|yes)$/i.test(raw)) return true
  if (/^(false|0|no)$/i.test(raw)) return false
  throw new ConfigError(name, `must be true or false, got "${raw}"`)
}

function origin(name: string, raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL, got "${raw}"`)
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search || url.hash) {
    throw new ConfigError(name, `must be an origin such as https://photos.example.com, got "${raw}"`)
  }
  return url.origin
}

const HOSTNAME_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/

/** HOST: an IPv4 or IPv6 literal, or an RFC 1123 hostname. */
function listenHost(env: Env): string {
  const value = read(env, 'HOST') ?? '127.0.0.1'
  if (isIP(value) !== 0) return value
  // Digits and dots only would be a mistyped IPv4 address rather than a name.
  const hostname = value.length <= 253 && value.split('.').every((label) => HOSTNAME_LABEL.test(label)) && !/^[\d.]+$/.test(value)
  if (!hostname) throw new ConfigError('HOST', `must be an IP address or a hostname such as 0.0.0.0, :: or localhost, got "${value}"`)
  return value
}

const PROTOCOL_DATE = /^\d{4}-\d{2}-\d{2}$/

function protocolDate(env: Env, name: string, fallback: string): string {
  const value = read(env, name) ?? fallback
  if (!PROTOCOL_DATE.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) throw new ConfigError(name, `must be a date YYYY-MM-DD, got "${value}"`)
  return value
}

function integerList(env: Env, name: string, fallback: readonly number[]): number[] {
  const raw = read(env, name)
  if (raw === undefined) return [...fallback]
  const items = raw.split(',').map((item) => item.trim())
  if (items.some((item) => !/^\d+$/.test(item))) throw new ConfigError(name, `must be a comma-separated list of whole numbers, got "${raw}"`)
  return items.map(Number)
}

function adminToken(env: Env): string | null {
  const token = read(env, 'ADMIN_TOKEN')
  if (token === undefined) return null
  if (token.length < 32) throw new ConfigError('ADMIN_TOKEN', 'must be at least 32 characters (for example: openssl rand -base64 32)')
  return token
}

function secretKey(env: Env): Buffer | null {
  const raw = read(env, 'SECRET_KEY')
  if (raw === undefined) return null
  const key = Buffer.from(raw, 'base64')
  if (key.length !== 32 || key.toString('base64') !== raw) {
    throw new ConfigError('SECRET_KEY', 'must be 32 bytes in standard base64 (for example: openssl rand -base64 32)')
  }
  return key
}

function database(env: Env, dataDir: string): Config['database'] {
  const raw = read(env, 'DATABASE_URL')
  if (raw === undefined) return { engine: 'sqlite', file: path.join(dataDir, 'coffer.db') }
  if (/^postgres(ql)?:\/\//.test(raw)) return { engine: 'postgres', url: raw }
  if (raw.startsWith('sqlite:')) {
    const file = raw.slice('sqlite:'.length)
    if (file === '') throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path, for example sqlite:./data/coffer.db')
    return { engine: 'sqlite', file: path.resolve(file) }
  }
  throw new ConfigError('DATABASE_URL', 'must start with postgres://, postgresql:// or sqlite:')
}

// S3's rules for bucket names (3 to 63 lowercase letters, digits, dots and hyphens).
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/

/**
 * The bucket an `s3://bucket/optional/prefix` URL names (`setting` says where the URL came from:
 * BLOB_STORE_URL, or `coffer blobs migrate --to`), reached with S3_ENDPOINT, S3_REGION (else
 * AWS_REGION, else us-east-1) and S3_FORCE_PATH_STYLE; credentials are the AWS SDK's own (its
 * environment variables, profiles, instance roles).
 */
export function bucketAt(setting: string, url: string, env: Env = process.env): BucketSettings {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url)
  const unset = setting === 'BLOB_STORE_URL' ? ' (unset, blobs go to BLOB_DIR)' : ''
  if (match === null) throw new ConfigError(setting, `must be s3://bucket or s3://bucket/prefix${unset}, got "${url}"`)
  const [, bucket = '', path = ''] = match
  if (!BUCKET_NAME.test(bucket)) throw new ConfigError(setting, `"${bucket}" is not a bucket name (3 to 63 lowercase letters, digits, dots and hyphens)`)
  const prefix = path.replace(/^\/+|\/+$/g, '')
  if (prefix !== '' && prefix.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new ConfigError(setting, `the prefix "${path}" has an empty, . or .. segment`)
  }
  // Keys every S3-compatible store reads alike: URL-escaped characters are decoded differently
  // by some (a copy names its source URL-encoded).
  if (!/^[A-Za-z0-9._/-]*$/.test(prefix)) throw new ConfigError(setting, `the prefix "${path}" may hold only letters, digits, ".", "_", "-" and "/"`)
  const endpoint = read(env, 'S3_ENDPOINT')
  if (endpoint !== undefined && !/^https?:\/\/[^/]+\/?$/.test(endpoint)) {
    throw new ConfigError('S3_ENDPOINT', `must be an http(s) URL of the endpoint such as https://minio.internal:9000, got "${endpoint}"`)
  }
  return {
    bucket,
    prefix: prefix === '' ? '' : `${prefix}/`,
    endpoint: endpoint?.replace(/\/$/, '') ?? null,
    region: read(env, 'S3_REGION') ?? read(env, 'AWS_REGION') ?? 'us-east-1',
    forcePathStyle: boolean(env, 'S3_FORCE_PATH_STYLE', false),
  }
}

/** BLOB_STORE_URL: blobs in a bucket instead of the folder. */
function blobBucket(env: Env): BucketSettings | null {
  const raw = read(env, 'BLOB_STORE_URL')
  return raw === undefined ? null : bucketAt('BLOB_STORE_URL', raw, env)
}

function blobDownload(env: Env, bucket: BucketSettings | null): Config['blobDownload'] {
  const raw = read(env, 'BLOB_DOWNLOAD') ?? 'stream'
  if (raw !== 'stream' && raw !== 'redirect') throw new ConfigError('BLOB_DOWNLOAD', `must be stream or redirect, got "${raw}"`)
  if (raw === 'redirect' && bucket === null)
    throw new ConfigError('BLOB_DOWNLOAD', 'redirect needs a bucket (BLOB_STORE_URL=s3://...): a folder has no URL of its own to send clients to')
  return raw
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535)
  const host = listenHost(env)
  const dataDir = path.resolve(read(env, 'DATA_DIR') ?? './data')
  const logLevel = (read(env, 'LOG_LEVEL') ?? 'info') as LogLevel
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`)
  const publicHost = host.includes(':') ? `[${host}]` : host
  const bucket = blobBucket(env)
  return {
    port,
    host,
    dataDir,
    database: database(env, dataDir),
    databaseWaitTimeoutS: integer(env, 'DATABASE_WAIT_TIMEOUT_S', 5, 1, 300),
    publicOrigin: origin('PUBLIC_ORIGIN', read(env, 'PUBLIC_ORIGIN') ?? `http://${publicHost}:${port}`),
    secretKey: secretKey(env),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1_048_576, 1024),
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    logLevel,
    passwordHash: {
      memoryKib: integer(env, 'PASSWORD_HASH_MEMORY_KIB', 19_456, 8, 4_194_304),
      iterations: integer(env, 'PASSWORD_HASH_ITERATIONS', 2, 1, 100),
    },
    lockout: {
      threshold: integer(env, 'LOCKOUT_THRESHOLD', 10, 1),
      durationS: integer(env, 'LOCKOUT_DURATION_S', 900, 1),
    },
    tokens: {
      accessTtlS: integer(env, 'ACCESS_TOKEN_TTL_S', 900, 1),
      refreshTtlS: integer(env, 'REFRESH_TOKEN_TTL_S', 2_592_000, 1),
      refreshGraceS: integer(env, 'REFRESH_GRACE_S', 30, 0),
    },
    secondFactor: {
      challengeTtlS: integer(env, 'MFA_CHALLENGE_TTL_S', 300, 1),
      verifyMaxAttempts: integer(env, 'VERIFY_MAX_ATTEMPTS', 5, 1),
      maxFailures: integer(env, 'TOTP_MAX_FAILURES', 10, 1),
      failureWindowS: integer(env, 'TOTP_FAILURE_WINDOW_S', 3600, 1),
    },
    securityEventRetentionS: integer(env, 'SECURITY_EVENT_RETENTION_S', 7_776_000, 1),
    trashRetentionS: integer(env, 'TRASH_RETENTION_S', 2_592_000, 1),
    sharing: {
      invitationsMax: integer(env, 'INVITATIONS_MAX', 100, 1),
      lookupMax: integer(env, 'ACCOUNT_LOOKUP_MAX', 60, 1),
      lookupWindowS: integer(env, 'ACCOUNT_LOOKUP_WINDOW_S', 3600, 1),
    },
    links: {
      max: integer(env, 'LINKS_MAX', 200, 1),
      sessionTtlS: integer(env, 'LINK_SESSION_TTL_S', 43_200, 60),
      readsPerLink: integer(env, 'LINK_READS_PER_LINK', 6000, 1),
      readsPerAddress: integer(env, 'LINK_READS_PER_ADDRESS', 1200, 1),
      readWindowS: integer(env, 'LINK_READ_WINDOW_S', 60, 1),
      openFailuresPerLink: integer(env, 'LINK_OPEN_FAILURES_PER_LINK', 100, 1),
      openFailuresPerAddress: integer(env, 'LINK_OPEN_FAILURES_PER_ADDRESS', 10, 1),
      openFailureWindowS: integer(env, 'LINK_OPEN_FAILURE_WINDOW_S', 900, 1),
    },
    freshnessWindowS: integer(env, 'FRESHNESS_WINDOW_S', 600, 1),
    revokeChallengeTtlS: integer(env, 'REVOKE_CHALLENGE_TTL_S', 300, 1),
    enrollment: {
      codeTtlS: integer(env, 'ENROLL_CODE_TTL_S', 300, 1),
      redeemMaxFailures: integer(env, 'REDEEM_MAX_FAILURES', 10, 1),
      redeemWindowS: integer(env, 'REDEEM_WINDOW_S', 600, 1),
      channelTtlS: integer(env, 'RELAY_CHANNEL_TTL_S', 600, 1),
    },
    sweepIntervalS: integer(env, 'SWEEP_INTERVAL_S', 60, 1),
    blobDir: path.resolve(read(env, 'BLOB_DIR') ?? path.join(dataDir, 'blobs')),
    blobBucket: bucket,
    blobDownload: blobDownload(env, bucket),
    blobBatchMaxBytes: integer(env, 'BLOB_BATCH_MAX_BYTES', 8 * 1024 * 1024, 1),
    batchDownloads: {
      perAccount: integer(env, 'BATCH_DOWNLOADS_PER_ACCOUNT', 4, 1, 64),
      perProcess: integer(env, 'BATCH_DOWNLOADS_PER_PROCESS', 16, 1),
    },
    cryptoSuites: integerList(env, 'CRYPTO_SUITES', [1]),
    uploadSessionTtlS: integer(env, 'UPLOAD_SESSION_TTL_S', 86_400, 1),
    // A bucket publishes a blob with one CopyObject, which S3 allows up to 5 GiB.
    maxBlobBytes: integer(env, 'MAX_BLOB_BYTES', 1_073_741_824, 1, bucket === null ? Number.MAX_SAFE_INTEGER : 5 * 1024 ** 3),
    storageQuota: {
      // 0 turns the byte quota off.
      accountBytes: integer(env, 'ACCOUNT_QUOTA_BYTES', 107_374_182_400, 0) || null,
      maxOpenUploads: integer(env, 'MAX_OPEN_UPLOADS', 256, 1),
    },
    protocol: protocolRange(env),
    upgradeWindowS: integer(env, 'UPGRADE_WINDOW_S', 900, 1),
    adminToken: adminToken(env),
    verification: {
      maxAssets: integer(env, 'VERIFY_MAX_ASSETS', 256, 1),
      maxHashes: integer(env, 'VERIFY_MAX_HASHES', 4096, 1),
      deepScanBudgetBytes: integer(env, 'DEEP_SCAN_BUDGET_BYTES', 1_073_741_824, 0),
      deepScanWindowS: integer(env, 'DEEP_SCAN_WINDOW_S', 3600, 1),
    },
    receiptChains: integer(env, 'RECEIPT_CHAINS', 1, 1, MAX_RECEIPT_CHAINS),
    receiptHandoffWaitMs: integer(env, 'RECEIPT_HANDOFF_WAIT_MS', 250, 1, 60_000),
    accountExport: {
      maxPerWindow: integer(env, 'EXPORTS_PER_WINDOW', 3, 1),
      windowS: integer(env, 'EXPORT_WINDOW_S', 3600, 1),
    },
  }
}

function protocolRange(env: Env): Config['protocol'] {
  const min = protocolDate(env, 'PROTOCOL_MIN', '2025-01-01')
  const current = protocolDate(env, 'PROTOCOL_CURRENT', '2026-06-01')
  const max = protocolDate(env, 'PROTOCOL_MAX', '2026-11-01')
  if (!(min <= current && current <= max))
    throw new ConfigError('PROTOCOL_CURRENT', `must lie within PROTOCOL_MIN (${min}) and PROTOCOL_MAX (${max}), got ${current}`)
  return { min, current, max }
}
