// The device directory an account publishes (POST /v1/auth/devices/directory). The server
// reads only the top-level `directory_version` (an unsigned integer that must exceed the
// stored one) and keeps every other byte opaque; this is the SDK's layout for the rest, signed
// with the identity key so that whoever fetches it (another member, a new device) can check
// that the account's owner wrote it:
//
//   directory = canonical CBOR {"directory_version": N, "body": bstr, "sig": bstr}
//   body      = canonical CBOR {"directory_version": N, "devices": [{"device_id", "public_key", "encryption_key"?, "name"?, "added_at"?}]}
//   sig       = hybrid signature over UTF-8 "coffer/device-directory/v1" | 0x00 | body
import { Value } from 'typebox/value'
import { decodeCanonical, encodeCanonical } from '../codec/cbor.ts'
import { Uuid } from '../contract/common.ts'
import { DIRECTORY_MAX_BYTES } from '../contract/devices.ts'
import { contextSigningBytes } from '../contract/signing.ts'
import { hybridVerify } from './hybrid.ts'
import { CofferInputError, refuseIf } from './input-error.ts'

export const DIRECTORY_CONTEXT = 'coffer/device-directory/v1'
/** Most devices one directory lists (a bound that keeps it far below DIRECTORY_MAX_BYTES). */
export const DIRECTORY_MAX_DEVICES = 64
const DEVICE_KEY_MAX_BYTES = 4096
const DEVICE_NAME_MAX = 100

export interface DirectoryDevice {
  /** Canonical UUID (lowercase, hyphenated), unique in the directory: `created_by_device` in manifests. */
  readonly device_id: string
  /** The device's own public key (app-defined, 1 to 4096 bytes), e.g. to wrap album keys to it. */
  readonly public_key: Uint8Array
  /**
   * The device's public encryption key (app-defined, 1 to 4096 bytes): what another device
   * encrypts to when it hands this one a secret. Client format v1: the X-Wing public key (1216 bytes).
   */
  readonly encryption_key?: Uint8Array
  /** Shown to the user; 1 to 100 characters. */
  readonly name?: string
  /**
   * When the device was added to the directory, RFC 3339 (e.g. `2026-03-01T14:02:11.000Z`), by
   * the clock of the device that added it: shown to the user, so that a device they do not
   * remember adding stands out. Signed like the rest; carried over unchanged by later versions.
   */
  readonly added_at?: string
}

export interface DeviceDirectory {
  /** 0 to 2^53-1; each publish must exceed the stored one (409 with `stored` otherwise). */
  readonly version: number
  readonly devices: readonly DirectoryDevice[]
}

/** Anything that makes hybrid signatures with the identity key (an `IdentityKey`). */
export interface Signer {
  sign(message: Uint8Array): Promise<Uint8Array>
}

const DEVICE_FIELDS = ['device_id', 'public_key', 'encryption_key', 'name', 'added_at']

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/

const isTimestamp = (value: unknown): boolean => typeof value === 'string' && RFC3339.test(value) && Number.isFinite(Date.parse(value))

const isDeviceKey = (key: unknown): boolean => key instanceof Uint8Array && key.length > 0 && key.length <= DEVICE_KEY_MAX_BYTES

