// The account side of `coffer-photos` (docs/photos.md): login (with --register and with a second
// factor), setup, status and logout, run in-process against a real server, on the config folder
// a person would have; the process itself (its restart, its compile cache) as the real binary. What setup publishes is read back with the SDK and the client format.
import { createServer, type AddressInfo } from 'node:net'
import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openAccount } from '../../src/cli/photos/account.ts'
import { SetupNeeded } from '../../src/cli/photos/command.ts'
import { Home } from '../../src/cli/photos/home.ts'
import { ClientFormatError } from '../../src/client/format/errors.ts'
import { generateRecoveryKey, openEscrow, recoveryKeyFromPhrase, recoveryPhrase } from '../../src/client/format/recovery.ts'
import { generateXWingKeyPair } from '../../src/client/format/xwing.ts'
import { nativeArgon2id } from '../../src/client/node/crypto.ts'
import { fromBase64 } from '../../src/sdk/bytes.ts'
import { CofferClient, type Tokens } from '../../src/sdk/client.ts'
import { readDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { PASSWORD, THIRTY_SECONDS, uniqueEmail, withSecondFactor, wrongCode } from '../support/actors.ts'
import { errorLineOf, events, expectOk, photos, readJson, spawnPhotos, type PhotosRun } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-account-'))
})
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

let homes = 0
/** A config folder that does not exist yet (coffer-photos makes it). */
const newHome = (): string => path.join(work, `home-${++homes}`, 'coffer-photos')

/** Registers an account through coffer-photos itself. */
async function registeredHome(email = uniqueEmail('photos')): Promise<{ home: string; email: string }> {
  const home = newHome()
  expectOk(await photos(home, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: `${PASSWORD}\n` }))
  return { home, email }
}

/** Registers and sets up; answers the phrase setup showed. */
async function setUpHome(deviceName = 'Test laptop'): Promise<{ home: string; email: string; phrase: string; run: PhotosRun }> {
  const { home, email } = await registeredHome()
  const run = await photos(home, ['setup', '--yes', '--json', '--device-name', deviceName])
  expectOk(run)
  const phrase = events(run).find((e) => e.event === 'recovery_phrase')?.phrase
  expect(typeof phrase).toBe('string')
  return { home, email, phrase: phrase as string, run }
}

/** A session of the test's own on the account (the SDK, not coffer-photos). */
async function sdkSession(email: string): Promise<CofferClient> {
  const client = server.client()
  const result = await client.login(email, PASSWORD)
  expect(result.kind).toBe('session')
  return client
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const port = (probe.address() as { port: number }).port
  await new Promise((resolve) => probe.close(resolve))
  return port
}

describe('coffer-photos --help', () => {
  it.each(['login', 'setup', 'recover', 'status', 'backup', 'albums', 'ls', 'verify', 'restore', 'logout'])(
    '%s --help prints its usage and exits 0, without a server or a config folder',
    async (name) => {
      const home = newHome()
      const run = await photos(home, [name, '--help'])
      expectOk(run)
      expect(run.stdout).toMatch(new RegExp(`^usage: coffer-photos ${name}\\b`))
      expect(run.stdout.split('\n').length).toBeGreaterThan(3)
      expect(run.stderr).toBe('')
      await expect(stat(home)).rejects.toMatchObject({ code: 'ENOENT' })
    },
  )

  it('lists every command in the overview', async () => {
    const run = await photos(newHome(), ['--help'])
    expectOk(run)
    for (const name of ['login', 'setup', 'recover', 'status', 'backup', 'albums', 'ls', 'verify', 'restore', 'logout', 'delete-account'])
      expect(run.stdout).toMatch(new RegExp(`^  ${name} `, 'm'))
  })
})

describe('coffer-photos usage errors', () => {
  it.each([
    [['backup'], /backup takes one folder/],
    [['backup', '/no/such/folder'], /is not a folder/],
    [['backup', '.', '--concurrency', '0'], /--concurrency takes a whole number from 1 to 64/],
    [['restore', 'album'], /restore takes an album name and a destination folder/],
    [['ls'], /ls takes one album name/],
    [['backup', '.', '--no-such-option'], /Unknown option '--no-such-option'/],
    [['no-such-command'], /no command "no-such-command"/],
  ])('%j: exit 2 with the reason and the usage', async (args, reason) => {
    const run = await photos(newHome(), args)
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(reason)
    expect(run.stderr).toMatch(/usage: coffer-photos/)
  })

  it('a command that needs an account, without one: exit 3 naming login', async () => {
    const run = await photos(newHome(), ['albums'])
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(/not logged in: run `coffer-photos login <server-url>` first/)
  })
})

