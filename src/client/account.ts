// The account flows that make a device hold the account's keys, browser-safe so that
// `coffer-photos` and the web app run one implementation (docs/client-library.md, "Account
// flows"): setting up the account's first device (docs/photos.md, "Setting up"), recovering
// on a new device with the recovery phrase ("Recovering on a new device"), listing a device in
// the signed device directory, and the freshness gate some of these requests pass. Where keys
// are kept, how the password and the phrase are asked for and what is shown are the caller's:
// each is a callback or a value here. Device enrollment over the relay is in pairing.ts.
import { toBase64 } from '../sdk/bytes.ts'
import { CofferProblem, type CofferClient } from '../sdk/client.ts'
import { DIRECTORY_MAX_DEVICES, readDirectory, signDirectory, type DeviceDirectory, type DirectoryDevice, type Signer } from '../sdk/directory.ts'
import { keyFingerprint } from '../sdk/hybrid.ts'
import { IdentityKey } from '../sdk/identity.ts'
import { randomBytes } from './format/bytes.ts'
import { ClientFormatError } from './format/errors.ts'
import { generateMasterKey } from './format/keys.ts'
import { generateRecoveryKey, openEscrow, recoveryKeyFromPhrase, recoveryPhrase, sealEscrow, type Argon2id } from './format/recovery.ts'
import { generateXWingKeyPair, XWING_SEED_BYTES } from './format/xwing.ts'

/** The longest device name the directory takes (characters). */
export const DEVICE_NAME_MAX = 100

/** What a device holds of the account: enough to act as it, and its own device encryption key. */
export interface AccountKeys {
  /** The 32-byte account master key. */
  readonly masterKey: Uint8Array
  /** The identity key's 64 seed bytes (IdentityKey.exportSeeds()). */
  readonly identitySeeds: Uint8Array
  /** This device's 32-byte X-Wing seed (its device encryption secret key). */
  readonly xwingSeed: Uint8Array
}

/** The identity key as a signer with its public half: an `IdentityKey`, or Node's nativeIdentity(seeds). */
export interface AccountIdentity extends Signer {
  /** 1984 bytes: Ed25519 public key | ML-DSA-65 public key. */
  readonly publicKey: Uint8Array
}

/** Asks the person for the account's password (a prompt, a dialog, a line of stdin); throwing stops the flow. */
export type PasswordPrompt = () => Promise<string>

/**
 * The freshness gate (SPEC "Authentication"): runs `action`; when the server answers 403
 * error.auth.reauthentication_required (the sign-in is older than 10 minutes), proves the
 * password from `password` (reauthenticate) and runs it again. Without `password`, that 403 is
 * thrown as it came. A wrong password is the server's CofferProblem (error.auth.invalid_credentials).
 */
export async function withFreshSignIn<T>(client: CofferClient, action: () => Promise<T>, password?: PasswordPrompt): Promise<T> {
  try {
    return await action()
  } catch (error) {
    if (password === undefined || !(error instanceof CofferProblem && error.code === 'error.auth.reauthentication_required')) throw error
    await client.reauthenticate(await password())
    return action()
  }
}

/** A new device's X-Wing seed (its device encryption secret key). */
export function newXWingSeed(): Uint8Array {
  return randomBytes(XWING_SEED_BYTES)
}

/** A device's entry in the directory: its id, the account's identity key, its X-Wing public key, its name, added now. */
export function deviceEntry(identity: { readonly publicKey: Uint8Array }, deviceId: string, xwingSeed: Uint8Array, name: string): DirectoryDevice {
  return {
    device_id: deviceId,
    public_key: identity.publicKey,
    encryption_key: generateXWingKeyPair(xwingSeed).publicKey,
    name,
    added_at: new Date().toISOString(),
  }
}

/** The account's directory as the server holds it (signed bytes), or null when it has none yet. */
export async function fetchedDirectory(client: CofferClient, userId: string): Promise<Uint8Array | null> {
  try {
    return (await client.fetchDirectory(userId))?.bytes ?? null
  } catch (error) {
    if (error instanceof CofferProblem && error.status === 404) return null
    throw error
  }
}

/** Publishes tried when other devices keep publishing first (409 version_conflict). */
const PUBLISH_TRIES = 5

