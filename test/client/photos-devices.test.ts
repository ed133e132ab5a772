// `coffer-photos devices`, `sessions`, `revoke` and `revoke-all` (docs/photos.md, "Devices and
// sessions"), run in-process against a real server, with two config folders as two
// devices of one account, and what a device whose session was revoked says on its next command.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateXWingKeyPair } from '../../src/client/format/xwing.ts'
import { decodeCanonical, encodeCanonical } from '../../src/codec/cbor.ts'
import { fromBase64, sha256Hex, toBase64 } from '../../src/sdk/bytes.ts'
import type { CofferClient, Tokens } from '../../src/sdk/client.ts'
import { readDirectory, signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { errorLineOf, events, expectOk, photos, readJson } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-devices-'))
})
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

/** Each test runs the binary up to a dozen times, a few seconds each on a busy machine. */
const CLI_TIMEOUT = 120_000

let homes = 0
const newHome = (): string => path.join(work, `home-${++homes}`, 'coffer-photos')

interface SavedAccount {
  server: string
  email: string
  user_id: string
  device_id: string
}
interface SavedKeys {
  state: string
  master_key: string
  identity_seeds: string
  xwing_seed: string
}

/** What a device whose session was revoked says on its next command. */
const signedOutLine = (): string =>
  `coffer-photos: this device was signed out (its session was revoked or expired); run \`coffer-photos login ${server.url}\` to sign in again [error.auth.session_expired]`

const login = async (home: string, email: string): Promise<void> =>
  expectOk(await photos(home, ['login', server.url, '--email', email, '--password-stdin'], { stdin: PASSWORD }))

/** A new account, set up on a first device. */
async function firstDevice(name = 'Kitchen laptop'): Promise<{ home: string; email: string }> {
  const email = uniqueEmail('devices')
  const home = newHome()
  expectOk(await photos(home, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD }))
  expectOk(await photos(home, ['setup', '--yes', '--device-name', name]))
  return { home, email }
}

/** A session of the test's own on the account (the SDK, not coffer-photos). */
async function sdkSession(email: string): Promise<CofferClient> {
  const client = server.client()
  expect((await client.login(email, PASSWORD)).kind).toBe('session')
  return client
}

/**
 * A second device of the account, logged in with coffer-photos; with `joined`, also holding the
 * account's keys and its own X-Wing key, and listed in directory version 2 (what joining through
 * the enrollment relay leaves behind), published here with the SDK.
 */
async function secondDevice(first: { home: string; email: string }, joined: { name: string; addedAt: string } | null): Promise<string> {
  const home = newHome()
  await login(home, first.email)
  if (joined === null) return home
  const keys = await readJson<SavedKeys>(first.home, 'keys.json')
  const own: SavedKeys = { ...keys, xwing_seed: toBase64(randomBytes(32)) }
  await writeFile(path.join(home, 'keys.json'), JSON.stringify(own), { mode: 0o600 })
  const account = await readJson<SavedAccount>(home, 'account.json')
  const identity = IdentityKey.fromSeeds(fromBase64(keys.identity_seeds))
  const client = await sdkSession(first.email)
  const current = readDirectory((await client.fetchDirectory(account.user_id))!.bytes, identity.publicKey)
  const added = {
    device_id: account.device_id,
    public_key: identity.publicKey,
    encryption_key: generateXWingKeyPair(fromBase64(own.xwing_seed)).publicKey,
    name: joined.name,
    added_at: joined.addedAt,
  }
  await client.publishDirectory(await signDirectory(identity, { version: current.version + 1, devices: [...current.devices, added] }), identity)
  await client.logout()
  return home
}