describe('coffer-photos login', () => {
  it('--register creates the account and logs in, keeping the session and a device id in the config folder', async () => {
    const email = uniqueEmail('register')
    const home = newHome()
    const run = await photos(home, ['login', server.url, '--register', '--email', email, '--password-stdin', '--json'], { stdin: `${PASSWORD}\n` })
    expectOk(run)
    const [event] = events(run)
    expect(event).toMatchObject({ event: 'logged_in', server: server.url, email, registered: true, set_up: false })
    const account = await readJson(home, 'account.json')
    expect(account).toEqual({ server: server.url, email, user_id: event!.user_id, device_id: event!.device_id })
    expect(account.device_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)

    // The session works, the password (with its final line break cut) is the account's, and the
    // device id is the advisory one of the session (the one register opened was ended).
    const tokens = await readJson<Tokens>(home, 'tokens.json')
    const client = new CofferClient({ baseUrl: server.url, tokens, now: server.clock.now })
    const sessions = (await client.listSessions()).sessions
    expect(sessions.map((s) => s.device_id)).toEqual([account.device_id])
    expect((await sdkSession(email)).tokens).not.toBeNull()

    // Logging in again keeps the device id and ends the session it replaces.
    expectOk(await photos(home, ['login', server.url, '--email', email, '--password-stdin'], { stdin: PASSWORD }))
    expect((await readJson(home, 'account.json')).device_id).toBe(account.device_id)
    const again = await readJson<Tokens>(home, 'tokens.json')
    expect(again.access_token).not.toBe(tokens.access_token)
    const live = (await new CofferClient({ baseUrl: server.url, tokens: again, now: server.clock.now }).listSessions()).sessions.filter(
      (s) => s.device_id === account.device_id,
    )
    expect(live).toHaveLength(1)
  })

  it("--register of an existing account is refused with the server's code, exit 4", async () => {
    const { email } = await registeredHome()
    const run = await photos(newHome(), ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD })
    expect(run.code).toBe(4)
    expect(run.stderr).toMatch(/^coffer-photos: the server refused: .*\[error\.auth\.account_exists\]\n$/)
  })

  it('a wrong password: exit 4, one sentence with the error code, nothing kept', async () => {
    const { email } = await registeredHome()
    const home = newHome()
    const run = await photos(home, ['login', server.url, '--email', email, '--password-stdin'], { stdin: 'not the password' })
    expect(run.code).toBe(4)
    expect(run.stderr).toMatch(/^coffer-photos: the server refused: [^\n]+ \[error\.auth\.invalid_credentials\]\n$/)
    expect(run.stdout).toBe('')
    await expect(readFile(path.join(home, 'tokens.json'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('with a second factor: the code from --totp-code finishes the sign-in; a wrong one is refused, exit 4; none without a terminal is a usage error', async () => {
    const member = await withSecondFactor(server, 'photos-totp')
    // The confirming step is spent (replay ledger): use the next one.
    const next = (): string => member.authenticator.codeAt(server.clock.now() + THIRTY_SECONDS)
    const args = ['login', server.url, '--email', member.email, '--password-stdin']

    const missing = await photos(newHome(), args, { stdin: PASSWORD })
    expect(missing.code).toBe(2)
    expect(errorLineOf(missing)).toMatch(/--totp-code .*there is no terminal/)

    const wrong = await photos(newHome(), [...args, '--totp-code', wrongCode(member.authenticator, server.clock.now())], { stdin: PASSWORD })
    expect(wrong.code).toBe(4)
    expect(wrong.stderr).toMatch(/\[error\.auth\.invalid_code\]\n$/)

    const home = newHome()
    const run = await photos(home, [...args, '--totp-code', next(), '--json'], { stdin: PASSWORD })
    expectOk(run)
    expect(events(run)[0]).toMatchObject({ event: 'logged_in', email: member.email })
    const tokens = await readJson<Tokens>(home, 'tokens.json')
    const sessions = (await new CofferClient({ baseUrl: server.url, tokens, now: server.clock.now }).listSessions()).sessions
    expect(sessions.find((s) => s.current)?.device_id).toBe((await readJson(home, 'account.json')).device_id)
  })

  it('with a second factor: a recovery code from --totp-code signs in (used up), in any case; text that is no code is a usage error', async () => {
    const member = await withSecondFactor(server, 'photos-recovery')
    const args = ['login', server.url, '--email', member.email, '--password-stdin']

    const malformed = await photos(newHome(), [...args, '--totp-code', '12345'], { stdin: PASSWORD })
    expect(malformed.code).toBe(2)
    expect(errorLineOf(malformed)).toMatch(/--totp-code .*recovery codes \(xxxxx-xxxxx\)/)

    const home = newHome()
    const run = await photos(home, [...args, '--totp-code', ` ${member.recoveryCodes[0]!.toUpperCase()} `, '--json'], { stdin: PASSWORD })
    expectOk(run)
    expect(events(run)[0]).toMatchObject({ event: 'logged_in', email: member.email })
    expect((await member.client.secondFactorStatus()).recovery_codes_remaining).toBe(9)
    const again = await photos(newHome(), [...args, '--totp-code', member.recoveryCodes[0]!], { stdin: PASSWORD })
    expect(again.code).toBe(4)
    expect(again.stderr).toMatch(/\[error\.auth\.invalid_code\]\n$/)
  })

  it('without a terminal, a missing email or password is a usage error (exit 2) and nothing is sent', async () => {
    const noEmail = await photos(newHome(), ['login', server.url, '--password-stdin'], { stdin: PASSWORD })
    expect(noEmail.code).toBe(2)
    expect(errorLineOf(noEmail)).toBe('coffer-photos: --email is needed: there is no terminal to ask on')
    const noPassword = await photos(newHome(), ['login', server.url, '--email', uniqueEmail()])
    expect(noPassword.code).toBe(2)
    expect(errorLineOf(noPassword)).toMatch(/--password-stdin/)
    const badUrl = await photos(newHome(), ['login', 'photos.example.org', '--email', uniqueEmail(), '--password-stdin'], { stdin: PASSWORD })
    expect(badUrl.code).toBe(2)
    expect(errorLineOf(badUrl)).toMatch(/is not a server address/)
  })

  it('an unreachable server: exit 5 after retrying, one sentence', async () => {
    const home = newHome()
    const run = await photos(home, ['login', `http://127.0.0.1:${await closedPort()}`, '--email', uniqueEmail(), '--password-stdin'], { stdin: PASSWORD })
    expect(run.code).toBe(5)
    const lines = run.stderr.trim().split('\n')
    expect(lines.at(-1)).toMatch(/^coffer-photos: the server could not be reached \(.+\); check the address and your connection$/)
    expect(lines.slice(0, -1).every((line) => /trying again in \d+ s$/.test(line))).toBe(true)
    expect(lines.length).toBeGreaterThan(1)
    await expect(readFile(path.join(home, 'account.json'))).rejects.toMatchObject({ code: 'ENOENT' })
  })
})

describe('the coffer-photos process', () => {
  /** The environment and arguments of the binary running `args` once it retries a server that does not answer (the program is loaded then, so any restart is behind it). */
  async function settledProcess(home: string, args: readonly string[], env: Record<string, string> = {}): Promise<{ environ: string[]; argv: string[] }> {
    const started = spawnPhotos(home, args, { stdin: PASSWORD, env })
    await expect.poll(() => started.stderr(), { timeout: 15_000 }).toMatch(/trying again in \d+ s/)
    const environ = (await readFile(`/proc/${started.child.pid}/environ`, 'utf8')).split('\0')
    const argv = (await readFile(`/proc/${started.child.pid}/cmdline`, 'utf8')).split('\0')
    started.child.kill('SIGKILL')
    await started.done
    return { environ, argv }
  }

  it('runs a command on the photos with MALLOC_ARENA_MAX=2 and MALLOC_MMAP_THRESHOLD_=131072 (glibc) and 8 MiB semi-spaces as the process it was started as, unless a variable was set', async () => {
    const { home } = await setUpHome()
    const account = await readJson(home, 'account.json')
    await writeFile(path.join(home, 'account.json'), JSON.stringify({ ...account, server: `http://127.0.0.1:${await closedPort()}` }))
    for (const [env, expected] of [
      [{}, ['MALLOC_ARENA_MAX=2', 'MALLOC_MMAP_THRESHOLD_=131072']],
      [{ MALLOC_ARENA_MAX: '4' }, ['MALLOC_ARENA_MAX=4', 'MALLOC_MMAP_THRESHOLD_=131072']],
      [{ MALLOC_MMAP_THRESHOLD_: '65536' }, ['MALLOC_ARENA_MAX=2', 'MALLOC_MMAP_THRESHOLD_=65536']],
    ] as const) {
      const { environ, argv } = await settledProcess(home, ['albums'], env)
      expect(environ.filter((entry) => entry.startsWith('MALLOC_')).sort()).toEqual(expected)
      expect(argv.filter((arg) => arg.startsWith('--max-semi-space-size'))).toEqual(['--max-semi-space-size=8'])
    }
  })

  it('runs an account command as it was started, without the restart', async () => {
    const { environ, argv } = await settledProcess(newHome(), ['login', `http://127.0.0.1:${await closedPort()}`, '--email', uniqueEmail(), '--password-stdin'])
    expect(environ.filter((entry) => entry.startsWith('MALLOC_'))).toEqual([])
    expect(argv.filter((arg) => arg.startsWith('--max-semi-space-size'))).toEqual([])
  })

  it('loads only what a command needs: --help and status load neither TypeBox, sharp and the image pipeline, nor the prompts', async () => {
    const { home } = await setUpHome()
    const heavy = /\/node_modules\/(typebox|sharp|@img|exifr|@inquirer)\/|\/src\/client\/node\/media\.ts$/
    for (const args of [['--help'], ['status'], ['backup', '--help']]) {
      const file = path.join(work, `loaded-${args.join('')}.txt`)
      expectOk(
        await spawnPhotos(home, args, {
          nodeArgs: ['--import', path.join(import.meta.dirname, '../support/loaded-modules.ts')],
          env: { LOADED_MODULES_FILE: file },
        }).done,
      )
      const loaded = (await readFile(file, 'utf8')).split('\n')
      expect(
        loaded.some((url) => url.endsWith('/src/cli/photos/program.ts')),
        args.join(' '),
      ).toBe(true)
      // backup --help loads backup's own code: the check can see what it looks for.
      expect(loaded.filter((url) => heavy.test(url)).length > 0, args.join(' ')).toBe(args[0] === 'backup')
    }
  })

  it("keeps its compiled modules in the person's cache folder: $XDG_CACHE_HOME, else ~/.cache; NODE_COMPILE_CACHE decides when set", async () => {
    const cacheOf = (root: string) => path.join(root, 'coffer-photos', 'node-compile-cache')
    const entries = async (folder: string): Promise<string[]> => readdir(folder, { recursive: true }).catch(() => [])
    const xdg = path.join(work, 'xdg-cache')
    expectOk(await spawnPhotos(newHome(), ['--help'], { env: { XDG_CACHE_HOME: xdg } }).done)
    expect((await entries(cacheOf(xdg))).length).toBeGreaterThan(0)
    // A relative XDG_CACHE_HOME is invalid (XDG): ~/.cache.
    const home = path.join(work, 'person')
    expectOk(await spawnPhotos(newHome(), ['--help'], { env: { HOME: home, XDG_CACHE_HOME: 'relative' } }).done)
    expect((await entries(cacheOf(path.join(home, '.cache')))).length).toBeGreaterThan(0)
    const chosen = path.join(work, 'chosen-cache')
    const ignored = path.join(work, 'ignored-cache')
    expectOk(await spawnPhotos(newHome(), ['--help'], { env: { XDG_CACHE_HOME: ignored, NODE_COMPILE_CACHE: chosen } }).done)
    expect((await entries(chosen)).length).toBeGreaterThan(0)
    expect(await entries(ignored)).toEqual([])
  })
})

describe('coffer-photos setup', () => {
  it('needs a login first: exit 3, saying what to run', async () => {
    const run = await photos(newHome(), ['setup', '--yes'])
    expect(run.code).toBe(3)
    expect(run.stderr).toBe('coffer-photos: not logged in: run `coffer-photos login <server-url>` first\n')
  })

  it('needs --yes without a terminal to confirm the phrase on: exit 2 before anything is made', async () => {
    const { home } = await registeredHome()
    const run = await photos(home, ['setup'])
    expect(run.code).toBe(2)
    expect(errorLineOf(run)).toMatch(/--yes is needed/)
    await expect(readFile(path.join(home, 'keys.json'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('publishes a signed directory (version 1) listing this device with its identity and X-Wing keys', async () => {
    const { home, email, run } = await setUpHome('Kitchen laptop')
    const account = await readJson(home, 'account.json')
    const keys = await readJson(home, 'keys.json')
    expect(keys.state).toBe('complete')
    const identity = IdentityKey.fromSeeds(fromBase64(keys.identity_seeds!))
    const xwing = generateXWingKeyPair(fromBase64(keys.xwing_seed!))

    const fetched = await (await sdkSession(email)).fetchDirectory(account.user_id!)
    const directory = readDirectory(fetched!.bytes, identity.publicKey)
    expect(directory.version).toBe(1)
    expect(directory.devices).toEqual([
      { device_id: account.device_id, public_key: identity.publicKey, encryption_key: xwing.publicKey, name: 'Kitchen laptop', added_at: expect.any(String) },
    ])
    expect(Math.abs(Date.parse(directory.devices[0]!.added_at!) - Date.now())).toBeLessThan(5 * 60_000)
    expect(directory.devices[0]!.encryption_key).toHaveLength(1216)
    expect(() => readDirectory(fetched!.bytes, IdentityKey.generate().publicKey)).toThrow(/does not verify/)

    expect(events(run).at(-1)).toEqual({
      event: 'set_up',
      server: server.url,
      email,
      user_id: account.user_id,
      device_id: account.device_id,
      device_name: 'Kitchen laptop',
      identity_fingerprint: identity.fingerprint,
      directory_version: 1,
    })
  })

  it('stores an escrow that opens with the phrase it showed, to the keys it saved, and with no other phrase', async () => {
    const { home, email, phrase } = await setUpHome()
    expect(phrase.split(' ')).toHaveLength(24)
    const account = await readJson(home, 'account.json')
    const keys = await readJson(home, 'keys.json')
    const escrow = await (await sdkSession(email)).fetchEscrow()
    const opened = await openEscrow(recoveryKeyFromPhrase(phrase), account.user_id!, escrow, { argon2id: nativeArgon2id })
    expect(opened.masterKey).toEqual(fromBase64(keys.master_key!))
    expect(opened.identitySeeds).toEqual(fromBase64(keys.identity_seeds!))
    const other = recoveryKeyFromPhrase(recoveryPhrase(generateRecoveryKey()))
    const refusal = await openEscrow(other, account.user_id!, escrow, { argon2id: nativeArgon2id }).catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(ClientFormatError)
    expect(refusal).toMatchObject({ code: 'authentication' })
  })

  it('without --json shows the phrase as 24 numbered words', async () => {
    const { home } = await registeredHome()
    const run = await photos(home, ['setup', '--yes'])
    expectOk(run)
    const numbered = [...run.stdout.matchAll(/(\d+)\. ([a-z]+)/g)]
    expect(numbered.map((m) => Number(m[1]))).toEqual(Array.from({ length: 24 }, (_, i) => i + 1))
    const phrase = numbered.map((m) => m[2]).join(' ')
    const account = await readJson(home, 'account.json')
    const escrow = await (await sdkSession(account.email!)).fetchEscrow()
    await expect(openEscrow(recoveryKeyFromPhrase(phrase), account.user_id!, escrow, { argon2id: nativeArgon2id })).resolves.toBeDefined()
  })

  it('run twice, refuses (exit 3) and changes nothing; on a second device of the account, refuses and keeps no keys', async () => {
    const { home, email } = await setUpHome()
    const keysBefore = await readFile(path.join(home, 'keys.json'), 'utf8')
    const escrowBefore = await (await sdkSession(email)).fetchEscrow()
    const twice = await photos(home, ['setup', '--yes'])
    expect(twice.code).toBe(3)
    expect(twice.stderr).toMatch(/^coffer-photos: this device is already set up for .+; there is nothing to set up again\n$/)
    expect(await readFile(path.join(home, 'keys.json'), 'utf8')).toBe(keysBefore)
    expect(await (await sdkSession(email)).fetchEscrow()).toEqual(escrowBefore)

    const second = newHome()
    expectOk(await photos(second, ['login', server.url, '--email', email, '--password-stdin'], { stdin: PASSWORD }))
    const elsewhere = await photos(second, ['setup', '--yes'])
    expect(elsewhere.code).toBe(3)
    expect(elsewhere.stderr).toMatch(
      /is already set up on another device \(there is nothing to set up here\): to use the account on this device, run `coffer-photos recover /,
    )
    await expect(readFile(path.join(second, 'keys.json'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('when the sign-in is older than the freshness window, proves the password again (--password-stdin), and resumes with the same keys', async () => {
    const { home } = await registeredHome()
    server.clock.advance(11 * 60_000)
    const stale = await photos(home, ['setup', '--yes'])
    expect(stale.code).toBe(3)
    expect(stale.stderr).toMatch(/wants the password proved again .* --password-stdin/)
    const pending = await readJson(home, 'keys.json')
    expect(pending.state).toBe('pending')

    const wrong = await photos(home, ['setup', '--yes', '--password-stdin'], { stdin: 'not the password' })
    expect(wrong.code).toBe(4)
    expect(wrong.stderr).toMatch(/\[error\.auth\.invalid_credentials\]\n$/)

    const run = await photos(home, ['setup', '--yes', '--password-stdin', '--json'], { stdin: `${PASSWORD}\n` })
    expectOk(run)
    const keys = await readJson(home, 'keys.json')
    expect(keys).toEqual({ ...pending, state: 'complete' })
    expect(events(run).at(-1)).toMatchObject({ event: 'set_up', identity_fingerprint: IdentityKey.fromSeeds(fromBase64(pending.identity_seeds!)).fingerprint })
  })
})

describe('the config folder', () => {
  it('is 0700 with 0600 files, written whole, holding no password and no leftovers', async () => {
    const { home, phrase } = await setUpHome()
    expect((await stat(home)).mode & 0o777).toBe(0o700)
    expect((await readdir(home)).sort()).toEqual(['account.json', 'keys.json', 'tokens.json'])
    for (const name of await readdir(home)) {
      expect((await stat(path.join(home, name))).mode & 0o777, name).toBe(0o600)
      const text = await readFile(path.join(home, name), 'utf8')
      expect(text).not.toContain(PASSWORD)
      expect(text).not.toContain(phrase.split(' ').slice(0, 3).join(' '))
    }
  })

  it('a file that is not what coffer-photos writes: exit 6, naming it', async () => {
    const { home } = await registeredHome()
    await writeFile(path.join(home, 'tokens.json'), '{"access_token": 1}')
    const run = await photos(home, ['setup', '--yes'])
    expect(run.code).toBe(6)
    expect(run.stderr).toContain(`${path.join(home, 'tokens.json')} is not what coffer-photos writes`)
  })
})

describe('coffer-photos status', () => {
  it('shows the server, account, device and identity fingerprint, and never a secret', async () => {
    const { home, email, phrase } = await setUpHome()
    const account = await readJson(home, 'account.json')
    const tokens = await readJson(home, 'tokens.json')
    const keys = await readJson(home, 'keys.json')
    const fingerprint = IdentityKey.fromSeeds(fromBase64(keys.identity_seeds!)).fingerprint
    const text = await photos(home, ['status'])
    const json = await photos(home, ['status', '--json'])
    for (const run of [text, json]) {
      expectOk(run)
      for (const shown of [server.url, email, account.user_id!, account.device_id!, fingerprint]) expect(run.stdout).toContain(shown)
      for (const secret of [
        tokens.access_token!,
        tokens.refresh_token!,
        keys.master_key!,
        keys.identity_seeds!,
        keys.xwing_seed!,
        `${phrase.split(' ')[0]!} ${phrase.split(' ')[1]!}`,
        PASSWORD,
      ]) {
        expect(run.stdout + run.stderr).not.toContain(secret)
      }
    }
    expect(events(json)).toEqual([
      {
        event: 'status',
        home,
        server: server.url,
        email,
        user_id: account.user_id,
        device_id: account.device_id,
        logged_in: true,
        session: 'active',
        set_up: true,
        identity_fingerprint: fingerprint,
      },
    ])
    expect(text.stdout).toMatch(/^session: +active \(the server takes it\)$/m)
  })

  it('--offline asks the server nothing; a server that cannot be reached is reported, and the rest still shown (exit 0)', async () => {
    const { home } = await setUpHome()
    const offline = await photos(home, ['status', '--offline'])
    expectOk(offline)
    expect(offline.stdout).toMatch(/^logged in: +yes\nsession: +not checked \(--offline\)$/m)
    // The same folder pointing at a port where nothing listens.
    const moved = newHome()
    await cp(home, moved, { recursive: true })
    const account = await readJson(moved, 'account.json')
    await writeFile(path.join(moved, 'account.json'), JSON.stringify({ ...account, server: `http://127.0.0.1:${await closedPort()}` }))
    const unreachable = await photos(moved, ['status', '--json'])
    expectOk(unreachable)
    expect(events(unreachable)[0]).toMatchObject({ logged_in: true, session: 'unchecked', set_up: true })
    const text = await photos(moved, ['status'])
    expect(text.stdout).toMatch(/^session: +not checked \(the server could not be reached \(ECONNREFUSED\)/m)
    // A server that takes the connection and never answers: 5 s, then the same.
    const silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      await writeFile(path.join(moved, 'account.json'), JSON.stringify({ ...account, server: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` }))
      const waited = await photos(moved, ['status'])
      expectOk(waited)
      expect(waited.stdout).toMatch(/^session: +not checked \(the server did not answer within 5 s\)$/m)
    } finally {
      silent.close()
    }
  }, 60_000)

  it('exits 3 naming the next step when not logged in or not set up', async () => {
    const nobody = await photos(newHome(), ['status'])
    expect(nobody.code).toBe(3)
    expect(nobody.stdout).toMatch(/Next: coffer-photos login <server-url>/)
    const { home } = await registeredHome()
    const notSetUp = await photos(home, ['status', '--json'])
    expect(notSetUp.code).toBe(3)
    expect(events(notSetUp)[0]).toMatchObject({ logged_in: true, set_up: false, identity_fingerprint: null })
  })
})

describe('coffer-photos logout', () => {
  it('ends the session on the server (its access token is refused) and forgets it; the keys stay', async () => {
    const { home } = await setUpHome()
    const tokens = await readJson<Tokens>(home, 'tokens.json')
    const authorized = () => fetch(`${server.url}/v1/profile`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect((await authorized()).status).toBe(200)
    const run = await photos(home, ['logout', '--json'])
    expectOk(run)
    expect(events(run)).toEqual([{ event: 'logged_out', server: server.url, session_ended: true, keys_forgotten: false }])
    expect((await authorized()).status).toBe(401)
    const refresh = await fetch(`${server.url}/v1/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: tokens.refresh_token }),
    })
    expect(refresh.status).toBe(401)
    expect((await readdir(home)).sort()).toEqual(['account.json', 'keys.json'])

    const status = await photos(home, ['status', '--json'])
    expect(events(status)[0]).toMatchObject({ logged_in: false, set_up: true })
    const again = await photos(home, ['logout'])
    expectOk(again)
    expect(again.stdout).toBe('Not logged in.\n')
  })

  it('--forget-keys needs --yes without a terminal, and then removes the keys too', async () => {
    const { home } = await setUpHome()
    const refused = await photos(home, ['logout', '--forget-keys'])
    expect(refused.code).toBe(2)
    expect((await readdir(home)).sort()).toEqual(['account.json', 'keys.json', 'tokens.json'])
    expectOk(await photos(home, ['logout', '--forget-keys', '--yes']))
    expect(await readdir(home)).toEqual(['account.json'])
  })
})

describe('coffer-photos delete-account', () => {
  it('needs --yes without a terminal; then, with the password proved again, deletes the account and forgets it here', async () => {
    const { home, email } = await setUpHome()
    const tokens = await readJson<Tokens>(home, 'tokens.json')
    const refused = await photos(home, ['delete-account'])
    expect(refused.code).toBe(2)
    expect((await readdir(home)).sort()).toEqual(['account.json', 'keys.json', 'tokens.json'])

    server.clock.advance(11 * 60_000)
    const stale = await photos(home, ['delete-account', '--yes'])
    expect(stale.code).toBe(3)
    expect(stale.stderr).toMatch(/wants the password proved again .* --password-stdin/)
    expect((await sdkSession(email)).tokens).not.toBeNull()

    const run = await photos(home, ['delete-account', '--yes', '--password-stdin', '--json'], { stdin: `${PASSWORD}\n` })
    expectOk(run)
    expect(events(run)).toEqual([{ event: 'account_deleted', server: server.url, email }])
    expect(await readdir(home)).toEqual([])
    expect((await fetch(`${server.url}/v1/profile`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401)
    expect(
      (await server
        .client()
        .login(email, PASSWORD)
        .catch((error: unknown) => error)) as object,
    ).toMatchObject({ code: 'error.auth.invalid_credentials' })
    const status = await photos(home, ['status', '--json'])
    expect(events(status)[0]).toMatchObject({ logged_in: false, set_up: false })
  })

  it('with a second factor: the code from --totp-code; none without a terminal is a usage error, a wrong one exit 4', async () => {
    const member = await withSecondFactor(server, 'photos-delete-totp')
    const home = newHome()
    expectOk(
      await photos(
        home,
        ['login', server.url, '--email', member.email, '--password-stdin', '--totp-code', member.authenticator.codeAt(server.clock.now() + THIRTY_SECONDS)],
        { stdin: PASSWORD },
      ),
    )
    // Both codes used so far are spent: the one two steps on is not.
    server.clock.advance(2 * THIRTY_SECONDS)

    const missing = await photos(home, ['delete-account', '--yes'])
    expect(missing.code).toBe(2)
    expect(errorLineOf(missing)).toMatch(/--totp-code .*there is no terminal/)
    const wrong = await photos(home, ['delete-account', '--yes', '--totp-code', wrongCode(member.authenticator, server.clock.now())])
    expect(wrong.code).toBe(4)
    expect(wrong.stderr).toMatch(/\[error\.totp\.invalid_code\]\n$/)
    expect((await readdir(home)).sort()).toEqual(['account.json', 'tokens.json'])

    expectOk(await photos(home, ['delete-account', '--yes', '--totp-code', member.authenticator.codeAt(server.clock.now())]))
    expect(await readdir(home)).toEqual([])
    expect(
      (await server
        .client()
        .login(member.email, PASSWORD)
        .catch((error: unknown) => error)) as object,
    ).toMatchObject({ code: 'error.auth.invalid_credentials' })
  })
})

describe('openAccount', () => {
  it('throws SetupNeeded saying what to run when not logged in or not set up', async () => {
    await expect(openAccount(new Home(newHome()))).rejects.toThrow(new SetupNeeded('not logged in: run `coffer-photos login <server-url>` first'))
    const { home, email } = await registeredHome()
    await expect(openAccount(new Home(home))).rejects.toThrow(new SetupNeeded(`this device is not set up for ${email}: run \`coffer-photos setup\` first`))
  })

  it('gives the account setup made, with a client that keeps each refreshed token pair in the folder', async () => {
    const { home, email } = await setUpHome()
    const saved = await readJson(home, 'account.json')
    const keys = await readJson(home, 'keys.json')
    // An access token past its expiry: the client refreshes before its first call.
    const tokens = await readJson<Tokens>(home, 'tokens.json')
    await writeFile(path.join(home, 'tokens.json'), JSON.stringify({ ...tokens, expires_by: 1 }), { mode: 0o600 })

    const account = await openAccount(new Home(home))
    expect(account).toMatchObject({ server: server.url, email, userId: saved.user_id, deviceId: saved.device_id, home })
    expect(account.masterKey).toEqual(fromBase64(keys.master_key!))
    expect(account.identity.publicKey).toEqual(IdentityKey.fromSeeds(fromBase64(keys.identity_seeds!)).publicKey)
    expect((await account.client.getProfile()).user_id).toBe(saved.user_id)
    const refreshed = await readJson<Tokens>(home, 'tokens.json')
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    expect(refreshed).toEqual(account.client.tokens)
    expect((await stat(path.join(home, 'tokens.json'))).mode & 0o777).toBe(0o600)
  })
})