/**
 * Lists `device` in the account's directory as a new version signed by `identity`, in place of
 * an entry with the same device id (that device's earlier key, whose keys are gone) or after
 * the others; fetched and signed again when another device published first. The directory on
 * the server must verify under `identity`; nothing is published otherwise. Answers the
 * directory as published.
 */
export async function addToDirectory(client: CofferClient, identity: AccountIdentity, userId: string, device: DirectoryDevice): Promise<DeviceDirectory> {
  for (let attempt = 1; ; attempt++) {
    const bytes = await fetchedDirectory(client, userId)
    if (bytes === null) throw new Error('the account has no device directory on the server, which a finished setup never leaves; nothing was changed')
    let current: DeviceDirectory
    try {
      current = readDirectory(bytes, identity.publicKey)
    } catch (error) {
      throw new Error(
        `the account's device directory on the server is not one the identity key (${keyFingerprint(identity.publicKey)}) signed (${(error as Error).message}); nothing was changed`,
      )
    }
    const devices = [...current.devices.filter((listed) => listed.device_id !== device.device_id), device]
    if (devices.length > DIRECTORY_MAX_DEVICES)
      throw new Error(`the device directory lists ${current.devices.length} devices, the most it may hold; nothing was changed`)
    const next: DeviceDirectory = { version: current.version + 1, devices }
    try {
      await client.publishDirectory(await signDirectory(identity, next), toBase64(identity.publicKey))
      return next
    } catch (error) {
      if (!(error instanceof CofferProblem && error.code === 'error.directory.version_conflict') || attempt >= PUBLISH_TRIES) throw error
    }
  }
}

// --- the first device -------------------------------------------------------------------

/**
 * The account is set up on another device (its directory is there, and not one these keys
 * published): nothing to set up here; the way in is recovery or pairing with that device.
 */
export class AccountSetUpElsewhereError extends Error {
  override readonly name = 'AccountSetUpElsewhereError'
  constructor() {
    super('the account is already set up on another device: recover it with the recovery phrase, or add this device from one that is set up')
  }
}

/** Refusals of a publish that mean another device got there first. */
const PUBLISHED_ELSEWHERE = new Set(['error.directory.version_conflict', 'error.directory.identity_key_mismatch'])

export interface FirstDevicePlan {
  /** The keys to set up with: `pending` when given, else new ones. */
  readonly keys: AccountKeys
  /** True when the keys are new: keep them (as pending) before publishFirstDevice. */
  readonly fresh: boolean
  /** The directory on the server when the plan was made (an earlier run's, when resuming), or null. */
  readonly directory: Uint8Array | null
}

/**
 * The first step of setting up: reads the account's directory and gives the keys to set up
 * with, the `pending` ones of a run that stopped half-way, or a new master key, identity key and
 * X-Wing seed. Publishes nothing. Throws AccountSetUpElsewhereError when the account has a
 * directory and there are no pending keys.
 */
export async function planFirstDevice(client: CofferClient, userId: string, pending: AccountKeys | null = null): Promise<FirstDevicePlan> {
  const directory = await fetchedDirectory(client, userId)
  if (pending !== null) return { keys: pending, fresh: false, directory }
  if (directory !== null) throw new AccountSetUpElsewhereError()
  return {
    keys: { masterKey: generateMasterKey(), identitySeeds: IdentityKey.generate().exportSeeds(), xwingSeed: newXWingSeed() },
    fresh: true,
    directory,
  }
}

export interface PublishFirstDeviceOptions {
  readonly client: CofferClient
  readonly userId: string
  readonly deviceId: string
  readonly deviceName: string
  readonly plan: FirstDevicePlan
  /** Asked when the sign-in is too old to bind the identity key (10 minutes); without it, that 403 is thrown. */
  readonly password?: PasswordPrompt | undefined
  /** For the escrow's key (portableArgon2id unless given; Node: nativeArgon2id). */
  readonly argon2id?: Argon2id | undefined
}

export interface FirstDeviceSetUp {
  /** The 24-word recovery phrase of the escrow just stored: show it once; it is never stored. */
  readonly phrase: string
  readonly identityFingerprint: string
  readonly directoryVersion: 1
}

