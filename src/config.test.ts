// A variable set but empty stops start-up naming it (never taken as unset: an empty SECRET_KEY
// would otherwise become a new key). HOST takes an IP literal or an RFC 1123 hostname; anything
// else stops start-up naming HOST, before PUBLIC_ORIGIN is derived from it. The storage quota's variables take whole numbers (0
// turns the byte quota off; the cap on open uploads is at least 1), naming the variable otherwise.
// BLOB_STORE_URL selects a bucket (s3://bucket/prefix) with the S3_* settings; BLOB_DOWNLOAD=redirect needs one.

// A bucket URL is read with the S3_* variables whether BLOB_STORE_URL or `coffer blobs migrate
// --to` gives it, and its errors name where it came from.
import { describe, expect, it } from 'vitest'
import { bucketAt, ConfigError, loadConfig } from './config.ts'

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`)
}

describe('a variable set but empty', () => {
  it.each(['SECRET_KEY', 'DATABASE_URL', 'DATA_DIR', 'BLOB_DIR', 'HOST', 'PORT', 'ADMIN_TOKEN'])('%s is refused, naming it', (variable) => {
    for (const value of ['', '  ']) {
      const error = configError({ [variable]: value })
      expect(error.variable).toBe(variable)
      expect(error.message).toBe(`${variable}: is set but empty; give it a value, or unset it to use the default`)
    }
  })
})

describe('HOST', () => {
  it('defaults to 127.0.0.1', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1')
  })

  it.each(['localhost', '0.0.0.0', '::', '::1', '192.168.1.20', 'fe80::1', 'my-host.internal', 'db1', 'a.b-c.example', 'x'.repeat(63)])(
    'accepts %s',
    (host) => {
      expect(loadConfig({ HOST: host }).host).toBe(host)
    },
  )

  it('brackets an IPv6 literal in the derived PUBLIC_ORIGIN', () => {
    expect(loadConfig({ HOST: '::1', PORT: '9000' }).publicOrigin).toBe('http://[::1]:9000')
  })

  it.each([
    'no such host',
    'http://x',
    'a..b',
    '.example',
    'example.',
    '-leading.example',
    'trailing-.example',
    'under_score',
    '1.2.3',
    '256.1.1.1',
    'host:8080',
    'x'.repeat(64),
    `${'a.'.repeat(127)}ab`,
  ])('refuses %s naming HOST', (host) => {
    const error = configError({ HOST: host })
    expect(error.variable).toBe('HOST')
    expect(error.message).toBe(`HOST: must be an IP address or a hostname such as 0.0.0.0, :: or localhost, got "${host}"`)
  })

  it('names HOST, not PUBLIC_ORIGIN, whether or not PUBLIC_ORIGIN is set', () => {
    expect(configError({ HOST: 'no such host' }).variable).toBe('HOST')
    expect(configError({ HOST: 'no such host', PUBLIC_ORIGIN: 'https://photos.example.com' }).variable).toBe('HOST')
  })
})

describe('ACCOUNT_QUOTA_BYTES and MAX_OPEN_UPLOADS', () => {
  it('default to 100 GiB and 256 open upload sessions', () => {
    expect(loadConfig({}).storageQuota).toEqual({ accountBytes: 107_374_182_400, maxOpenUploads: 256 })
  })

  it('take whole numbers; ACCOUNT_QUOTA_BYTES=0 turns the byte quota off', () => {
    expect(loadConfig({ ACCOUNT_QUOTA_BYTES: '5000000', MAX_OPEN_UPLOADS: '1' }).storageQuota).toEqual({ accountBytes: 5_000_000, maxOpenUploads: 1 })
    expect(loadConfig({ ACCOUNT_QUOTA_BYTES: '0' }).storageQuota.accountBytes).toBeNull()
  })

  it.each([
    ['ACCOUNT_QUOTA_BYTES', '-1', 'must be a whole number, got "-1"'],
    ['ACCOUNT_QUOTA_BYTES', '100GiB', 'must be a whole number, got "100GiB"'],
    ['ACCOUNT_QUOTA_BYTES', '1e11', 'must be a whole number, got "1e11"'],
    ['ACCOUNT_QUOTA_BYTES', '9007199254740992', 'must be between 0 and 9007199254740991, got 9007199254740992'],
    ['MAX_OPEN_UPLOADS', '0', 'must be between 1 and 9007199254740991, got 0'],
    ['MAX_OPEN_UPLOADS', 'many', 'must be a whole number, got "many"'],
  ])('refuses %s=%s naming it', (variable, value, why) => {
    const error = configError({ [variable]: value })
    expect(error.variable).toBe(variable)
    expect(error.message).toBe(`${variable}: ${why}`)
  })
})

describe('EXPORTS_PER_WINDOW and EXPORT_WINDOW_S', () => {
  it('default to 3 account exports per hour', () => {
    expect(loadConfig({}).accountExport).toEqual({ maxPerWindow: 3, windowS: 3600 })
    expect(loadConfig({ EXPORTS_PER_WINDOW: '10', EXPORT_WINDOW_S: '86400' }).accountExport).toEqual({ maxPerWindow: 10, windowS: 86_400 })
  })

  it.each([
    ['EXPORTS_PER_WINDOW', '0', 'must be between 1 and 9007199254740991, got 0'],
    ['EXPORTS_PER_WINDOW', 'few', 'must be a whole number, got "few"'],
    ['EXPORT_WINDOW_S', '0', 'must be between 1 and 9007199254740991, got 0'],
  ])('refuses %s=%s naming it', (variable, value, why) => {
    const error = configError({ [variable]: value })
    expect(error.variable).toBe(variable)
    expect(error.message).toBe(`${variable}: ${why}`)
  })
})

describe('BATCH_DOWNLOADS_PER_ACCOUNT and BATCH_DOWNLOADS_PER_PROCESS', () => {
  it('default to 4 batch downloads in flight per account and 16 per process', () => {
    expect(loadConfig({}).batchDownloads).toEqual({ perAccount: 4, perProcess: 16 })
    expect(loadConfig({ BATCH_DOWNLOADS_PER_ACCOUNT: '64', BATCH_DOWNLOADS_PER_PROCESS: '100' }).batchDownloads).toEqual({ perAccount: 64, perProcess: 100 })
  })

  it.each([
    ['BATCH_DOWNLOADS_PER_ACCOUNT', '0', 'must be between 1 and 64, got 0'],
    // Each slot number is one statement when the account's slots are all taken.
    ['BATCH_DOWNLOADS_PER_ACCOUNT', '65', 'must be between 1 and 64, got 65'],
    ['BATCH_DOWNLOADS_PER_PROCESS', '0', 'must be between 1 and 9007199254740991, got 0'],
  ])('refuses %s=%s naming it', (variable, value, why) => {
    const error = configError({ [variable]: value })
    expect(error.variable).toBe(variable)
    expect(error.message).toBe(`${variable}: ${why}`)
  })
})

describe('the blob store', () => {
  it('is the folder when BLOB_STORE_URL is unset, and downloads stream', () => {
    const config = loadConfig({ DATA_DIR: '/srv/coffer' })
    expect(config.blobBucket).toBeNull()
    expect(config.blobDir).toBe('/srv/coffer/blobs')
    expect(config.blobDownload).toBe('stream')
  })

  it('is a bucket with s3://bucket/prefix, the prefix ending in one slash, the S3_* settings beside it', () => {
    expect(
      loadConfig({
        BLOB_STORE_URL: 's3://photos-eu/coffer/prod/',
        S3_ENDPOINT: 'https://minio.internal:9000/',
        S3_REGION: 'eu-west-1',
        S3_FORCE_PATH_STYLE: 'true',
      }).blobBucket,
    ).toEqual({
      bucket: 'photos-eu',
      prefix: 'coffer/prod/',
      endpoint: 'https://minio.internal:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
    })
    expect(loadConfig({ BLOB_STORE_URL: 's3://photos' }).blobBucket).toEqual({
      bucket: 'photos',
      prefix: '',
      endpoint: null,
      region: 'us-east-1',
      forcePathStyle: false,
    })
    expect(loadConfig({ BLOB_STORE_URL: 's3://photos', AWS_REGION: 'ap-south-1' }).blobBucket?.region).toBe('ap-south-1')
  })

  it.each([
    ['BLOB_STORE_URL', { BLOB_STORE_URL: 'https://photos.s3.amazonaws.com' }, 'must be s3://bucket or s3://bucket/prefix'],
    ['BLOB_STORE_URL', { BLOB_STORE_URL: 's3://Photos_Bucket' }, 'is not a bucket name'],
    ['BLOB_STORE_URL', { BLOB_STORE_URL: 's3://photos/a//b' }, 'has an empty, . or .. segment'],
    ['BLOB_STORE_URL', { BLOB_STORE_URL: 's3://photos/../b' }, 'has an empty, . or .. segment'],
    ['BLOB_STORE_URL', { BLOB_STORE_URL: 's3://photos/a b%41+é' }, 'may hold only letters, digits'],
    ['S3_ENDPOINT', { BLOB_STORE_URL: 's3://photos', S3_ENDPOINT: 'minio:9000' }, 'must be an http(s) URL'],
    ['S3_FORCE_PATH_STYLE', { BLOB_STORE_URL: 's3://photos', S3_FORCE_PATH_STYLE: 'maybe' }, 'must be true or false'],
    ['BLOB_DOWNLOAD', { BLOB_DOWNLOAD: 'proxy' }, 'must be stream or redirect'],
    ['BLOB_DOWNLOAD', { BLOB_DOWNLOAD: 'redirect' }, 'redirect needs a bucket'],
  ])('refuses a bad %s, naming it', (variable, env, message) => {
    const error = configError(env)
    expect(error.variable).toBe(variable)
    expect(error.message).toContain(message)
  })

  it('bounds MAX_BLOB_BYTES by 5 GiB on a bucket (one CopyObject publishes a blob), not on the folder', () => {
    expect(configError({ BLOB_STORE_URL: 's3://photos', MAX_BLOB_BYTES: String(5 * 1024 ** 3 + 1) }).variable).toBe('MAX_BLOB_BYTES')
    expect(loadConfig({ BLOB_STORE_URL: 's3://photos', MAX_BLOB_BYTES: String(5 * 1024 ** 3) }).maxBlobBytes).toBe(5 * 1024 ** 3)
    expect(loadConfig({ MAX_BLOB_BYTES: String(8 * 1024 ** 3) }).maxBlobBytes).toBe(8 * 1024 ** 3)
  })

  it('redirects downloads with BLOB_DOWNLOAD=redirect on a bucket', () => {
    expect(loadConfig({ BLOB_STORE_URL: 's3://photos', BLOB_DOWNLOAD: 'redirect' }).blobDownload).toBe('redirect')
  })

  it('gives a batch download 8 MiB of blob bytes unless BLOB_BATCH_MAX_BYTES says otherwise (at least 1)', () => {
    expect(loadConfig({}).blobBatchMaxBytes).toBe(8 * 1024 * 1024)
    expect(loadConfig({ BLOB_BATCH_MAX_BYTES: '65536' }).blobBatchMaxBytes).toBe(65_536)
    for (const value of ['0', '-1', '8MiB']) expect(configError({ BLOB_BATCH_MAX_BYTES: value }).variable).toBe('BLOB_BATCH_MAX_BYTES')
  })
})

describe('a bucket URL (BLOB_STORE_URL, and coffer blobs migrate --to)', () => {
  const s3 = { S3_ENDPOINT: 'http://minio.internal:9000/', S3_REGION: 'eu-central-1', S3_FORCE_PATH_STYLE: 'true' }

  it('is reached with S3_ENDPOINT, S3_REGION and S3_FORCE_PATH_STYLE wherever it comes from', () => {
    const settings = { bucket: 'photos', prefix: 'coffer/', endpoint: 'http://minio.internal:9000', region: 'eu-central-1', forcePathStyle: true }
    expect(loadConfig({ ...s3, BLOB_STORE_URL: 's3://photos/coffer/' }).blobBucket).toEqual(settings)
    expect(bucketAt('--to', 's3://photos/coffer', s3)).toEqual(settings)
    expect(loadConfig({}).blobBucket).toBeNull()
  })

  it('names where it came from when it is not s3://bucket/prefix', () => {
    expect(configError({ BLOB_STORE_URL: 'https://photos' }).message).toBe(
      'BLOB_STORE_URL: must be s3://bucket or s3://bucket/prefix (unset, blobs go to BLOB_DIR), got "https://photos"',
    )
    expect(() => bucketAt('--to', 'https://photos', {})).toThrow(new ConfigError('--to', 'must be s3://bucket or s3://bucket/prefix, got "https://photos"'))
    expect(() => bucketAt('--to', 's3://Photos', {})).toThrow('--to: "Photos" is not a bucket name')
    expect(() => bucketAt('--to', 's3://photos', { S3_ENDPOINT: 'minio' })).toThrow('S3_ENDPOINT: must be an http(s) URL')
  })
})
