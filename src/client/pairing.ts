// Adding a device to an account over the server's relay (docs/photos.md, "Adding a device";
// decision 0019), around the two ends in enrollment.ts, browser-safe so that `coffer-photos
// device add` / `join` and the web app run one implementation. The device that is set up (the
// initiator) issues an enrollment code, redeems it itself and shows the channel id as the
// pairing code (openPairing), then runs the exchange and lists the new device in the signed
// directory before sending the keys (addDeviceByPairing). The new device (the enrollee) signs in,
// runs the exchange with its own new X-Wing key and checks the keys it got against the directory
// before they are kept (joinByPairing). Showing the codes and asking the person are the
// caller's: `confirmSas` and the callbacks.
import { equalBytes } from '../sdk/bytes.ts'
import { CofferProblem, type CofferClient } from '../sdk/client.ts'
import { readDirectory, type DeviceDirectory } from '../sdk/directory.ts'
import { keyFingerprint } from '../sdk/hybrid.ts'
import { IdentityKey } from '../sdk/identity.ts'
import { addToDirectory, withFreshSignIn, type AccountIdentity, type AccountKeys, type PasswordPrompt } from './account.ts'
import { runEnrollee, runInitiator, type ConfirmSas, type HistoryHandOver, type InitiatorResult } from './enrollment.ts'
import type { AlbumHandOver } from './format/album-chain.ts'
import type { EnrolledKeys, Hello } from './format/enrollment.ts'
import { generateXWingKeyPair } from './format/xwing.ts'

/** How long a pause between two looks at the mailbox is. */
export const PAIRING_POLL_INTERVAL_MS = 500
/** The relay channel's lifetime (API.md section 5, RELAY_CHANNEL_TTL_S). */
export const PAIRING_LIFETIME_MS = 600_000

const PAIRING_CODE = /^[A-Za-z0-9_-]{43}$/

/** True when `text` has the shape of a pairing code: 43 letters, digits, - and _ (the channel id). */
export function isPairingCode(text: string): boolean {
  return PAIRING_CODE.test(text)
}

/**
 * False when the pairing code names no open channel (wrong, or expired), checked before asking
 * the person for anything. Needs no session. The enrollee's mailbox is empty until its hello is
 * answered, so the look takes nothing.
 */
export async function pairingCodeLive(client: CofferClient, pairingCode: string): Promise<boolean> {
  try {
    await client.drain(pairingCode, 'to_enrollee')
    return true
  } catch (error) {
    if (error instanceof CofferProblem && error.code === 'error.enroll.channel_not_found') return false
    throw error
  }
}

/** A relay channel this device holds, waiting for the new device. */
export interface Pairing {
  /** What the new device is given (joinByPairing's `pairingCode`): the channel id. */
  readonly pairingCode: string
  /** RFC 3339: when the channel closes by itself. */
  readonly expiresAt: string
}

/**
 * The initiator's first step: issues an enrollment code (which needs a sign-in within the last
 * 10 minutes: `password` is asked for otherwise) and redeems it at once, so that this device
 * holds the channel. Pass the result to addDeviceByPairing, which closes the channel.
 */
export async function openPairing(client: CofferClient, password?: PasswordPrompt): Promise<Pairing> {
  const code = await withFreshSignIn(client, () => client.issueEnrollmentCode(), password)
  const channel = await client.redeemEnrollmentCode(code.code)
  return { pairingCode: channel.channel_id, expiresAt: channel.expires_at }
}

export interface AddDeviceOptions {
  readonly client: CofferClient
  readonly userId: string
  /** The account's keys, sent to the new device once the person confirmed and its confirmation verified. */
  readonly keys: EnrolledKeys
  /** Signs the directory (IdentityKey.fromSeeds(keys.identitySeeds) unless given; Node: nativeIdentity). */
  readonly identity?: AccountIdentity | undefined
  readonly pairing: Pairing
  /** Told when the new device answered (its id and name). */
  readonly onHello?: ((hello: Hello) => void) | undefined
  /** Shows the 6-digit code and asks whether the new device shows the same; false stops (`declined`). */
  readonly confirmSas: ConfirmSas
  /** What this device remembers of the account's albums (AlbumMemoryStore.handOver), handed to the new device once it has the keys. */
  readonly history?: (() => Promise<AlbumHandOver>) | undefined
  readonly signal?: AbortSignal | undefined
  readonly intervalMs?: number | undefined
  readonly historyWaitMs?: number | undefined
}

export interface DeviceAdded {
  /** The new device as it said hello: device_id, device_name, encryption_key. */
  readonly device: Hello
  readonly sas: string
  /** The directory version that lists it. */
  readonly directoryVersion: number
  /** Whether the new device said it kept this device's album history. */
  readonly history: InitiatorResult['history']
}

/**
 * The initiator's exchange on an open pairing: the new device's hello, the SAS confirmed, its
 * confirmation verified, then the device listed in a new version of the directory
 * (addToDirectory) and the keys sent. Ends when the new device says it has them, or by the
 * pairing's expiry. Closes the channel at the end, whatever happened. Throws EnrollmentError
 * (enrollment.ts) for an exchange that stopped, CofferProblem for the server's refusals.
 */