/** True when `bytes` is a directory signed by `identity` that lists `deviceId`: an earlier run of this setup published it. */
function publishedByUs(bytes: Uint8Array, identity: IdentityKey, deviceId: string): boolean {
  try {
    return readDirectory(bytes, identity.publicKey).devices.some((device) => device.device_id === deviceId)
  } catch {
    return false
  }
}

/**
 * The second step, once the plan's keys are kept: publishes the signed directory (version 1)
 * listing this device, unless an earlier run with the same keys did; then stores a new escrow
 * under a new recovery key and answers its phrase (each run a new one: the last shown counts).
 * Throws AccountSetUpElsewhereError when another device's directory is there or got there
 * first: the plan's keys were never published and are to be forgotten.
 */
export async function publishFirstDevice(options: PublishFirstDeviceOptions): Promise<FirstDeviceSetUp> {
  const { client, userId, deviceId, plan } = options
  const identity = IdentityKey.fromSeeds(plan.keys.identitySeeds)
  if (plan.directory === null) {
    const signed = await signDirectory(identity, { version: 1, devices: [deviceEntry(identity, deviceId, plan.keys.xwingSeed, options.deviceName)] })
    try {
      // Binding the identity key needs a recent password proof (API: within 10 minutes of the sign-in).
      await withFreshSignIn(client, () => client.publishDirectory(signed, identity), options.password)
    } catch (error) {
      if (error instanceof CofferProblem && PUBLISHED_ELSEWHERE.has(error.code)) throw new AccountSetUpElsewhereError()
      throw error
    }
  } else if (!publishedByUs(plan.directory, identity, deviceId)) {
    throw new AccountSetUpElsewhereError()
  }
  const recoveryKey = generateRecoveryKey()
  const escrowed = { masterKey: plan.keys.masterKey, identitySeeds: plan.keys.identitySeeds }
  await client.storeEscrow(await sealEscrow(recoveryKey, userId, escrowed, options.argon2id === undefined ? {} : { argon2id: options.argon2id }))
  return { phrase: recoveryPhrase(recoveryKey), identityFingerprint: identity.fingerprint, directoryVersion: 1 }
}

export interface SetUpFirstDeviceOptions extends Omit<PublishFirstDeviceOptions, 'plan'> {
  /** The keys a setup that stopped half-way kept, or null. */
  readonly pending: AccountKeys | null
  /** Keeps new keys (as pending) before anything is published: the first publish binds the identity key for good. */
  readonly keep: (keys: AccountKeys) => void | Promise<void>
  /** Drops the kept keys when they turn out never to be published (AccountSetUpElsewhereError follows). */
  readonly forget: () => void | Promise<void>
}

/**
 * Sets up the account's first device: planFirstDevice, `keep` the new keys, publishFirstDevice.
 * Run again with the `pending` keys after a stop, it resumes with them. The caller shows the
 * phrase and marks the keys complete once the person has it written down.
 */
export async function setUpFirstDevice(options: SetUpFirstDeviceOptions): Promise<FirstDeviceSetUp & { readonly keys: AccountKeys }> {
  const { pending, keep, forget, ...rest } = options
  const plan = await planFirstDevice(options.client, options.userId, pending)
  if (plan.fresh) await keep(plan.keys)
  try {
    return { ...(await publishFirstDevice({ ...rest, plan })), keys: plan.keys }
  } catch (error) {
    if (error instanceof AccountSetUpElsewhereError) await forget()
    throw error
  }
}

// --- recovery ---------------------------------------------------------------------------

/** The account has no recovery escrow on the server. */
export class NoEscrowError extends Error {
  override readonly name = 'NoEscrowError'
  /** True when the account has a directory: setup started on its first device and did not finish; false: never set up. */
  readonly setUpStarted: boolean
  constructor(setUpStarted: boolean) {
    super(
      setUpStarted
        ? 'the account has no recovery escrow: setup did not finish on its first device'
        : 'the account has no recovery escrow: it was never set up, so there is nothing to recover',
    )
    this.setUpStarted = setUpStarted
  }
}

/** A recovery phrase that spells no recovery key ('malformed': the word count, a word, the checksum) or does not open the escrow ('wrong'). Nothing was changed. */
export class RecoveryPhraseError extends Error {
  override readonly name = 'RecoveryPhraseError'
  readonly reason: 'malformed' | 'wrong'
  constructor(reason: 'malformed' | 'wrong', message: string) {
    super(message)
    this.reason = reason
  }
}

