// A variable set but empty stops start-up naming it (never taken as unset: an empty SECRET_KEY
// would otherwise become a new key). HOST takes an IP literal or an RFC 1123 hostname; anything
// else stops start-up naming HOST, before PUBLIC_ORIGIN is derived from it. The storage quota's variables take whole numbers (0
// turns the byte quota off; the cap on open uploads is at least 1), naming the variable otherwise.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from './config.ts'

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

  it.each(['localhost', '0.0.0.0', '::', '::1', '192.168.1.20', 'fe80::1', 'my-host.internal', 'db1', 'a.b-c.example', 'x'.repeat(63)])('accepts %s', (host) => {
    expect(loadConfig({ HOST: host }).host).toBe(host)
  })

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
