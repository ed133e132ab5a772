// `coffer-photos recover` (docs/photos.md, "Recovering on a new device"), in-process against
// a real server, with one config folder per device. A device set up and backed up; a second
// folder recovered with the phrase restores the album byte for byte and joins the signed device
// directory; a wrong phrase, a malformed one, an account without escrow and a folder with keys
// change nothing. What recover publishes is read back with the SDK.
import { createHash } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateRecoveryKey, recoveryKeyFromPhrase, recoveryPhrase, sealEscrowV1 } from '../../src/client/format/recovery.ts'
import { generateXWingKeyPair } from '../../src/client/format/xwing.ts'
import { fromBase64 } from '../../src/sdk/bytes.ts'
import type { CofferClient } from '../../src/sdk/client.ts'
import { readDirectory, signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { generateLibrary, type LibraryFile } from '../support/photos.ts'
import { errorLineOf, events, expectOk, onTerminal, photos, readJson, type PhotosRun } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-recover-'))
})
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

let homes = 0
/** A config folder that does not exist yet (coffer-photos makes it). */
const newHome = (): string => path.join(work, `home-${++homes}`, 'coffer-photos')

const missing = (file: string) => expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' })

/** A first device: registered and set up through coffer-photos, with the phrase it showed. */
async function firstDevice(deviceName = 'Old laptop'): Promise<{ home: string; email: string; phrase: string }> {
  const home = newHome()
  const email = uniqueEmail('recover')
  expectOk(await photos(home, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD }))
  const run = await photos(home, ['setup', '--yes', '--json', '--device-name', deviceName])
  expectOk(run)
  const phrase = events(run).find((e) => e.event === 'recovery_phrase')?.phrase as string
  expect(phrase.split(' ')).toHaveLength(24)
  return { home, email, phrase }
}

/** `recover` on `home` with the password and the phrase on stdin. */
function recover(home: string, email: string, phrase: string, extra: readonly string[] = []): Promise<PhotosRun> {
  return photos(home, ['recover', server.url, '--email', email, '--password-stdin', '--phrase-stdin', ...extra], { stdin: `${PASSWORD}\n${phrase}\n` })
}

/** A session of the test's own on the account (the SDK, not coffer-photos). */
async function sdkSession(email: string): Promise<CofferClient> {
  const client = server.client()
  expect((await client.login(email, PASSWORD)).kind).toBe('session')
  return client
}

/** What the server holds for the account: the directory's and the escrow's bytes. */
async function serverState(email: string): Promise<{ directory: Uint8Array | null; escrow: Uint8Array | null }> {
  const client = await sdkSession(email)
  const { user_id: userId } = await client.getProfile()
  const directory = await client.fetchDirectory(userId).then(
    (fetched) => fetched?.bytes ?? null,
    () => null,
  )
  const escrow = await client.fetchEscrow().catch(() => null)
  return { directory, escrow }
}

async function sha256Of(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex')
}

/** A valid phrase that is not the account's (BIP-39 checksum and all). */
const otherPhrase = (): string => recoveryPhrase(generateRecoveryKey())