export async function addDeviceByPairing(options: AddDeviceOptions): Promise<DeviceAdded> {
  const { client, userId, keys, pairing } = options
  const identity = options.identity ?? IdentityKey.fromSeeds(keys.identitySeeds)
  let directoryVersion = 0
  try {
    const result = await runInitiator({
      channelId: pairing.pairingCode,
      end: client.enrollmentChannel(pairing.pairingCode, 'initiator'),
      identityKey: identity.publicKey,
      userId,
      keys: { masterKey: keys.masterKey, identitySeeds: keys.identitySeeds },
      ...(options.onHello === undefined ? {} : { onHello: options.onHello }),
      confirmSas: options.confirmSas,
      ...(options.history === undefined ? {} : { history: options.history }),
      addDevice: async (hello) => {
        const entry = {
          device_id: hello.device_id,
          public_key: identity.publicKey,
          encryption_key: hello.encryption_key,
          name: hello.device_name,
          added_at: new Date().toISOString(),
        }
        directoryVersion = (await addToDirectory(client, identity, userId, entry)).version
      },
      poll: pollOptions(options, Date.parse(pairing.expiresAt)),
    })
    return { device: result.device, sas: result.sas, directoryVersion, history: result.history }
  } finally {
    await client.closeChannel(pairing.pairingCode).catch(() => {}) // gone already when it expired
  }
}

function pollOptions(
  options: { readonly signal?: AbortSignal | undefined; readonly intervalMs?: number | undefined; readonly historyWaitMs?: number | undefined },
  deadline: number,
) {
  return {
    intervalMs: options.intervalMs ?? PAIRING_POLL_INTERVAL_MS,
    deadline,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.historyWaitMs === undefined ? {} : { historyWaitMs: options.historyWaitMs }),
  }
}

export interface JoinOptions {
  /** Signed in to the account (the offer must name `userId`). */
  readonly client: CofferClient
  readonly userId: string
  /** This device's id (the one its session was opened with). */
  readonly deviceId: string
  readonly deviceName: string
  /** What the other device shows (openPairing's `pairingCode`). */
  readonly pairingCode: string
  /** Shows the 6-digit code and asks whether the other device shows the same; false stops (`declined`). */
  readonly confirmSas: ConfirmSas
  /** Keeps the keys once they are checked; `done` is sent after it, and when it throws the other device is told. */
  readonly keep: (keys: AccountKeys) => void | Promise<void>
  /** Keeps the album history the other device hands over (AlbumMemoryStore.adopt), after the keys; none is awaited when not given. */
  readonly keepHistory?: ((albums: AlbumHandOver) => Promise<void>) | undefined
  readonly signal?: AbortSignal | undefined
  readonly intervalMs?: number | undefined
  readonly historyWaitMs?: number | undefined
  /** Give up at this time (ms since the epoch): now + PAIRING_LIFETIME_MS unless given. */
  readonly deadline?: number | undefined
}

export interface Joined {
  /** What `keep` was given: the account's keys and this device's new X-Wing seed. */
  readonly keys: AccountKeys
  readonly identityFingerprint: string
  readonly directoryVersion: number
  readonly sas: string
  readonly history: HistoryHandOver
}

/**
 * The enrollee's side: a new X-Wing key, the exchange, and the keys checked before `keep`:
 * the identity key offered makes the seeds sent (enrollment.ts), and the directory on the server
 * is signed by that key and lists this device with this key. Nothing is kept when anything
 * fails. Throws EnrollmentError for an exchange that stopped, CofferProblem for the server's
 * refusals (error.enroll.channel_not_found: the other device closed the channel, or it expired).
 */
export async function joinByPairing(options: JoinOptions): Promise<Joined> {
  const { client, userId, deviceId } = options
  const xwing = generateXWingKeyPair()
  let directoryVersion = 0
  let kept: AccountKeys | null = null
  const result = await runEnrollee({
    channelId: options.pairingCode,
    end: client.enrollmentChannel(options.pairingCode, 'enrollee'),
    deviceId,
    deviceName: options.deviceName,
    xwing,
    userId,
    confirmSas: options.confirmSas,
    ...(options.keepHistory === undefined ? {} : { keepHistory: options.keepHistory }),
    accept: async ({ keys, identityKey }) => {
      const fetched = await client.fetchDirectory(userId)
      if (fetched === null) throw new Error('the account has no device directory on the server')
      let listed: DeviceDirectory
      try {
        listed = readDirectory(fetched.bytes, identityKey)
      } catch {
        throw new Error('the device directory on the server is not signed by the identity key the other device sent')
      }
      if (!listed.devices.some((d) => d.device_id === deviceId && d.encryption_key !== undefined && equalBytes(d.encryption_key, xwing.publicKey))) {
        throw new Error('the device directory on the server does not list this device with its key')
      }
      directoryVersion = listed.version
      const accountKeys = { masterKey: keys.masterKey, identitySeeds: keys.identitySeeds, xwingSeed: xwing.secretKey }
      await options.keep(accountKeys)
      kept = accountKeys
    },
    poll: pollOptions(options, options.deadline ?? Date.now() + PAIRING_LIFETIME_MS),
  })
  return { keys: kept!, identityFingerprint: keyFingerprint(result.identityKey), directoryVersion, sas: result.sas, history: result.history }
}