/** The account's escrow; NoEscrowError when it has none. */
export async function fetchRecoveryEscrow(client: CofferClient, userId: string): Promise<Uint8Array> {
  try {
    return await client.fetchEscrow()
  } catch (error) {
    if (!(error instanceof CofferProblem && error.status === 404)) throw error
    throw new NoEscrowError((await fetchedDirectory(client, userId)) !== null)
  }
}

/**
 * The keys in `escrow`, opened with `phrase` (any case and spacing). RecoveryPhraseError for a
 * phrase that spells no key or opens nothing; ClientFormatError for an escrow that cannot be
 * read (altered, or asking argon2id for more than ESCROW_KDF_LIMITS).
 */
export async function openRecoveryEscrow(
  escrow: Uint8Array,
  userId: string,
  phrase: string,
  argon2id?: Argon2id,
): Promise<{ masterKey: Uint8Array; identitySeeds: Uint8Array }> {
  let recoveryKey: Uint8Array
  try {
    recoveryKey = recoveryKeyFromPhrase(phrase)
  } catch (error) {
    if (error instanceof ClientFormatError) throw new RecoveryPhraseError('malformed', error.message)
    throw error
  }
  try {
    return await openEscrow(recoveryKey, userId, escrow, argon2id === undefined ? {} : { argon2id })
  } catch (error) {
    if (error instanceof ClientFormatError && error.code === 'authentication') {
      throw new RecoveryPhraseError(
        'wrong',
        "the recovery phrase does not open this account's escrow: it is not the phrase setup showed for this account (the last one shown, if setup ran more than once)",
      )
    }
    throw error
  }
}

/**
 * The phrase, asked again after each one that failed: `failed` is null the first time, then why
 * the last one did not open the escrow. Throw to stop (e.g. after a few tries, or a Cancel).
 */
export type PhrasePrompt = (failed: RecoveryPhraseError | null) => Promise<string>

export interface RecoverOptions {
  readonly client: CofferClient
  readonly userId: string
  /** This device's id (the one its session was opened with). */
  readonly deviceId: string
  readonly deviceName: string
  /** The 24 words, tried once (RecoveryPhraseError when they do not open the escrow), or a prompt asked until they do. */
  readonly phrase: string | PhrasePrompt
  /** For the escrow's key (portableArgon2id unless given; Node: nativeArgon2id). */
  readonly argon2id?: Argon2id | undefined
}

export interface Recovered {
  /** The account's keys and this device's new X-Wing seed: keep them (this device is listed already). */
  readonly keys: AccountKeys
  readonly identityFingerprint: string
  /** The directory as published, listing this device. */
  readonly directory: DeviceDirectory
  /** The escrow's version byte (1 or 2); the escrow itself is only read. */
  readonly escrowVersion: number
}

/**
 * Recovers the account on this device: fetches the escrow (NoEscrowError), opens it with the
 * phrase, then makes this device's X-Wing key and lists it in a new version of the directory
 * signed with the recovered identity key (addToDirectory: an entry with this device id is
 * replaced). A wrong phrase changes nothing: the escrow is opened before anything is made or
 * published. The keys are published before the caller keeps them: run again with the same
 * device id, recovery replaces the entry of keys that were lost.
 */
export async function recoverWithPhrase(options: RecoverOptions): Promise<Recovered> {
  const { client, userId, phrase } = options
  const escrow = await fetchRecoveryEscrow(client, userId)
  let failed: RecoveryPhraseError | null = null
  let opened: { masterKey: Uint8Array; identitySeeds: Uint8Array }
  for (;;) {
    try {
      opened = await openRecoveryEscrow(escrow, userId, typeof phrase === 'string' ? phrase : await phrase(failed), options.argon2id)
      break
    } catch (error) {
      if (!(error instanceof RecoveryPhraseError) || typeof phrase === 'string') throw error
      failed = error
    }
  }
  const identity = IdentityKey.fromSeeds(opened.identitySeeds)
  const xwingSeed = newXWingSeed()
  const directory = await addToDirectory(client, identity, userId, deviceEntry(identity, options.deviceId, xwingSeed, options.deviceName))
  return { keys: { ...opened, xwingSeed }, identityFingerprint: identity.fingerprint, directory, escrowVersion: escrow[0]! }
}
