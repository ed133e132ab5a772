// A second device through the enrollment relay (docs/photos.md, "Adding a device"; decision
// 0019): `coffer-photos device add` on the set-up device A and `coffer-photos join` on a new
// config folder B, both in-process against a real server, answering the "same code?"
// question on stdin. A clean join restores A's photos on B byte for byte, verifies every receipt
// there, and lists both devices in the signed directory; a "no" on either side, a man in the
// middle (the test, which knows the pairing code), a wrong and an expired code all leave B
// without keys and the directory as it was.
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  commitment,
  decodePayload,
  encodePayload,
  fromBase64Url,
  generateNonce,
  payloadText,
  shortAuthenticationString,
  transcriptHash,
} from '../../src/client/format/enrollment.ts'
import { generateXWingKeyPair, xwingDecapsulate, xwingEncapsulate } from '../../src/client/format/xwing.ts'
import { fromBase64 } from '../../src/sdk/bytes.ts'
import type { CofferClient } from '../../src/sdk/client.ts'
import { readDirectory, type DeviceDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { events, expectOk, onTerminal, photos, readJson, startPhotos, waitForEvent, type PhotosInProcess } from '../support/photos-cli.ts'
import { generateLibrary, type LibraryFile } from '../support/photos.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ALBUM = 'Holidays'
let server: TestServer
let work: string
let homeA: string
let email: string
let userId: string
let library: LibraryFile[]
let folder: string

let homes = 0
const newHome = (): string => path.join(work, `home-${++homes}`, 'coffer-photos')
const sha256Of = async (file: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex')

/** A session of the test's own on the account (the SDK, not coffer-photos). */
async function sdkSession(): Promise<CofferClient> {
  const client = server.client()
  expect((await client.login(email, PASSWORD)).kind).toBe('session')
  return client
}

async function directory(): Promise<DeviceDirectory> {
  const keys = await readJson(homeA, 'keys.json')
  const fetched = await (await sdkSession()).fetchDirectory(userId)
  return readDirectory(fetched!.bytes, IdentityKey.fromSeeds(fromBase64(keys.identity_seeds!)).publicKey)
}

function deviceAdd(extra: string[] = [], stdin?: string): PhotosInProcess {
  return startPhotos(homeA, ['device', 'add', '--json', ...extra], { keepStdinOpen: true, ...(stdin === undefined ? {} : { stdin }) })
}

function join(home: string, code: string, name = 'New phone'): PhotosInProcess {
  return startPhotos(home, ['join', server.url, code, '--email', email, '--password-stdin', '--device-name', name, '--json'], {
    stdin: `${PASSWORD}\n`,
    keepStdinOpen: true,
  })
}

/** Answers the "same code?" question of a process that showed its SAS. */
function answer(run: PhotosInProcess, yes: boolean): void {
  run.write(yes ? 'yes\n' : 'no\n')
  run.endStdin()
}

async function expectNoKeys(home: string): Promise<void> {
  await expect(stat(path.join(home, 'keys.json'))).rejects.toMatchObject({ code: 'ENOENT' })
}

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-join-'))
  email = uniqueEmail('join')
  homeA = newHome()
  expectOk(await photos(homeA, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD }))
  expectOk(await photos(homeA, ['setup', '--yes', '--json', '--device-name', 'Laptop']))
  userId = (await readJson(homeA, 'account.json')).user_id!
  folder = path.join(work, 'photos')
  library = await generateLibrary(folder, { count: 5, seed: 13, subfolders: 1 })
  expectOk(await photos(homeA, ['backup', folder, '--album', ALBUM, '--json']))
}, 120_000)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