function directoryProblems(directory: DeviceDirectory): string[] {
  const problems: string[] = []
  if (!Number.isSafeInteger(directory.version) || directory.version < 0) problems.push('version: must be a whole number from 0 to 2^53-1')
  if (!Array.isArray(directory.devices)) return [...problems, 'devices: must be an array']
  if (directory.devices.length > DIRECTORY_MAX_DEVICES) problems.push(`devices: at most ${DIRECTORY_MAX_DEVICES}`)
  const seen = new Set<string>()
  directory.devices.forEach((device, i) => {
    const at = `devices/${i}`
    if (typeof device.device_id !== 'string' || !Value.Check(Uuid, device.device_id))
      problems.push(`${at}/device_id: must be a canonical UUID (lowercase, hyphenated)`)
    else if (seen.has(device.device_id)) problems.push(`${at}/device_id: ${device.device_id} is listed twice`)
    else seen.add(device.device_id)
    if (!isDeviceKey(device.public_key)) {
      problems.push(`${at}/public_key: must be 1 to ${DEVICE_KEY_MAX_BYTES} bytes (a Uint8Array)`)
    }
    if (device.encryption_key !== undefined && !isDeviceKey(device.encryption_key)) {
      problems.push(`${at}/encryption_key: must be 1 to ${DEVICE_KEY_MAX_BYTES} bytes (a Uint8Array) when given`)
    }
    if (device.name !== undefined && (typeof device.name !== 'string' || device.name.trim().length === 0 || device.name.length > DEVICE_NAME_MAX)) {
      problems.push(`${at}/name: must be 1 to ${DEVICE_NAME_MAX} characters`)
    }
    if (device.added_at !== undefined && !isTimestamp(device.added_at))
      problems.push(`${at}/added_at: must be an RFC 3339 date-time, like 2026-03-01T14:02:11Z`)
    const unknown = Object.keys(device).filter((key) => !DEVICE_FIELDS.includes(key))
    if (unknown.length > 0) problems.push(`${at}: unknown ${unknown.join(', ')}`)
  })
  return problems
}

function bodyOf(directory: DeviceDirectory): Uint8Array {
  return encodeCanonical({
    directory_version: directory.version,
    devices: directory.devices.map((d) => ({
      device_id: d.device_id,
      public_key: d.public_key,
      ...(d.encryption_key === undefined ? {} : { encryption_key: d.encryption_key }),
      ...(d.name === undefined ? {} : { name: d.name }),
      ...(d.added_at === undefined ? {} : { added_at: d.added_at }),
    })),
  })
}

/**
 * The bytes to publish with `CofferClient.publishDirectory`: the directory checked, encoded
 * and signed. Throws CofferInputError for what the server or a reader would refuse.
 */
export async function signDirectory(identity: Signer, directory: DeviceDirectory): Promise<Uint8Array> {
  refuseIf('device directory', directoryProblems(directory))
  const body = bodyOf(directory)
  const signed = encodeCanonical({ directory_version: directory.version, body, sig: await identity.sign(contextSigningBytes(DIRECTORY_CONTEXT, body)) })
  refuseIf('device directory', signed.length > DIRECTORY_MAX_BYTES ? [`${signed.length} bytes encoded, at most ${DIRECTORY_MAX_BYTES}`] : [])
  return signed
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
}

/**
 * Reads a fetched directory (`CofferClient.fetchDirectory(userId).bytes`) and checks it was
 * signed by `publicKey`, the account's identity key. Throws CofferInputError otherwise.
 */
export function readDirectory(bytes: Uint8Array, publicKey: Uint8Array): DeviceDirectory {
  let outer: unknown
  let body: unknown
  try {
    outer = decodeCanonical(bytes)
    if (!isRecord(outer) || !(outer.body instanceof Uint8Array)) throw new Error('no body')
    body = decodeCanonical(outer.body)
  } catch {
    throw new CofferInputError('device directory', ['not a signed directory in the SDK layout (canonical CBOR {directory_version, body, sig})'])
  }
  if (
    !isRecord(outer) ||
    !(outer.sig instanceof Uint8Array) ||
    !(outer.body instanceof Uint8Array) ||
    !hybridVerify(publicKey, contextSigningBytes(DIRECTORY_CONTEXT, outer.body), outer.sig)
  ) {
    throw new CofferInputError('device directory', ['the signature does not verify under this identity key'])
  }
  if (!isRecord(body) || body.directory_version !== outer.directory_version || !Array.isArray(body.devices)) {
    throw new CofferInputError('device directory', ['the signed body does not carry the published directory_version and a device list'])
  }
  const directory: DeviceDirectory = { version: body.directory_version as number, devices: body.devices as DirectoryDevice[] }
  refuseIf('device directory', directoryProblems(directory))
  return directory
}