describe("the commands' usage", { timeout: CLI_TIMEOUT }, () => {
  it.each(['devices', 'sessions', 'revoke', 'revoke-all'])('%s --help prints its usage and exits 0', async (name) => {
    const run = await photos(newHome(), [name, '--help'])
    expectOk(run)
    expect(run.stdout).toMatch(new RegExp(`^usage: coffer-photos ${name}\\b`))
    expect(run.stdout.split('\n').length).toBeGreaterThan(4)
  })

  it('the overview lists each', async () => {
    const overview = await photos(newHome(), ['--help'])
    for (const name of ['devices', 'sessions', 'revoke', 'revoke-all']) expect(overview.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'))
  })

  it.each([
    [['devices', 'extra'], /devices takes no arguments/],
    [['sessions', 'extra'], /sessions takes no arguments/],
    [['revoke'], /revoke takes one session id/],
    [['revoke', 'a', 'b'], /revoke takes one session id/],
    [['revoke', 'abc'], /"abc" is not a session id: give at least its first 4 characters/],
    [['revoke', 'not-hex!'], /is not a session id/],
    [['revoke-all', 'now'], /revoke-all takes no arguments/],
    [['revoke-all'], /--yes is needed: there is no terminal to confirm on/],
    [['sessions', '--all'], /Unknown option '--all'/],
  ])('%j: exit 2 with the reason and the usage', async (args, reason) => {
    const run = await photos(newHome(), args)
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(reason)
    expect(run.stderr).toMatch(/usage: coffer-photos/)
  })

  it('without a login: exit 3 naming login', async () => {
    for (const args of [['devices'], ['sessions'], ['revoke', 'abcd1234'], ['revoke-all', '--yes']]) {
      const run = await photos(newHome(), args)
      expect(run.code, args.join(' ')).toBe(3)
      expect(run.stderr).toMatch(/not logged in: run `coffer-photos login <server-url>` first/)
    }
  })
})

describe('coffer-photos devices', { timeout: CLI_TIMEOUT }, () => {
  it('lists the device setup made, checked against the identity key: name, id, when added, key fingerprint, this device', async () => {
    const before = Date.now()
    const { home, email } = await firstDevice('Kitchen laptop')
    const account = await readJson<SavedAccount>(home, 'account.json')
    const keys = await readJson<SavedKeys>(home, 'keys.json')
    const identity = IdentityKey.fromSeeds(fromBase64(keys.identity_seeds))
    const encryption = sha256Hex(generateXWingKeyPair(fromBase64(keys.xwing_seed)).publicKey)

    const json = await photos(home, ['devices', '--json'])
    expectOk(json)
    const [device, directory, ...rest] = events(json)
    expect(rest).toEqual([])
    expect(device).toEqual({
      event: 'device',
      device_id: account.device_id,
      name: 'Kitchen laptop',
      added_at: expect.any(String),
      this_device: true,
      encryption_key_fingerprint: encryption,
      signing_key_fingerprint: identity.fingerprint,
    })
    expect(Date.parse(device!.added_at as string)).toBeGreaterThanOrEqual(before - 1000)
    expect(Date.parse(device!.added_at as string)).toBeLessThanOrEqual(Date.now())
    expect(directory).toEqual({
      event: 'directory',
      version: 1,
      identity_fingerprint: identity.fingerprint,
      verified: true,
      devices: 1,
      this_device_listed: true,
    })

    const text = await photos(home, ['devices'])
    expectOk(text)
    expect(text.stderr).toBe('')
    expect(text.stdout).toContain(`Devices of ${email} on ${server.url}: directory version 1,`)
    expect(text.stdout).toContain(`signed by the account's identity key ${identity.fingerprint} (verified here).`)
    expect(text.stdout).toMatch(/^Kitchen laptop {2}<- this device$/m)
    expect(text.stdout).toContain(`  device id       ${account.device_id}\n`)
    expect(text.stdout).toMatch(/^ {2}added {11}\d{4}-\d\d-\d\d \d\d:\d\d UTC$/m)
    expect(text.stdout).toContain(`  encryption key  ${encryption}\n`)
    expect(text.stdout).not.toContain('signing key') // it is the identity key
    expect(text.stdout).toContain('\n1 device.')
  })

  it('on two devices, lists both and marks on each its own', async () => {
    const first = await firstDevice('Kitchen laptop')
    const second = await secondDevice(first, { name: 'Phone', addedAt: '2026-03-01T14:02:11.000Z' })
    const firstId = (await readJson<SavedAccount>(first.home, 'account.json')).device_id
    const secondId = (await readJson<SavedAccount>(second, 'account.json')).device_id
    for (const [home, self] of [
      [first.home, firstId],
      [second, secondId],
    ] as const) {
      const run = await photos(home, ['devices', '--json'])
      expectOk(run)
      const listed = events(run).filter((e) => e.event === 'device')
      expect(listed.map((e) => [e.device_id, e.name, e.this_device])).toEqual([
        [firstId, 'Kitchen laptop', firstId === self],
        [secondId, 'Phone', secondId === self],
      ])
      expect(events(run).at(-1)).toMatchObject({ event: 'directory', version: 2, devices: 2, this_device_listed: true })
    }
    const text = await photos(second, ['devices'])
    expect(text.stdout).toMatch(/^Kitchen laptop$/m)
    expect(text.stdout).toMatch(/^Phone {2}<- this device$/m)
    expect(text.stdout).toContain('  added           2026-03-01 14:02 UTC\n')
    expect(text.stdout).toContain('\n2 devices.')
  })

  it("a directory not signed by the account's identity key is refused (exit 1) and nothing of it is shown", async () => {
    const { home, email } = await firstDevice('Kitchen laptop')
    const account = await readJson<SavedAccount>(home, 'account.json')
    const identity = IdentityKey.fromSeeds(fromBase64((await readJson<SavedKeys>(home, 'keys.json')).identity_seeds))
    const client = await sdkSession(email)
    // Someone with a session but not the key (or the server itself) publishes a directory that adds their device.
    const forged = await signDirectory(IdentityKey.generate(), {
      version: 2,
      devices: [
        { device_id: account.device_id, public_key: identity.publicKey, name: 'Kitchen laptop' },
        { device_id: randomUUID(), public_key: identity.publicKey, name: 'Intruder' },
      ],
    })
    await client.publishDirectory(forged, identity.publicKeyBase64)

    const run = await photos(home, ['devices'])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe('')
    expect(run.stderr).toBe(
      `coffer-photos: the device directory on the server is NOT signed by this account's identity key (${identity.fingerprint}, the one this device holds): it was changed by someone who does not hold the key, so nothing in it is shown; tell the server's operator\n`,
    )
    const json = await photos(home, ['devices', '--json'])
    expect(json.code).toBe(1)
    expect(events(json)).toEqual([{ event: 'error', message: expect.stringContaining("NOT signed by this account's identity key"), code: null, exit: 1 }])

    // The genuine body with a name changed under the genuine signature does not verify either.
    const genuine = await signDirectory(identity, {
      version: 3,
      devices: [{ device_id: account.device_id, public_key: identity.publicKey, name: 'Kitchen laptop' }],
    })
    const outer = decodeCanonical(genuine) as { directory_version: number; body: Uint8Array; sig: Uint8Array }
    const body = decodeCanonical(outer.body) as { devices: Record<string, unknown>[] }
    body.devices[0]!.name = 'Renamed'
    await client.publishDirectory(encodeCanonical({ ...outer, body: encodeCanonical(body) }), identity.publicKeyBase64)
    const altered = await photos(home, ['devices'])
    expect(altered.code).toBe(1)
    expect(altered.stderr).toMatch(/NOT signed by this account's identity key/)
    expect(altered.stdout).not.toContain('Renamed')

    // sessions still lists the sessions, without names from a directory it cannot trust.
    const sessions = await photos(home, ['sessions'])
    expectOk(sessions)
    expect(sessions.stderr).toMatch(/the device directory on the server does not verify \(`coffer-photos devices` says more\); device names are not shown/)
    expect(sessions.stdout).not.toContain('Kitchen laptop')
  })

  it('needs a set-up device (the identity key): exit 3', async () => {
    const first = await firstDevice()
    const second = await secondDevice(first, null)
    const run = await photos(second, ['devices'])
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(/this device is not set up for .+: run `coffer-photos setup` first/)
  })
})

describe('coffer-photos sessions', { timeout: CLI_TIMEOUT }, () => {
  it("lists the sessions of both devices, with names from the directory, and marks this device's", async () => {
    const first = await firstDevice('Kitchen laptop')
    const second = await secondDevice(first, { name: 'Phone', addedAt: '2026-03-01T14:02:11.000Z' })
    const firstId = (await readJson<SavedAccount>(first.home, 'account.json')).device_id
    const secondId = (await readJson<SavedAccount>(second, 'account.json')).device_id

    // Oldest first; the test server's clock stands still, so both were opened at the same instant here.
    const json = await photos(first.home, ['sessions', '--json'])
    expectOk(json)
    const listed = events(json)
    expect(listed.map((e) => e.event)).toEqual(['session', 'session', 'sessions'])
    expect(listed.find((e) => e.current === true)).toEqual({
      event: 'session',
      session_id: expect.any(String),
      current: true,
      device_id: firstId,
      device_name: 'Kitchen laptop',
      authenticated_at: expect.any(String),
      created_at: expect.any(String),
      ip_address: '127.0.0.1',
      user_agent: 'coffer-photos',
    })
    expect(listed.find((e) => e.current === false)).toMatchObject({ event: 'session', current: false, device_id: secondId, device_name: 'Phone' })
    expect(listed[2]).toEqual({ event: 'sessions', server: server.url, email: first.email, sessions: 2 })

    const text = await photos(second, ['sessions'])
    expectOk(text)
    const lines = text.stdout.split('\n')
    expect(lines[0]).toMatch(/^ {2}SESSION {3}DEVICE +SIGNED IN +RENEWED +ADDRESS +APP$/)
    const ids = (await photos(second, ['sessions', '--json'])).stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    const secondSession = ids.find((e) => e.event === 'session' && e.current === true)!.session_id as string
    expect(lines.find((line) => line.startsWith('* '))).toMatch(
      new RegExp(
        `^\\* ${secondSession.slice(0, 8)} +Phone +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC +127\\.0\\.0\\.1 +coffer-photos$`,
      ),
    )
    expect(lines.filter((line) => / Kitchen laptop /.test(line))).toHaveLength(1)
    expect(text.stdout).toContain(`2 sessions of ${first.email}; * is this device's.`)
  })

  it('on a device that is logged in but not set up, lists them without names', async () => {
    const first = await firstDevice('Kitchen laptop')
    const second = await secondDevice(first, null)
    const secondId = (await readJson<SavedAccount>(second, 'account.json')).device_id
    const run = await photos(second, ['sessions', '--json'])
    expectOk(run)
    expect(run.stderr).toBe('')
    expect(
      events(run)
        .filter((e) => e.event === 'session')
        .map((e) => [e.device_name, e.current])
        .sort(),
    ).toEqual([
      [null, false],
      [null, true],
    ])
    const text = await photos(second, ['sessions'])
    expect(text.stdout).toMatch(new RegExp(`^\\* \\S+ +device ${secondId.slice(0, 8)} `, 'm'))
  })
})

describe('coffer-photos revoke', { timeout: CLI_TIMEOUT }, () => {
  it("ends another device's session by the first characters of its id; that device says it was signed out (exit 3) and keeps its keys", async () => {
    const first = await firstDevice('Kitchen laptop')
    const second = await secondDevice(first, { name: 'Phone', addedAt: '2026-03-01T14:02:11.000Z' })
    const listed = events(await photos(first.home, ['sessions', '--json'])).filter((e) => e.event === 'session')
    const target = listed.find((e) => e.current === false)!.session_id as string

    const run = await photos(first.home, ['revoke', target.slice(0, 8).toUpperCase(), '--json'])
    expectOk(run)
    expect(events(run)).toEqual([
      {
        event: 'revoked',
        session_id: target,
        current: false,
        device_id: (await readJson<SavedAccount>(second, 'account.json')).device_id,
        device_name: 'Phone',
        authenticated_at: expect.any(String),
        created_at: expect.any(String),
        ip_address: '127.0.0.1',
        user_agent: 'coffer-photos',
        signed_out_here: false,
      },
    ])
    expect(
      events(await photos(first.home, ['sessions', '--json']))
        .filter((e) => e.event === 'session')
        .map((e) => e.session_id),
    ).not.toContain(target)

    const keysBefore = await readFile(path.join(second, 'keys.json'), 'utf8')
    const next = await photos(second, ['devices'])
    expect(next.code).toBe(3)
    expect(next.stdout).toBe('')
    expect(next.stderr).toBe(`${signedOutLine()}\n`)
    expect(await readFile(path.join(second, 'keys.json'), 'utf8')).toBe(keysBefore)
    expect((await readdir(second)).sort()).toEqual(['account.json', 'keys.json'])
    // From then on it is plainly not logged in, until it logs in again.
    const after = await photos(second, ['sessions'])
    expect(after.code).toBe(3)
    expect(after.stderr).toMatch(/^coffer-photos: not logged in \(logged out of .+\): run `coffer-photos login .+` first\n$/)
    await login(second, first.email)
    expectOk(await photos(second, ['devices']))
  })

  it('the text output names the device; a session the account no longer has is a usage error', async () => {
    const first = await firstDevice('Kitchen laptop')
    const second = await secondDevice(first, { name: 'Phone', addedAt: '2026-03-01T14:02:11.000Z' })
    const target = events(await photos(second, ['sessions', '--json'])).find((e) => e.event === 'session' && e.current === true)!.session_id as string
    const run = await photos(first.home, ['revoke', target])
    expectOk(run)
    expect(run.stdout).toMatch(
      new RegExp(`^Ended session ${target} \\(Phone, signed in \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\)\\.\\nThat device is signed out`),
    )
    const again = await photos(first.home, ['revoke', target.slice(0, 6)])
    expect(again.code).toBe(2)
    expect(errorLineOf(again)).toBe(
      `coffer-photos: no live session's id starts with "${target.slice(0, 6)}" (\`coffer-photos sessions\` lists them; a session takes a new id each time it renews its tokens)`,
    )
  })

  it('a device whose session was revoked and runs logout next: logged out, exit 0 (the server takes a logout of any token)', async () => {
    const first = await firstDevice()
    const second = await secondDevice(first, null)
    const target = events(await photos(second, ['sessions', '--json'])).find((e) => e.event === 'session' && e.current === true)!.session_id as string
    expectOk(await photos(first.home, ['revoke', target]))
    const run = await photos(second, ['logout'])
    expectOk(run)
    expect(run.stderr).toBe('')
    expect(await readdir(second)).toEqual(['account.json'])
  })

  it('status on a device whose session was revoked elsewhere: the session ended, in words, exit 3; --offline cannot know', async () => {
    const first = await firstDevice()
    const second = await secondDevice(first, null)
    const target = events(await photos(second, ['sessions', '--json'])).find((e) => e.event === 'session' && e.current === true)!.session_id as string
    expectOk(await photos(first.home, ['revoke', target]))
    const offline = await photos(second, ['status', '--offline', '--json']) // exit 3 whatever the session: this device is not set up
    expect(events(offline)[0]).toMatchObject({ logged_in: true, session: 'unchecked', set_up: false })
    const run = await photos(second, ['status'])
    expect(run.code).toBe(3)
    expect(run.stdout).toMatch(/^logged in: +no\nsession: +ended: revoked or expired$/m)
    expect(run.stdout).toContain(
      `\nThis device was signed out (its session was revoked or expired); run \`coffer-photos login ${server.url}\` to sign in again.\n`,
    )
    // The folder forgot the dead session, as any command that finds out does (this one holds no keys).
    expect(await readdir(second)).toEqual(['account.json'])
    const json = await photos(second, ['status', '--json'])
    expect(json.code).toBe(3)
    expect(events(json)[0]).toMatchObject({ logged_in: false, session: null, set_up: false })
    expectOk(await photos(first.home, ['status']))
  })

  it("this device's own session: logged out as logout does, keys kept", async () => {
    const { home } = await firstDevice()
    const tokens = await readJson<Tokens>(home, 'tokens.json')
    const own = events(await photos(home, ['sessions', '--json'])).find((e) => e.event === 'session' && e.current === true)!.session_id as string
    const run = await photos(home, ['revoke', own])
    expectOk(run)
    expect(run.stdout).toBe(
      `Ended session ${own}, this device's own: this device is signed out of ${server.url}.\nThe keys stay here; run \`coffer-photos login ${server.url}\` to sign in again.\n`,
    )
    expect((await readdir(home)).sort()).toEqual(['account.json', 'keys.json'])
    const refused = await fetch(`${server.url}/v1/profile`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(refused.status).toBe(401)
    const status = await photos(home, ['status', '--json'])
    expect(events(status)[0]).toMatchObject({ logged_in: false, set_up: true })
  })
})

describe('coffer-photos revoke-all', { timeout: CLI_TIMEOUT }, () => {
  it("ends every session of the account with the identity key's proof; each device says it was signed out; the keys stay", async () => {
    const first = await firstDevice('Kitchen laptop')
    const second = await secondDevice(first, { name: 'Phone', addedAt: '2026-03-01T14:02:11.000Z' })
    const other = await sdkSession(first.email)
    const secondKeys = await readFile(path.join(second, 'keys.json'), 'utf8')

    const run = await photos(second, ['revoke-all', '--yes', '--json'])
    expectOk(run)
    expect(events(run)).toEqual([{ event: 'revoked_all', server: server.url, email: first.email, revoked: 3, signed_out_here: true }])
    expect((await readdir(second)).sort()).toEqual(['account.json', 'keys.json'])
    expect(await readFile(path.join(second, 'keys.json'), 'utf8')).toBe(secondKeys)
    await expect(other.getProfile()).rejects.toMatchObject({ status: 401 })

    // The other device finds out on its next command, whichever it is.
    const next = await photos(first.home, ['sessions'])
    expect(next.code).toBe(3)
    expect(next.stderr).toBe(`${signedOutLine()}\n`)
    expect((await readdir(first.home)).sort()).toEqual(['account.json', 'keys.json'])
    await login(first.home, first.email)
    expectOk(await photos(first.home, ['devices']))
  })

  it("says so in words; with --json the other device's next command ends in an error event", async () => {
    const first = await firstDevice('Kitchen laptop')
    const second = await secondDevice(first, null)
    const run = await photos(first.home, ['revoke-all', '--yes'])
    expectOk(run)
    expect(run.stdout).toBe(
      `Signed out every session of ${first.email} on ${server.url}: 2 ended, this device's included.\n` +
        `This device is signed out too: run \`coffer-photos login ${server.url}\` to sign in again. Each other device says\n` +
        'it was signed out on its next command and signs in again the same way; the keys stay on every device.\n',
    )
    const json = await photos(second, ['sessions', '--json'])
    expect(json.code).toBe(3)
    expect(events(json)).toEqual([
      {
        event: 'error',
        message: signedOutLine()
          .replace(/^coffer-photos: /, '')
          .replace(/ \[.+\]$/, ''),
        code: 'error.auth.session_expired',
        exit: 3,
      },
    ])
    const afterwards = await photos(first.home, ['albums'])
    expect(afterwards.code).toBe(3)
    expect(afterwards.stderr).toMatch(/not logged in \(logged out of .+\)/)
  })

  it('an access token past its time: the refresh that fails says the same', async () => {
    const first = await firstDevice()
    const second = await secondDevice(first, null)
    const tokens = await readJson<Tokens>(second, 'tokens.json')
    await writeFile(path.join(second, 'tokens.json'), JSON.stringify({ ...tokens, expires_by: 1 }), { mode: 0o600 })
    expectOk(await photos(first.home, ['revoke-all', '--yes']))
    const next = await photos(second, ['sessions'])
    expect(next.code).toBe(3)
    expect(next.stderr).toBe(`${signedOutLine()}\n`)
  })

  it('needs the identity key: a device that is not set up is refused (exit 3) and nothing ends', async () => {
    const first = await firstDevice()
    const second = await secondDevice(first, null)
    const run = await photos(second, ['revoke-all', '--yes'])
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(/^coffer-photos: revoke-all needs the account's identity key, and this device does not hold it \(it is not set up\)/)
    expectOk(await photos(first.home, ['sessions']))
    expectOk(await photos(second, ['sessions']))
  })

  it('without --yes and without a terminal: exit 2, nothing asked of the server', async () => {
    const first = await firstDevice()
    const run = await photos(first.home, ['revoke-all'])
    expect(run.code).toBe(2)
    expectOk(await photos(first.home, ['sessions']))
  })
})
