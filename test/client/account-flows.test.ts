// The browser-safe account flows (src/client/account.ts, src/client/pairing.ts) through the SDK
// against a real server, without coffer-photos: setting up the first device, kept before
// anything is published and resumed with the same keys; a second device refused; recovery with
// a wrong or malformed phrase changing nothing, and with a prompt asked again; adding a device
// over the relay from both ends.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AccountSetUpElsewhereError,
  fetchedDirectory,
  NoEscrowError,
  openRecoveryEscrow,
  planFirstDevice,
  publishFirstDevice,
  recoverWithPhrase,
  RecoveryPhraseError,
  setUpFirstDevice,
  withFreshSignIn,
  type AccountKeys,
} from '../../src/client/account.ts'
import { generateRecoveryKey, recoveryPhrase } from '../../src/client/format/recovery.ts'
import { generateXWingKeyPair } from '../../src/client/format/xwing.ts'
import { nativeArgon2id } from '../../src/client/node/crypto.ts'
import { addDeviceByPairing, isPairingCode, joinByPairing, openPairing, pairingCodeLive } from '../../src/client/pairing.ts'
import { CofferProblem, type CofferClient } from '../../src/sdk/client.ts'
import { readDirectory, signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer

beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.close()
})

interface Device {
  readonly client: CofferClient
  readonly userId: string
  readonly deviceId: string
}

/** A new account, signed in on a first device (a fresh sign-in). */
async function newAccount(): Promise<Device & { email: string }> {
  const email = uniqueEmail('flows')
  const client = server.client()
  await client.register(email, PASSWORD)
  const { user_id: userId } = await client.getProfile()
  return { email, client, userId, deviceId: randomUUID() }
}

/** Another device signed in to `email`. */
async function signedIn(email: string): Promise<Device> {
  const client = server.client()
  const deviceId = randomUUID()
  expect((await client.login(email, PASSWORD, { device_id: deviceId })).kind).toBe('session')
  const { user_id: userId } = await client.getProfile()
  return { client, userId, deviceId }
}

/** setUpFirstDevice with what it keeps and forgets recorded. */
async function setUp(device: Device, pending: AccountKeys | null = null, password?: () => Promise<string>) {
  const kept: AccountKeys[] = []
  let forgotten = 0
  const run = setUpFirstDevice({
    ...device,
    deviceName: 'Laptop',
    pending,
    keep: async (keys) => {
      // Kept before anything is published.
      expect(await fetchedDirectory(device.client, device.userId)).toBeNull()
      kept.push(keys)
    },
    forget: () => {
      forgotten++
    },
    argon2id: nativeArgon2id,
    ...(password === undefined ? {} : { password }),
  })
  return { run, kept, forgotten: () => forgotten }
}

const directoryOf = async (device: Device, identitySeeds: Uint8Array) =>
  readDirectory((await fetchedDirectory(device.client, device.userId))!, IdentityKey.fromSeeds(identitySeeds).publicKey)

describe('setUpFirstDevice', () => {
  it('keeps new keys first, then publishes directory v1 listing this device and stores an escrow the phrase opens to those keys', async () => {
    const first = await newAccount()
    const { run, kept, forgotten } = await setUp(first)
    const set = await run
    expect(kept).toHaveLength(1)
    expect(forgotten()).toBe(0)
    expect(set.keys).toBe(kept[0])
    expect(set.phrase.split(' ')).toHaveLength(24)
    expect(set.identityFingerprint).toBe(IdentityKey.fromSeeds(set.keys.identitySeeds).fingerprint)

    const directory = await directoryOf(first, set.keys.identitySeeds)
    expect(directory.version).toBe(1)
    expect(directory.devices).toHaveLength(1)
    expect(directory.devices[0]).toMatchObject({ device_id: first.deviceId, name: 'Laptop' })
    expect(Buffer.from(directory.devices[0]!.encryption_key!)).toEqual(Buffer.from(generateXWingKeyPair(set.keys.xwingSeed).publicKey))

    const opened = await openRecoveryEscrow(await first.client.fetchEscrow(), first.userId, set.phrase.toUpperCase(), nativeArgon2id)
    expect(Buffer.from(opened.masterKey)).toEqual(Buffer.from(set.keys.masterKey))
    expect(Buffer.from(opened.identitySeeds)).toEqual(Buffer.from(set.keys.identitySeeds))
  })

  it('stopped by a stale sign-in after keeping its keys, resumes with the same keys once the password is given; a run after the publish stores a new escrow only', async () => {
    const first = await newAccount()
    server.clock.advance(11 * 60_000)
    const stale = await setUp(first)
    await expect(stale.run).rejects.toMatchObject({ code: 'error.auth.reauthentication_required' })
    expect(stale.kept).toHaveLength(1)
    expect(stale.forgotten()).toBe(0)
    expect(await fetchedDirectory(first.client, first.userId)).toBeNull()

    const pending = stale.kept[0]!
    let asked = 0
    const resumed = await setUp(first, pending, async () => {
      asked++
      return PASSWORD
    })
    const set = await resumed.run
    expect(asked).toBe(1)
    expect(resumed.kept).toHaveLength(0) // nothing new to keep
    expect(set.keys).toBe(pending)
    expect((await directoryOf(first, pending.identitySeeds)).devices.map((d) => d.device_id)).toEqual([first.deviceId])

    // Stopped after the publish (the phrase never confirmed): the next run publishes nothing and shows a new phrase.
    const published = await fetchedDirectory(first.client, first.userId)
    const plan = await planFirstDevice(first.client, first.userId, pending)
    expect(plan).toMatchObject({ fresh: false, keys: pending })
    const again = await publishFirstDevice({ ...first, deviceName: 'Laptop', plan, argon2id: nativeArgon2id })
    expect(again.phrase).not.toBe(set.phrase)
    expect(Buffer.from((await fetchedDirectory(first.client, first.userId))!)).toEqual(Buffer.from(published!))
    const escrow = await first.client.fetchEscrow()
    await expect(openRecoveryEscrow(escrow, first.userId, set.phrase, nativeArgon2id)).rejects.toMatchObject({ reason: 'wrong' })
    expect((await openRecoveryEscrow(escrow, first.userId, again.phrase, nativeArgon2id)).masterKey).toEqual(pending.masterKey)
  })

  it('on a second device of a set-up account: refused before keeping anything; pending keys that were never published are forgotten', async () => {
    const first = await newAccount()
    await (await setUp(first)).run
    const second = await signedIn(first.email)
    const fresh = await setUp(second)
    await expect(fresh.run).rejects.toBeInstanceOf(AccountSetUpElsewhereError)
    expect(fresh.kept).toHaveLength(0)
    expect(fresh.forgotten()).toBe(0)

    const stray = { masterKey: new Uint8Array(32).fill(1), identitySeeds: IdentityKey.generate().exportSeeds(), xwingSeed: new Uint8Array(32).fill(2) }
    const pending = await setUp(second, stray)
    await expect(pending.run).rejects.toBeInstanceOf(AccountSetUpElsewhereError)
    expect(pending.forgotten()).toBe(1)
  })
})