// Every test runs the binary several times (about a second each, more on a busy machine).
describe('coffer-photos recover', { timeout: 120_000 }, () => {
  it('with the right phrase on a fresh folder: joins the directory as a second device, and restores the album byte for byte', {
    timeout: 240_000,
  }, async () => {
    const first = await firstDevice()
    const folder = path.join(work, `library-${homes}`)
    const files: LibraryFile[] = await generateLibrary(folder, { count: 3, seed: 13, subfolders: 1 })
    const backup = await photos(first.home, ['backup', folder, '--album', 'Holidays', '--json'])
    expectOk(backup)
    expect(events(backup).find((e) => e.event === 'summary')).toMatchObject({ files: files.length, failed: 0 })

    // Typed back as a person might: another case, extra spaces, over several lines.
    const words = first.phrase.split(' ')
    const typed = `  ${words.slice(0, 12).join('   ').toUpperCase()}\n${words.slice(12).join(' \t')}  `
    const home = newHome()
    const run = await recover(home, first.email, typed, ['--device-name', 'New phone', '--json'])
    expectOk(run)

    // The keys: the account's master and identity keys, and an X-Wing key of this device's own.
    const firstKeys = await readJson(first.home, 'keys.json')
    const keys = await readJson(home, 'keys.json')
    expect(keys.state).toBe('complete')
    expect([keys.master_key, keys.identity_seeds]).toEqual([firstKeys.master_key, firstKeys.identity_seeds])
    expect(keys.xwing_seed).not.toBe(firstKeys.xwing_seed)
    expect(fromBase64(keys.xwing_seed!)).toHaveLength(32)
    expect((await stat(home)).mode & 0o777).toBe(0o700)
    expect((await readdir(home)).sort()).toEqual(['account.json', 'keys.json', 'tokens.json'])
    for (const name of await readdir(home)) {
      expect((await stat(path.join(home, name))).mode & 0o777, name).toBe(0o600)
      expect(await readFile(path.join(home, name), 'utf8'), name).not.toContain(words.slice(0, 2).join(' '))
    }

    // The directory: a new version listing both devices, signed by the account's identity key.
    const account = await readJson(home, 'account.json')
    const firstAccount = await readJson(first.home, 'account.json')
    expect(account.user_id).toBe(firstAccount.user_id)
    expect(account.device_id).not.toBe(firstAccount.device_id)
    const identity = IdentityKey.fromSeeds(fromBase64(keys.identity_seeds!))
    const { directory: bytes } = await serverState(first.email)
    const directory = readDirectory(bytes!, identity.publicKey)
    expect(directory.version).toBe(2)
    expect(directory.devices).toEqual([
      {
        device_id: firstAccount.device_id,
        public_key: identity.publicKey,
        encryption_key: generateXWingKeyPair(fromBase64(firstKeys.xwing_seed!)).publicKey,
        name: 'Old laptop',
        added_at: expect.any(String),
      },
      {
        device_id: account.device_id,
        public_key: identity.publicKey,
        encryption_key: generateXWingKeyPair(fromBase64(keys.xwing_seed!)).publicKey,
        name: 'New phone',
        added_at: expect.any(String),
      },
    ])
    // The first device's time is carried over; the recovered one's is the recovery's.
    const [oldAdded, newAdded] = directory.devices.map((d) => Date.parse(d.added_at ?? ''))
    expect(oldAdded).toBeLessThanOrEqual(newAdded!)
    expect(Date.now() - newAdded!).toBeLessThan(5 * 60_000)
    expect(events(run)).toEqual([
      {
        event: 'recovered',
        server: server.url,
        email: first.email,
        user_id: account.user_id,
        device_id: account.device_id,
        device_name: 'New phone',
        identity_fingerprint: identity.fingerprint,
        directory_version: 2,
        devices: 2,
        escrow_version: 2,
      },
    ])

    // The recovered device is set up: it lists the album and restores every file byte for byte.
    const status = await photos(home, ['status', '--json'])
    expectOk(status)
    expect(events(status)[0]).toMatchObject({ logged_in: true, set_up: true, identity_fingerprint: identity.fingerprint })
    const albums = await photos(home, ['albums', '--json'])
    expectOk(albums)
    expect(events(albums).filter((e) => e.event === 'album')).toEqual([expect.objectContaining({ name: 'Holidays', files: files.length })])
    const dest = path.join(work, `restored-${homes}`)
    const restore = await photos(home, ['restore', 'Holidays', dest, '--json'])
    expectOk(restore)
    expect(events(restore).find((e) => e.event === 'summary')).toMatchObject({ restored: files.length, failed: 0 })
    for (const file of files) expect(await sha256Of(path.join(dest, file.path)), file.path).toBe(await sha256Of(path.join(folder, file.path)))

    // The first device still works, and sees the directory the second one published.
    expectOk(await photos(first.home, ['albums']))
  })

  it("run again in the same folder after its keys were forgotten: replaces this device's entry, not adds one", async () => {
    const first = await firstDevice()
    const home = newHome()
    expectOk(await recover(home, first.email, first.phrase, ['--device-name', 'Tablet']))
    const before = await readJson(home, 'keys.json')
    expectOk(await photos(home, ['logout', '--forget-keys', '--yes']))
    expectOk(await recover(home, first.email, first.phrase, ['--device-name', 'Tablet']))
    const after = await readJson(home, 'keys.json')
    expect(after.xwing_seed).not.toBe(before.xwing_seed)
    const identity = IdentityKey.fromSeeds(fromBase64(after.identity_seeds!))
    const directory = readDirectory((await serverState(first.email)).directory!, identity.publicKey)
    expect(directory.version).toBe(3)
    expect(directory.devices).toHaveLength(2)
    expect(directory.devices[1]).toMatchObject({
      device_id: (await readJson(home, 'account.json')).device_id,
      encryption_key: generateXWingKeyPair(fromBase64(after.xwing_seed!)).publicKey,
    })
  })

  it('a wrong phrase (valid words, another key): exit 4 saying so, and nothing changes: no keys, the directory and the escrow as they were', async () => {
    const first = await firstDevice()
    const before = await serverState(first.email)
    const home = newHome()
    const run = await recover(home, first.email, otherPhrase(), ['--json'])
    expect(run.code).toBe(4)
    expect(errorLineOf(run)).toBe(
      "coffer-photos: the recovery phrase does not open this account's escrow: its words are valid, but it is not the phrase setup showed for this account (the last one shown, if setup ran more than once); nothing was changed",
    )
    expect(events(run)).toEqual([expect.objectContaining({ event: 'error', exit: 4 })])
    await missing(path.join(home, 'keys.json'))
    const after = await serverState(first.email)
    expect(after.directory).toEqual(before.directory)
    expect(after.escrow).toEqual(before.escrow)
    // The folder is left signed in, as `login` leaves it, and not set up.
    const status = await photos(home, ['status', '--json'])
    expect(events(status)[0]).toMatchObject({ logged_in: true, set_up: false })
    // And the right phrase still works afterwards.
    expectOk(await recover(home, first.email, first.phrase))
  })

  it('a malformed phrase: a usage error (exit 2) naming the problem, before anything is sent', async () => {
    const first = await firstDevice()
    const words = first.phrase.split(' ')
    const cases: [string, RegExp][] = [
      [[...words.slice(0, 6), 'coffer', ...words.slice(7)].join(' '), /^coffer-photos: --phrase-stdin: word 7 \("coffer"\) is not in the BIP-39 English list$/],
      [words.slice(0, 23).join(' '), /^coffer-photos: --phrase-stdin: expected 24 words, got 23$/],
      // All words in the list, but the checksum is wrong (24 x "abandon" ends in "art").
      [Array(24).fill('abandon').join(' '), /^coffer-photos: --phrase-stdin: the checksum does not match \(a word is wrong or out of place\)$/],
      ['', /^coffer-photos: --phrase-stdin: expected 24 words, got 0$/],
    ]
    for (const [phrase, reason] of cases) {
      const home = newHome()
      const run = await recover(home, first.email, phrase)
      expect(run.code, phrase).toBe(2)
      expect(errorLineOf(run)).toMatch(reason)
      expect(run.stderr).toMatch(/usage: coffer-photos recover/)
      await missing(home) // not even signed in
    }
  })

  // util-linux's `script` runs the command on a pseudo-terminal (Debian: bsdutils, essential).
  it('on a terminal: asks for the password and the phrase, masks the words already typed, names a word not in the list, and asks again after a wrong phrase', async () => {
    const first = await firstDevice()
    const home = newHome()
    const terminal = onTerminal(home, ['recover', server.url, '--email', first.email, '--device-name', 'Terminal'])
    let at = await terminal.waitFor(/Password/)
    terminal.type(`${PASSWORD}\r`)
    at = await terminal.waitFor(/Recovery phrase \(the 24 words, in order\)/, at)
    const words = first.phrase.split(' ')
    terminal.type(`${[...words.slice(0, 3), 'coffer', ...words.slice(4)].join(' ')}\r`)
    at = await terminal.waitFor(/word 4 \("coffer"\) is not in the BIP-39 English list/, at)
    terminal.type('\x15') // Ctrl-U: clear the line
    terminal.type(`${otherPhrase()}\r`)
    at = await terminal.waitFor(/does not open this account's escrow.*Check the words and try again \(2 tries left\)/s, at)
    at = await terminal.waitFor(/Recovery phrase/, at)
    terminal.type(`${first.phrase}\r`)
    await terminal.waitFor(/Recovered .* this device is "Terminal"/, at)
    expect(await terminal.done).toBe(0)
    // The words typed were drawn masked but for the one being typed, and never echoed whole.
    expect(terminal.text()).not.toContain(words.slice(0, 2).join(' '))
    expect(terminal.text()).toMatch(/•+ •+ •+/)
    expect((await readJson(home, 'keys.json')).state).toBe('complete')
  })

  it("without a terminal, the phrase must come from --phrase-stdin (exit 2); with it, the password is stdin's first line", async () => {
    const first = await firstDevice()
    const home = newHome()
    const none = await photos(home, ['recover', server.url, '--email', first.email, '--password-stdin'], { stdin: PASSWORD })
    expect(none.code).toBe(2)
    expect(errorLineOf(none)).toBe('coffer-photos: --phrase-stdin is needed: there is no terminal to ask for the recovery phrase on')
    const oneLine = await photos(home, ['recover', server.url, '--email', first.email, '--password-stdin', '--phrase-stdin'], { stdin: PASSWORD })
    expect(oneLine.code).toBe(2)
    expect(errorLineOf(oneLine)).toMatch(/stdin holds the password on its first line and the recovery phrase after it/)
    await missing(home)
  })

  it('a wrong password: the server refuses (exit 4), nothing kept', async () => {
    const first = await firstDevice()
    const home = newHome()
    const run = await photos(home, ['recover', server.url, '--email', first.email, '--password-stdin', '--phrase-stdin'], {
      stdin: `not the password\n${first.phrase}`,
    })
    expect(run.code).toBe(4)
    expect(run.stderr).toMatch(/\[error\.auth\.invalid_credentials\]\n$/)
    await missing(path.join(home, 'keys.json'))
  })

  it('an account with no escrow says so (exit 3): never set up, or set up on a device that did not finish', async () => {
    const email = uniqueEmail('no-escrow')
    expectOk(await photos(newHome(), ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD }))
    const never = await recover(newHome(), email, otherPhrase())
    expect(never.code).toBe(3)
    expect(errorLineOf(never)).toBe(
      `coffer-photos: ${email} has no recovery escrow on ${server.url}: the account was never set up, so there is nothing to recover; run \`coffer-photos setup\` to set it up on this device`,
    )

    // A directory but no escrow: what a first device's setup leaves when it stops in between.
    const client = await sdkSession(email)
    const identity = IdentityKey.generate()
    await client.publishDirectory(
      await signDirectory(identity, { version: 1, devices: [{ device_id: crypto.randomUUID(), public_key: identity.publicKey }] }),
      identity,
    )
    const home = newHome()
    const unfinished = await recover(home, email, otherPhrase())
    expect(unfinished.code).toBe(3)
    expect(errorLineOf(unfinished)).toMatch(/has no recovery escrow on .*: setup did not finish on the account's first device; run `coffer-photos setup` there/)
    await missing(path.join(home, 'keys.json'))
  })

  it('refuses a folder that already holds keys (exit 3), before signing in', async () => {
    const first = await firstDevice()
    const tokens = await readFile(path.join(first.home, 'tokens.json'), 'utf8')
    const keys = await readFile(path.join(first.home, 'keys.json'), 'utf8')
    const run = await recover(first.home, first.email, first.phrase)
    expect(run.code).toBe(3)
    expect(errorLineOf(run)).toBe(
      `coffer-photos: this config folder (${first.home}) already holds keys of ${first.email} on ${server.url}; recover sets up a device that has none: use a new COFFER_PHOTOS_HOME, or \`coffer-photos logout --forget-keys\` first`,
    )
    expect(await readFile(path.join(first.home, 'tokens.json'), 'utf8')).toBe(tokens)
    expect(await readFile(path.join(first.home, 'keys.json'), 'utf8')).toBe(keys)
  })

  it('opens an escrow of version 1 (an account set up before argon2id), and leaves it as it is', async () => {
    const first = await firstDevice()
    const firstKeys = await readJson(first.home, 'keys.json')
    const client = await sdkSession(first.email)
    const { user_id: userId } = await client.getProfile()
    const recoveryKey = generateRecoveryKey()
    const v1 = await sealEscrowV1(recoveryKey, userId, { masterKey: fromBase64(firstKeys.master_key!), identitySeeds: fromBase64(firstKeys.identity_seeds!) })
    await client.storeEscrow(v1)
    const home = newHome()
    const run = await recover(home, first.email, recoveryPhrase(recoveryKey), ['--json'])
    expectOk(run)
    expect(events(run)[0]).toMatchObject({ event: 'recovered', escrow_version: 1, directory_version: 2 })
    expect((await readJson(home, 'keys.json')).master_key).toBe(firstKeys.master_key)
    expect((await serverState(first.email)).escrow).toEqual(v1)
    expect(recoveryKeyFromPhrase(recoveryPhrase(recoveryKey))).toEqual(recoveryKey)
  })

  it('setup on a second folder of a set-up account points to recover', async () => {
    const first = await firstDevice()
    const home = newHome()
    expectOk(await photos(home, ['login', server.url, '--email', first.email, '--password-stdin'], { stdin: PASSWORD }))
    const run = await photos(home, ['setup', '--yes'])
    expect(run.code).toBe(3)
    expect(errorLineOf(run)).toBe(
      `coffer-photos: ${first.email} is already set up on another device (there is nothing to set up here): to use the account on this device, run \`coffer-photos recover ${server.url}\` with the recovery phrase`,
    )
  })
})
