// HOST takes an IP literal or an RFC 1123 hostname; anything else stops start-up naming HOST,
// before PUBLIC_ORIGIN is derived from it.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from './config.ts'

function hostError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`)
}

describe('HOST', () => {
  it('defaults to 127.0.0.1, also when blank like every other variable', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1')
    expect(loadConfig({ HOST: '  ' }).host).toBe('127.0.0.1')
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
    const error = hostError({ HOST: host })
    expect(error.variable).toBe('HOST')
    expect(error.message).toBe(`HOST: must be an IP address or a hostname such as 0.0.0.0, :: or localhost, got "${host}"`)
  })

  it('names HOST, not PUBLIC_ORIGIN, whether or not PUBLIC_ORIGIN is set', () => {
    expect(hostError({ HOST: 'no such host' }).variable).toBe('HOST')
    expect(hostError({ HOST: 'no such host', PUBLIC_ORIGIN: 'https://photos.example.com' }).variable).toBe('HOST')
  })
})