describe('recoverWithPhrase', () => {
  async function setUpAccount() {
    const first = await newAccount()
    const set = await (await setUp(first)).run
    return { first, set, second: await signedIn(first.email) }
  }

  const serverState = async (device: Device) => ({ directory: await fetchedDirectory(device.client, device.userId), escrow: await device.client.fetchEscrow() })

  it('a wrong phrase, or a malformed one, changes nothing: a RecoveryPhraseError, the directory and the escrow as they were', async () => {
    const { second } = await setUpAccount()
    const before = await serverState(second)
    const options = { ...second, deviceName: 'New laptop', argon2id: nativeArgon2id }
    const wrong = await recoverWithPhrase({ ...options, phrase: recoveryPhrase(generateRecoveryKey()) }).catch((error: unknown) => error)
    expect(wrong).toBeInstanceOf(RecoveryPhraseError)
    expect(wrong).toMatchObject({ reason: 'wrong' })
    await expect(recoverWithPhrase({ ...options, phrase: 'abandon '.repeat(24) })).rejects.toMatchObject({ name: 'RecoveryPhraseError', reason: 'malformed' })
    expect(await serverState(second)).toEqual(before)
  })

  it("with a prompt: asked again after a malformed and a wrong phrase, then lists this device in directory v2 with its new key and answers the account's keys", async () => {
    const { first, set, second } = await setUpAccount()
    const escrowBefore = await first.client.fetchEscrow()
    const failures: (string | null)[] = []
    const answers = ['not a phrase', recoveryPhrase(generateRecoveryKey()), set.phrase]
    const recovered = await recoverWithPhrase({
      ...second,
      deviceName: 'New laptop',
      phrase: async (failed) => {
        failures.push(failed?.reason ?? null)
        return answers.shift()!
      },
      argon2id: nativeArgon2id,
    })
    expect(failures).toEqual([null, 'malformed', 'wrong'])
    expect(recovered.keys.masterKey).toEqual(set.keys.masterKey)
    expect(recovered.keys.identitySeeds).toEqual(set.keys.identitySeeds)
    expect(recovered.identityFingerprint).toBe(set.identityFingerprint)
    expect(recovered.escrowVersion).toBe(2)
    const directory = await directoryOf(second, set.keys.identitySeeds)
    expect(directory).toEqual(recovered.directory)
    expect(directory.version).toBe(2)
    const listed = directory.devices.find((d) => d.device_id === second.deviceId)!
    expect(listed.name).toBe('New laptop')
    expect(Buffer.from(listed.encryption_key!)).toEqual(Buffer.from(generateXWingKeyPair(recovered.keys.xwingSeed).publicKey))
    expect(await first.client.fetchEscrow()).toEqual(escrowBefore) // only read

    // A prompt that throws stops the recovery with its error.
    const stop = new Error('cancelled')
    await expect(
      recoverWithPhrase({
        ...second,
        deviceName: 'X',
        phrase: async () => {
          throw stop
        },
      }),
    ).rejects.toBe(stop)
  })

  it('an account without an escrow: NoEscrowError, saying whether setup started (a directory is there)', async () => {
    const never = await newAccount()
    await expect(recoverWithPhrase({ ...never, deviceName: 'X', phrase: 'x' })).rejects.toMatchObject({ name: 'NoEscrowError', setUpStarted: false })
    const started = await newAccount()
    const identity = IdentityKey.generate()
    await started.client.publishDirectory(
      await signDirectory(identity, { version: 1, devices: [{ device_id: started.deviceId, public_key: identity.publicKey }] }),
      identity,
    )
    const error = await recoverWithPhrase({ ...started, deviceName: 'X', phrase: 'x' }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(NoEscrowError)
    expect(error).toMatchObject({ setUpStarted: true })
  })
})

describe('withFreshSignIn', () => {
  it('runs the action again after proving the password when the sign-in is stale; without a prompt the 403 is thrown', async () => {
    const device = await newAccount()
    server.clock.advance(11 * 60_000)
    await expect(withFreshSignIn(device.client, () => device.client.issueEnrollmentCode())).rejects.toBeInstanceOf(CofferProblem)
    await expect(
      withFreshSignIn(
        device.client,
        () => device.client.issueEnrollmentCode(),
        async () => 'not the password',
      ),
    ).rejects.toMatchObject({ code: 'error.auth.invalid_credentials' })
    const code = await withFreshSignIn(
      device.client,
      () => device.client.issueEnrollmentCode(),
      async () => PASSWORD,
    )
    expect(code.code).toBeTruthy()
  })
})

describe('addDeviceByPairing / joinByPairing', () => {
  it('adds a device through the relay: the same SAS on both, the keys kept on the new one, listed in the directory; the channel closed', async () => {
    const first = await newAccount()
    const set = await (await setUp(first)).run
    const pairing = await openPairing(first.client)
    expect(isPairingCode(pairing.pairingCode)).toBe(true)
    expect(await pairingCodeLive(server.client(), pairing.pairingCode)).toBe(true)

    const second = await signedIn(first.email)
    const sas: Record<string, string> = {}
    const hellos: string[] = []
    const kept: AccountKeys[] = []
    const [added, joined] = await Promise.all([
      addDeviceByPairing({
        client: first.client,
        userId: first.userId,
        keys: set.keys,
        pairing,
        intervalMs: 20,
        onHello: (hello) => hellos.push(hello.device_name),
        confirmSas: async (code) => {
          sas.a = code
          return true
        },
      }),
      joinByPairing({
        ...second,
        deviceName: 'New phone',
        pairingCode: pairing.pairingCode,
        intervalMs: 20,
        confirmSas: async (code) => {
          sas.b = code
          return true
        },
        keep: (keys) => {
          kept.push(keys)
        },
      }),
    ])
    expect(sas.a).toMatch(/^\d{3} \d{3}$/)
    expect(sas.b).toBe(sas.a)
    expect(hellos).toEqual(['New phone'])
    expect(added).toMatchObject({ sas: sas.a, directoryVersion: 2, device: { device_id: second.deviceId, device_name: 'New phone' } })
    expect(joined).toMatchObject({ sas: sas.a, directoryVersion: 2, identityFingerprint: set.identityFingerprint })
    expect(kept).toEqual([joined.keys])
    expect(joined.keys.masterKey).toEqual(set.keys.masterKey)
    expect(joined.keys.identitySeeds).toEqual(set.keys.identitySeeds)
    const listed = (await directoryOf(first, set.keys.identitySeeds)).devices.find((d) => d.device_id === second.deviceId)!
    expect(Buffer.from(listed.encryption_key!)).toEqual(Buffer.from(generateXWingKeyPair(joined.keys.xwingSeed).publicKey))
    expect(await pairingCodeLive(server.client(), pairing.pairingCode)).toBe(false)
  })

  it('a person who says no on the new device: nothing kept there, the directory unchanged, the channel closed', async () => {
    const first = await newAccount()
    const set = await (await setUp(first)).run
    const before = await fetchedDirectory(first.client, first.userId)
    const pairing = await openPairing(first.client)
    const second = await signedIn(first.email)
    const kept: AccountKeys[] = []
    const [added, joined] = await Promise.allSettled([
      addDeviceByPairing({ client: first.client, userId: first.userId, keys: set.keys, pairing, intervalMs: 20, confirmSas: async () => true }),
      joinByPairing({
        ...second,
        deviceName: 'New phone',
        pairingCode: pairing.pairingCode,
        intervalMs: 20,
        confirmSas: async () => false,
        keep: (keys) => {
          kept.push(keys)
        },
      }),
    ])
    expect(joined).toMatchObject({ status: 'rejected', reason: { name: 'EnrollmentError', stop: 'declined' } })
    expect(added).toMatchObject({ status: 'rejected', reason: { name: 'EnrollmentError', stop: 'aborted' } })
    expect(kept).toEqual([])
    expect(await fetchedDirectory(first.client, first.userId)).toEqual(before)
    expect(await pairingCodeLive(server.client(), pairing.pairingCode)).toBe(false)
    expect(isPairingCode('too-short')).toBe(false)
  })
})