describe('coffer-photos device add / join', { timeout: 120_000 }, () => {
  it('device --help and join --help print their usage; the overview lists both; `device` takes only `add`', async () => {
    for (const name of ['device', 'join']) {
      const run = await photos(newHome(), [name, '--help'])
      expectOk(run)
      expect(run.stdout).toMatch(new RegExp(`^usage: coffer-photos ${name}\\b`))
    }
    const overview = await photos(newHome(), ['--help'])
    for (const name of ['device', 'join']) expect(overview.stdout).toMatch(new RegExp(`^  ${name} `, 'm'))
    const wrong = await photos(newHome(), ['device', 'remove'])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toMatch(/`coffer-photos device add` is the one form/)
  })

  it("joins a new device through the relay: the same SAS on both, B restores A's photos byte for byte, the directory lists both", async () => {
    const before = await directory()
    const a = deviceAdd()
    const pairing = await waitForEvent(a, 'pairing_code')
    expect(pairing.command).toBe(`coffer-photos join ${server.url} ${pairing.pairing_code}`)
    expect(pairing.pairing_code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const homeB = newHome()
    const b = join(homeB, pairing.pairing_code as string)
    const [sasA, sasB] = await Promise.all([waitForEvent(a, 'sas'), waitForEvent(b, 'sas')])
    expect(sasA.sas).toMatch(/^\d{3} \d{3}$/)
    expect(sasB.sas).toBe(sasA.sas)
    answer(b, true)
    answer(a, true)
    const [ranA, ranB] = await Promise.all([a.done, b.done])
    expectOk(ranA)
    expectOk(ranB)
    const accountB = await readJson(homeB, 'account.json')
    expect(events(ranA).find((e) => e.event === 'device_added')).toMatchObject({
      device_id: accountB.device_id,
      device_name: 'New phone',
      directory_version: before.version + 1,
      history: 'kept',
    })
    expect(events(ranB).find((e) => e.event === 'joined')).toMatchObject({
      email,
      user_id: userId,
      device_id: accountB.device_id,
      device_name: 'New phone',
      directory_version: before.version + 1,
      history: 'kept',
      history_albums: 1, // the album A backed up, checked before its backup wrote
    })
    expect(ranB.stdout).not.toContain('handed over no record')

    // B keeps A's master key and identity key, its own X-Wing key, 0600, as setup would.
    const [keysA, keysB] = [await readJson(homeA, 'keys.json'), await readJson(homeB, 'keys.json')]
    expect(keysB).toMatchObject({ state: 'complete', master_key: keysA.master_key, identity_seeds: keysA.identity_seeds })
    expect(keysB.xwing_seed).not.toBe(keysA.xwing_seed)
    expect((await stat(path.join(homeB, 'keys.json'))).mode & 0o777).toBe(0o600)

    // The directory verifies under the identity key and lists both devices, B with its key.
    const after = await directory()
    expect(after.version).toBe(before.version + 1)
    expect(after.devices.map((d) => d.name).sort()).toEqual(['Laptop', 'New phone'])
    expect(after.devices.map((d) => Number.isNaN(Date.parse(d.added_at ?? '')))).toEqual([false, false]) // each with when it was added
    const listedB = after.devices.find((d) => d.device_id === accountB.device_id)!
    expect(Buffer.from(listedB.encryption_key!)).toEqual(Buffer.from(generateXWingKeyPair(fromBase64(keysB.xwing_seed!)).publicKey))
    // The channel is closed: the code works no more.
    await expect(server.client().drain(pairing.pairing_code as string, 'to_enrollee')).rejects.toMatchObject({ status: 404 })

    // B sees the album and gets every file back byte for byte.
    const ls = await photos(homeB, ['ls', ALBUM, '--json'])
    expectOk(ls)
    expect(
      events(ls)
        .filter((e) => e.event === 'file')
        .map((e) => e.name)
        .sort(),
    ).toEqual(library.map((f) => f.path).sort())
    const dest = path.join(work, 'restored-on-b')
    const restored = await photos(homeB, ['restore', ALBUM, dest, '--json'])
    expectOk(restored)
    expect(events(restored).find((e) => e.event === 'summary')).toMatchObject({ restored: library.length, failed: 0 })
    for (const file of library) expect(await sha256Of(path.join(dest, file.path)), file.path).toBe(await sha256Of(path.join(folder, file.path)))
    // And checks every blob and custody receipt of the album with the keys it was given.
    const verified = await photos(homeB, ['verify', ALBUM, '--deep', '--json'])
    expectOk(verified)
    const summary = events(verified).find((e) => e.event === 'summary')!
    expect(summary).toMatchObject({ assets: library.length + 1, failed: 0 }) // the files and the album's record
    expect(summary.receipts).toBe(summary.blobs)

    // And a folder that has keys refuses to join.
    const again = await photos(homeB, ['join', server.url, pairing.pairing_code as string, '--email', email, '--password-stdin'], { stdin: PASSWORD })
    expect(again.code).toBe(3)
    expect(again.stderr).toMatch(/already holds the keys of/)
  })

  // util-linux's `script` runs each command on a pseudo-terminal (Debian: bsdutils, essential).
  it('on two terminals: A shows the pairing code, B asks for the password, each asks whether the other shows the same code; yes on both adds B', async () => {
    const a = onTerminal(homeA, ['device', 'add'])
    let atA = await a.waitFor(/Pairing code: [A-Za-z0-9_-]{43}/)
    const code = /Pairing code: ([A-Za-z0-9_-]{43})/.exec(a.text())![1]!
    expect(a.text()).toContain(`coffer-photos join ${server.url} ${code}`)
    const homeB = newHome()
    const b = onTerminal(homeB, ['join', server.url, code, '--email', email, '--device-name', 'Tablet'])
    let atB = await b.waitFor(/Password/)
    b.type(`${PASSWORD}\r`)
    atB = await b.waitFor(/Does the other device show \d{3} \d{3}\?/, atB)
    atA = await a.waitFor(/Does the new device show \d{3} \d{3}\?/, atA)
    const shown = (text: string, other: string) => new RegExp(`Does ${other} show (\\d{3} \\d{3})\\?`).exec(text)![1]
    expect(shown(b.text(), 'the other device')).toBe(shown(a.text(), 'the new device'))
    b.type('y\r')
    a.type('y\r')
    await a.waitFor(/Added "Tablet"/, atA)
    await b.waitFor(/Joined .* this device is "Tablet"/, atB)
    expect(await a.done).toBe(0)
    expect(await b.done).toBe(0)
    expect(b.text()).not.toContain(PASSWORD) // the password was typed masked
    expect((await readJson(homeB, 'keys.json')).state).toBe('complete')
    expect((await directory()).devices.map((d) => d.name)).toContain('Tablet')
  })

  it.each([
    ['the new device', { a: true, b: false }],
    ['the enrolled device', { a: false, b: true }],
  ])('a "no" on %s stops both: nothing kept on B, the directory unchanged', async (_side, answers) => {
    const before = await directory()
    const a = deviceAdd()
    const pairing = await waitForEvent(a, 'pairing_code')
    const homeB = newHome()
    const b = join(homeB, pairing.pairing_code as string)
    const [sasA, sasB] = await Promise.all([waitForEvent(a, 'sas'), waitForEvent(b, 'sas')])
    expect(sasB.sas).toBe(sasA.sas)
    // The "no" first, then the other side's "yes".
    if (!answers.b) answer(b, false)
    else answer(a, false)
    await (answers.b ? a : b).done
    if (answers.b) answer(b, true)
    else answer(a, true)
    const [ranA, ranB] = await Promise.all([a.done, b.done])
    expect(ranA.code, ranA.stderr).toBe(1)
    expect(ranB.code, ranB.stderr).toBe(1)
    if (!answers.b) {
      expect(ranB.stderr).toMatch(/the codes do not match; nothing was kept on this device/)
      expect(ranA.stderr).toMatch(/the new device cancelled: the person there said the codes do not match; the device was not added/)
    } else {
      expect(ranA.stderr).toMatch(/the codes do not match, so the keys were not sent; the device was not added/)
      expect(ranB.stderr).toMatch(/the other device ended the pairing .*; nothing was kept on this device/)
    }
    await expectNoKeys(homeB)
    expect(await directory()).toEqual(before)
  })

  it('a man in the middle who knows the pairing code gets two different SAS; the people say no; nothing is kept', async () => {
    const before = await directory()
    const a = deviceAdd()
    const pairing = await waitForEvent(a, 'pairing_code')
    const code = pairing.pairing_code as string
    const relay = server.client()
    const take = async (direction: 'to_initiator' | 'to_enrollee'): Promise<string> => {
      for (;;) {
        const [first] = await relay.drain(code, direction)
        if (first !== undefined) return first
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    // Toward A, the man in the middle plays the new device: its own key, committed nonce.
    const mine = generateXWingKeyPair()
    const nonceM = generateNonce()
    const helloM = encodePayload({
      type: 'hello',
      device_id: '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0',
      device_name: 'New phone',
      encryption_key: mine.publicKey,
      commitment: await commitment(nonceM),
    })
    await relay.relay(code, 'to_initiator', payloadText(helloM))
    const offerA = fromBase64Url(await take('to_enrollee'))
    const revealM = encodePayload({ type: 'reveal', nonce: nonceM })
    await relay.relay(code, 'to_initiator', payloadText(revealM))
    const sasA = await waitForEvent(a, 'sas')
    const offerToMe = decodePayload(offerA)
    if (offerToMe.type !== 'offer') throw new Error('not an offer')
    const withA = await shortAuthenticationString(xwingDecapsulate(offerToMe.ciphertext, mine.secretKey), await transcriptHash(code, helloM, offerA, revealM))
    expect(sasA.sas).toBe(withA)

    // Toward B, it plays A: its own encapsulation to B's key.
    const homeB = newHome()
    const b = join(homeB, code)
    const helloB = decodePayload(fromBase64Url(await take('to_initiator')))
    if (helloB.type !== 'hello') throw new Error('not a hello')
    await relay.relay(code, 'to_enrollee', payloadText(encodePayload({ ...offerToMe, ciphertext: xwingEncapsulate(helloB.encryption_key).cipherText })))
    const sasB = await waitForEvent(b, 'sas')
    expect(sasB.sas).not.toBe(sasA.sas)

    answer(b, false)
    answer(a, false)
    const [ranA, ranB] = await Promise.all([a.done, b.done])
    expect(ranA.code).toBe(1)
    expect(ranB.code).toBe(1)
    await expectNoKeys(homeB)
    expect(await directory()).toEqual(before)
  })

  it('a wrong pairing code: exit 3 with what to do, before anything is asked or kept', async () => {
    const home = newHome()
    const run = await photos(home, ['join', server.url, 'A'.repeat(43), '--email', email, '--password-stdin'], { stdin: `${PASSWORD}\n` })
    expect(run.code).toBe(3)
    expect(run.stderr).toBe('coffer-photos: the pairing code is wrong or has expired; run `coffer-photos device add` again\n')
    await expect(stat(home)).rejects.toMatchObject({ code: 'ENOENT' })
    const malformed = await photos(home, ['join', server.url, 'not-a-code'])
    expect(malformed.code).toBe(2)
    expect(malformed.stderr).toMatch(/the pairing code is the 43 letters/)
    // Base64url: one code in 32 begins with "-", which is still the code, not an option (in
    // either place a person may put it).
    for (const args of [
      [server.url, `-T${'A'.repeat(41)}`, '--email', email],
      ['--email', email, server.url, `-T${'A'.repeat(41)}`],
    ]) {
      const dashed = await photos(home, ['join', ...args, '--password-stdin'], { stdin: `${PASSWORD}\n` })
      expect(dashed.stderr).toBe('coffer-photos: the pairing code is wrong or has expired; run `coffer-photos device add` again\n')
      expect(dashed.code).toBe(3)
    }
  })

  it('a stale sign-in on A: without --password-stdin it says how to prove the password; with it, device add goes on', async () => {
    server.clock.advance(601_000)
    const refused = await photos(homeA, ['device', 'add'])
    expect(refused.code).toBe(3)
    expect(refused.stderr).toMatch(/wants the password proved again .*run `coffer-photos device add` again with --password-stdin/)

    const wrong = deviceAdd(['--password-stdin'], 'not the password\n')
    const ranWrong = await wrong.done
    expect(ranWrong.code).toBe(4)
    expect(ranWrong.stderr).toMatch(/invalid_credentials/)

    const a = deviceAdd(['--password-stdin'], `${PASSWORD}\n`)
    const pairing = await waitForEvent(a, 'pairing_code')
    expect(pairing.pairing_code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    a.interrupt()
    await a.done
  })

  it('an expired pairing code: B says it is wrong or expired, A that it expired; nothing kept', async () => {
    const before = await directory()
    const a = deviceAdd()
    const pairing = await waitForEvent(a, 'pairing_code')
    server.clock.advance(601_000)
    const homeB = newHome()
    const b = join(homeB, pairing.pairing_code as string)
    b.endStdin()
    const [ranA, ranB] = await Promise.all([a.done, b.done])
    expect(ranB.code).toBe(3)
    expect(ranB.stderr).toBe('coffer-photos: the pairing code is wrong or has expired; run `coffer-photos device add` again\n')
    expect(ranA.code).toBe(3)
    expect(ranA.stderr).toMatch(/the pairing code expired before the new device finished; run `coffer-photos device add` again/)
    await expectNoKeys(homeB)
    expect(await directory()).toEqual(before)
  })
})
