// `coffer-photos devices`: the account's signed device directory, fetched, checked against the
// identity key this device holds, and shown for a person: each device's name, id, when it was
// added and the fingerprints of its keys, and which one is this device. A directory whose
// signature does not verify is refused whole: nothing in it is shown.
import { sha256Hex } from '../../sdk/bytes.ts'
import { CofferProblem, type CofferClient } from '../../sdk/client.ts'
import { readDirectory, type DeviceDirectory } from '../../sdk/directory.ts'
import { CofferInputError } from '../../sdk/input-error.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import type { Output } from './output.ts'

/**
 * The directory on the server is not the one this account's devices signed (or not one at all).
 * Exit 1, like anything else found not verified.
 */
export class DirectoryNotVerified extends Error {
  override readonly name = 'DirectoryNotVerified'
}

/** A key's fingerprint: hex SHA-256 of its bytes (as `status` shows the identity key's). */
export const fingerprint = (key: Uint8Array): string => sha256Hex(key)

/** An RFC 3339 time as a person reads it: `2026-03-01 14:02 UTC`. */
export function minuteText(time: string): string {
  const date = new Date(time)
  return Number.isNaN(date.getTime()) ? time : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

/**
 * The account's device directory, read and checked against `identityPublicKey` (the one this
 * device holds); null when the account has none. Throws DirectoryNotVerified when the bytes the
 * server gave are not a directory signed with that key.
 */
export async function verifiedDirectory(client: CofferClient, userId: string, identityPublicKey: Uint8Array): Promise<DeviceDirectory | null> {
  let bytes: Uint8Array
  try {
    const fetched = await client.fetchDirectory(userId)
    if (fetched === null) return null // a 304, which an unconditional fetch does not get
    bytes = fetched.bytes
  } catch (error) {
    if (error instanceof CofferProblem && error.status === 404) return null
    throw error
  }
  try {
    return readDirectory(bytes, identityPublicKey)
  } catch (error) {
    if (!(error instanceof CofferInputError)) throw error
    const signature = error.problems.some((problem) => problem.includes('signature does not verify'))
    throw new DirectoryNotVerified(
      signature
        ? `the device directory on the server is NOT signed by this account's identity key (${fingerprint(identityPublicKey)}, the one this device holds): it was changed by someone who does not hold the key, so nothing in it is shown; tell the server's operator`
        : `the device directory on the server is not one a Coffer client signed (${error.problems.join('; ')}), so nothing in it is shown; tell the server's operator`,
    )
  }
}

/**
 * Each listed device's name by its id, for showing sessions, when this device holds the identity
 * key to check the directory with; null otherwise. A directory that does not verify gives no
 * names, with a warning pointing at `coffer-photos devices`.
 */
export async function deviceNames(
  client: CofferClient,
  userId: string,
  identityPublicKey: Uint8Array | null,
  out: Output,
): Promise<Map<string, string> | null> {
  if (identityPublicKey === null) return null
  try {
    const directory = await verifiedDirectory(client, userId, identityPublicKey)
    return new Map((directory?.devices ?? []).flatMap((device) => (device.name === undefined ? [] : [[device.device_id, device.name] as const])))
  } catch (error) {
    if (!(error instanceof DirectoryNotVerified)) throw error
    out.warn('coffer-photos: the device directory on the server does not verify (`coffer-photos devices` says more); device names are not shown')
    return null
  }
}

export const devices: Command = {
  usage: [
    'usage: coffer-photos devices [--json]',
    '',
    "Fetches the account's device directory, checks its signature against the identity key this",
    'device holds, and lists each device: its name, id, when it was added, the fingerprint of its',
    'encryption key, and which one is this device. A directory whose signature does not verify is',
    'refused (exit 1) and nothing in it is shown.',
    '',
    '  --json   print one `device` event per device, then a `directory` event',
  ].join('\n'),
  options: {},
  async run({ positionals, out, signal, home }) {
    if (positionals.length > 0) throw new UsageError('devices takes no arguments')
    const account = await openAccount(home, commandClientOptions(out, signal))
    const identity = fingerprint(account.identity.publicKey)
    const directory = await verifiedDirectory(account.client, account.userId, account.identity.publicKey)
    if (directory === null)
      throw new DirectoryNotVerified(
        `the server holds no device directory for ${account.email}, though this device is set up for it; tell the server's operator`,
      )

    out.say(`Devices of ${account.email} on ${account.server}: directory version ${directory.version},`)
    out.say(`signed by the account's identity key ${identity} (verified here).`)
    for (const device of directory.devices) {
      const thisDevice = device.device_id === account.deviceId
      const signingKey = fingerprint(device.public_key)
      const encryptionKey = device.encryption_key === undefined ? null : fingerprint(device.encryption_key)
      out.say('')
      out.say(`${device.name ?? '(no name)'}${thisDevice ? '  <- this device' : ''}`)
      out.say(`  device id       ${device.device_id}`)
      out.say(`  added           ${device.added_at === undefined ? 'not recorded' : minuteText(device.added_at)}`)
      out.say(`  encryption key  ${encryptionKey ?? 'none (other devices cannot hand it keys)'}`)
      if (signingKey !== identity) out.say(`  signing key     ${signingKey} (not the account's identity key)`)
      out.event('device', {
        device_id: device.device_id,
        name: device.name ?? null,
        added_at: device.added_at ?? null,
        this_device: thisDevice,
        encryption_key_fingerprint: encryptionKey,
        signing_key_fingerprint: signingKey,
      })
    }
    const listed = directory.devices.some((device) => device.device_id === account.deviceId)
    out.say('')
    out.say(`${directory.devices.length} device${directory.devices.length === 1 ? '' : 's'}. Fingerprints are hex SHA-256 of the public keys.`)
    if (!listed) out.warn(`coffer-photos: this device (${account.deviceId}) is not in the directory: another device took it out, or it was never added`)
    out.event('directory', {
      version: directory.version,
      identity_fingerprint: identity,
      verified: true,
      devices: directory.devices.length,
      this_device_listed: listed,
    })
    return EXIT.ok
  },
}
