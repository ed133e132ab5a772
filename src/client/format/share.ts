// Sharing an album, client format v1 (docs/client-format.md, "Sharing an album"; decision 0067):
// the album keys an owner seals for a member's devices, signed by the owner's identity key, and
// the safety number two people compare to know each other's identity keys. The server stores
// the sealed bytes as an invitation and hands them over byte for byte; it can neither open them
// nor, without the signature failing, swap a recipient's part or the album they are for.
// Browser-safe: WebCrypto through primitives.ts, @noble/post-quantum through xwing.ts.
import { sha512 } from '@noble/hashes/sha2.js'
import { decodeCanonical, encodeCanonical } from '../../codec/cbor.ts'
import { contextSigningBytes, HYBRID_PUBLIC_KEY_BYTES } from '../../contract/signing.ts'
import { concatBytes, equalBytes, utf8 } from '../../sdk/bytes.ts'
import type { Signer } from '../../sdk/directory.ts'
import type { HybridVerifier } from '../../sdk/hybrid.ts'
import { hybridVerify } from '../../sdk/hybrid.ts'
import { digestSha256, randomBytes, u32be, uuidBytes } from './bytes.ts'
import { ClientFormatError } from './errors.ts'
import { GCM_NONCE_BYTES, GCM_TAG_BYTES, hkdfSha256, KEY_BYTES } from './keys.ts'
import { primitives } from './primitives.ts'
import { XWING_CIPHERTEXT_BYTES, XWING_PUBLIC_KEY_BYTES, xwingDecapsulate, xwingEncapsulate } from './xwing.ts'

export const SHARE_VERSION = 1
/** The signature's context: hybrid signature over UTF-8 "coffer/share/v1" || 0x00 || body. */
export const SHARE_CONTEXT = 'coffer/share/v1'
export const SHARE_KEYS_INFO = 'coffer/v1/share/keys'
/** Epochs one share carries at most (an album's keys from its first epoch to its current one). */
export const SHARE_EPOCHS_MAX = 64
/** Recipient devices one share carries at most (fits the server's 64 KiB invitation). */
export const SHARE_RECIPIENTS_MAX = 40
export const SHARE_ROLES = ['viewer', 'contributor'] as const
export type ShareRole = (typeof SHARE_ROLES)[number]

/** A device of the member, as its signed directory lists it. */
export interface ShareRecipient {
  readonly deviceId: string
  /** Its X-Wing public key (1216 bytes). */
  readonly encryptionKey: Uint8Array
}

/** What a share says, besides the sealed keys. */
export interface ShareFacts {
  readonly albumId: string
  /** The owner's user id: the account whose identity key signs. */
  readonly ownerId: string
  /** The member's user id. */
  readonly memberId: string
  readonly role: ShareRole
  /** SHA-256 of the member's identity public key as the owner pinned it: the member checks it is its own. */
  readonly memberKeyHash: Uint8Array
  /** The first and last epoch (amk_version) whose keys are sealed: every one between them. */
  readonly firstEpoch: number
  readonly lastEpoch: number
}

/** A share opened: its facts, and the album key of each epoch. */
export interface OpenedShare extends ShareFacts {
  readonly albumKeys: ReadonlyMap<number, Uint8Array>
}

const malformed = (what: string): ClientFormatError => new ClientFormatError('malformed', `share: ${what}`)
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The associated data of one device's sealed keys: UTF-8 "coffer/v1/share/keys" || 0x00 || album id || member id || device id (16 each) || first epoch || last epoch (u32). */
export function shareKeysAad(facts: Pick<ShareFacts, 'albumId' | 'memberId' | 'firstEpoch' | 'lastEpoch'>, deviceId: string): Uint8Array {
  return concatBytes(
    utf8(SHARE_KEYS_INFO),
    new Uint8Array([0]),
    uuidBytes(facts.albumId),
    uuidBytes(facts.memberId),
    uuidBytes(deviceId),
    u32be(facts.firstEpoch),
    u32be(facts.lastEpoch),
  )
}

/** The key sealing one device's part: HKDF-SHA256(IKM = X-Wing shared secret, salt = empty, info = the part's associated data). */
function partKey(sharedSecret: Uint8Array, aad: Uint8Array): Promise<Uint8Array> {
  return hkdfSha256(sharedSecret, new Uint8Array(0), aad, KEY_BYTES)
}

function checkFacts(facts: ShareFacts): void {
  for (const [name, id] of [
    ['album id', facts.albumId],
    ['owner id', facts.ownerId],
    ['member id', facts.memberId],
  ] as const)
    if (!UUID.test(id)) throw new TypeError(`${name}: a canonical UUID`)
  if (!SHARE_ROLES.includes(facts.role)) throw new TypeError(`role: one of ${SHARE_ROLES.join(', ')}`)
  if (facts.memberKeyHash.length !== 32) throw new TypeError('member key hash: 32 bytes')
  const { firstEpoch, lastEpoch } = facts
  if (!Number.isInteger(firstEpoch) || firstEpoch < 1 || !Number.isInteger(lastEpoch) || lastEpoch < firstEpoch || lastEpoch > 0xffff_ffff)
    throw new TypeError('epochs: whole numbers, 1 <= first <= last < 2^32')
  if (lastEpoch - firstEpoch + 1 > SHARE_EPOCHS_MAX) throw new TypeError(`epochs: at most ${SHARE_EPOCHS_MAX}`)
}

export interface SealShare extends ShareFacts {
  /** The album key of each epoch from firstEpoch to lastEpoch. */
  readonly albumKeys: ReadonlyMap<number, Uint8Array>
  /** The member's devices, from its directory (verified under the identity key the owner pinned). */
  readonly recipients: readonly ShareRecipient[]
  /** For test vectors only: each recipient's encapsulation randomness (64 bytes) and nonce (12), by device id. */
  readonly fixed?: ReadonlyMap<string, { readonly randomness: Uint8Array; readonly nonce: Uint8Array }>
}

/**
 * The share's bytes (what an invitation carries): canonical CBOR {"body": bstr, "sig": bstr},
 * body the canonical CBOR of the facts and one sealed part per recipient device, sig the
 * owner's hybrid signature over "coffer/share/v1" || 0x00 || body.
 */
export async function sealShare(owner: Signer, share: SealShare): Promise<Uint8Array> {
  checkFacts(share)
  if (share.recipients.length === 0 || share.recipients.length > SHARE_RECIPIENTS_MAX) throw new TypeError(`recipients: 1 to ${SHARE_RECIPIENTS_MAX} devices`)
  const keys: Uint8Array[] = []
  for (let epoch = share.firstEpoch; epoch <= share.lastEpoch; epoch++) {
    const key = share.albumKeys.get(epoch)
    if (key?.length !== KEY_BYTES) throw new TypeError(`album key of epoch ${epoch}: ${KEY_BYTES} bytes`)
    keys.push(key)
  }
  const plaintext = concatBytes(...keys)
  const recipients = []
  for (const recipient of [...share.recipients].sort((a, b) => a.deviceId.localeCompare(b.deviceId))) {
    if (!UUID.test(recipient.deviceId)) throw new TypeError('recipient device id: a canonical UUID')
    if (recipient.encryptionKey.length !== XWING_PUBLIC_KEY_BYTES) throw new TypeError(`recipient encryption key: ${XWING_PUBLIC_KEY_BYTES} bytes`)
    const fixed = share.fixed?.get(recipient.deviceId)
    const { cipherText, sharedSecret } = xwingEncapsulate(recipient.encryptionKey, fixed?.randomness)
    const aad = shareKeysAad(share, recipient.deviceId)
    const nonce = fixed?.nonce ?? randomBytes(GCM_NONCE_BYTES)
    const sealed = await (await primitives().aesGcm(await partKey(sharedSecret, aad))).seal(nonce, aad, plaintext)
    recipients.push({ device_id: recipient.deviceId, encapsulation: cipherText, sealed: concatBytes(nonce, sealed) })
  }
  const body = encodeCanonical({
    v: SHARE_VERSION,
    album_id: share.albumId,
    owner: share.ownerId,
    member: share.memberId,
    role: share.role,
    member_key: share.memberKeyHash,
    epochs: [share.firstEpoch, share.lastEpoch],
    recipients,
  })
  return encodeCanonical({ body, sig: await owner.sign(contextSigningBytes(SHARE_CONTEXT, body)) })
}

interface ShareBody {
  readonly facts: ShareFacts
  readonly recipients: ReadonlyMap<string, { readonly encapsulation: Uint8Array; readonly sealed: Uint8Array }>
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
export const exactly = (value: unknown, keys: string): value is Record<string, unknown> => isMap(value) && Object.keys(value).sort().join() === keys

/** The share's signed body, checked to be exactly a v1 share's shape (ClientFormatError 'malformed'); its signature not yet. */
function readBody(body: Uint8Array): ShareBody {
  let value: unknown
  try {
    value = decodeCanonical(body)
  } catch {
    throw malformed('the body is not canonical CBOR')
  }
  if (!exactly(value, 'album_id,epochs,member,member_key,owner,recipients,role,v')) throw malformed('the body is not a v1 share')
  if (value.v !== SHARE_VERSION) throw malformed(`unknown version ${JSON.stringify(value.v)}`)
  const epochs = value.epochs
  const facts = {
    albumId: value.album_id,
    ownerId: value.owner,
    memberId: value.member,
    role: value.role,
    memberKeyHash: value.member_key,
    firstEpoch: Array.isArray(epochs) ? epochs[0] : undefined,
    lastEpoch: Array.isArray(epochs) ? epochs[1] : undefined,
  } as ShareFacts
  try {
    if (!Array.isArray(epochs) || epochs.length !== 2 || !(facts.memberKeyHash instanceof Uint8Array)) throw new TypeError('shape')
    for (const id of [facts.albumId, facts.ownerId, facts.memberId]) if (typeof id !== 'string') throw new TypeError('ids')
    checkFacts(facts)
  } catch (error) {
    throw malformed(`its facts: ${(error as Error).message}`)
  }
  if (!Array.isArray(value.recipients) || value.recipients.length === 0 || value.recipients.length > SHARE_RECIPIENTS_MAX) throw malformed('recipients')
  const plainBytes = (facts.lastEpoch - facts.firstEpoch + 1) * KEY_BYTES
  const recipients = new Map<string, { encapsulation: Uint8Array; sealed: Uint8Array }>()
  for (const recipient of value.recipients as unknown[]) {
    if (
      !exactly(recipient, 'device_id,encapsulation,sealed') ||
      typeof recipient.device_id !== 'string' ||
      !UUID.test(recipient.device_id) ||
      !(recipient.encapsulation instanceof Uint8Array) ||
      recipient.encapsulation.length !== XWING_CIPHERTEXT_BYTES ||
      !(recipient.sealed instanceof Uint8Array) ||
      recipient.sealed.length !== GCM_NONCE_BYTES + plainBytes + GCM_TAG_BYTES ||
      recipients.has(recipient.device_id)
    )
      throw malformed('a recipient is not {device_id, encapsulation, sealed} of its sizes, or comes twice')
    recipients.set(recipient.device_id, { encapsulation: recipient.encapsulation, sealed: recipient.sealed })
  }
  return { facts, recipients }
}

/** The facts of a share, without opening it or checking its signature (e.g. to find the owner whose key checks it). */
export function shareFacts(bytes: Uint8Array): ShareFacts {
  return readBody(outerOf(bytes).body).facts
}

function outerOf(bytes: Uint8Array): { body: Uint8Array; sig: Uint8Array } {
  let outer: unknown
  try {
    outer = decodeCanonical(bytes)
  } catch {
    throw malformed('not canonical CBOR')
  }
  if (!exactly(outer, 'body,sig') || !(outer.body instanceof Uint8Array) || !(outer.sig instanceof Uint8Array)) throw malformed('not {body, sig}')
  return { body: outer.body, sig: outer.sig }
}

export interface OpenShare {
  /** The owner's identity public key, as the member pinned it (from the owner's signed directory). */
  readonly ownerIdentityKey: Uint8Array
  /** This account's user id and identity public key: the share must name them. */
  readonly memberId: string
  readonly memberIdentityKey: Uint8Array
  /** This device: its id and its X-Wing secret (the 32-byte seed). */
  readonly deviceId: string
  readonly xwingSecret: Uint8Array
  readonly verify?: HybridVerifier
}

/**
 * Opens a share on one of the member's devices. ClientFormatError 'malformed' for bytes that are
 * not a v1 share; 'authentication' when the owner's key does not verify it, it names another
 * member or another identity key of the member, this device has no part in it (it joined after
 * the share was made: the member's own keyring serves it then), or its part does not open.
 */
export async function openShare(bytes: Uint8Array, open: OpenShare): Promise<OpenedShare> {
  const { body, sig } = outerOf(bytes)
  const { facts, recipients } = readBody(body)
  if (open.ownerIdentityKey.length !== HYBRID_PUBLIC_KEY_BYTES) throw new TypeError(`owner identity key: ${HYBRID_PUBLIC_KEY_BYTES} bytes`)
  const verify = open.verify ?? hybridVerify
  if (!(await verify(open.ownerIdentityKey, contextSigningBytes(SHARE_CONTEXT, body), sig)))
    throw new ClientFormatError('authentication', "share: the signature does not verify under the owner's identity key")
  if (facts.memberId !== open.memberId || !equalBytes(facts.memberKeyHash, await digestSha256(open.memberIdentityKey)))
    throw new ClientFormatError('authentication', 'share: it names another member, or another identity key of this one')
  const part = recipients.get(open.deviceId)
  if (part === undefined) throw new ClientFormatError('authentication', 'share: it has no part for this device (it was made before the device joined)')
  const aad = shareKeysAad(facts, open.deviceId)
  const sharedSecret = xwingDecapsulate(part.encapsulation, open.xwingSecret)
  const plain = await (await primitives().aesGcm(await partKey(sharedSecret, aad))).open(
    part.sealed.subarray(0, GCM_NONCE_BYTES),
    aad,
    part.sealed.subarray(GCM_NONCE_BYTES),
  )
  if (plain === null) throw new ClientFormatError('authentication', "share: this device's part does not open with its key")
  const albumKeys = new Map<number, Uint8Array>()
  for (let epoch = facts.firstEpoch; epoch <= facts.lastEpoch; epoch++) {
    const at = (epoch - facts.firstEpoch) * KEY_BYTES
    albumKeys.set(epoch, plain.slice(at, at + KEY_BYTES))
  }
  return { ...facts, albumKeys }
}

/** Iterations of SHA-512 per fingerprint half (Signal's safety numbers use 5200). */
export const SAFETY_ITERATIONS = 5200

/**
 * One person's half of a safety number: 30 digits from their user id and identity key.
 * h0 = SHA-512(0x00 0x00 || identity key || user id (16)); h(i+1) = SHA-512(h(i) || identity key);
 * the first 30 bytes of h(5200) in six 5-byte big-endian numbers, each mod 100000 as 5 digits.
 */
export function safetyHalf(userId: string, identityKey: Uint8Array): string {
  if (identityKey.length !== HYBRID_PUBLIC_KEY_BYTES) throw new TypeError(`identity key: ${HYBRID_PUBLIC_KEY_BYTES} bytes`)
  let hash = sha512(concatBytes(new Uint8Array([0, 0]), identityKey, uuidBytes(userId)))
  for (let i = 0; i < SAFETY_ITERATIONS; i++) hash = sha512(concatBytes(hash, identityKey))
  let digits = ''
  for (let chunk = 0; chunk < 6; chunk++) {
    let value = 0
    for (const byte of hash.subarray(chunk * 5, chunk * 5 + 5)) value = value * 256 + byte
    digits += String(value % 100_000).padStart(5, '0')
  }
  return digits
}

/**
 * The safety number two people compare (Signal's construction): both halves, the smaller first,
 * 60 digits shown in twelve groups of five. The same on both sides; another identity key on
 * either side changes it.
 */
export function safetyNumber(
  a: { readonly userId: string; readonly identityKey: Uint8Array },
  b: { readonly userId: string; readonly identityKey: Uint8Array },
): string {
  const halves = [safetyHalf(a.userId, a.identityKey), safetyHalf(b.userId, b.identityKey)].sort()
  return halves.join('').match(/\d{5}/g)!.join(' ')
}

export const KEYRING_INFO = 'coffer/v1/keyring'
export const KEYRING_VERSION = 0x01

/** The associated data of a member's keyring: UTF-8 "coffer/v1/keyring" || 0x00 || album id (16) || owner id (16). */
export function keyringAad(albumId: string, ownerId: string): Uint8Array {
  return concatBytes(utf8(KEYRING_INFO), new Uint8Array([0]), uuidBytes(albumId), uuidBytes(ownerId))
}

/** The keyring key: HKDF-SHA256(IKM = the member's master key, salt = empty, info = "coffer/v1/keyring", L = 32). */
function keyringKey(masterKey: Uint8Array): Promise<Uint8Array> {
  return hkdfSha256(masterKey, new Uint8Array(0), utf8(KEYRING_INFO), KEY_BYTES)
}

/**
 * A member's keyring of a shared album: the album keys it received, sealed under its own master
 * key, for its other devices (docs/client-format.md, "Sharing an album").
 * 0x01 || nonce (12) || AES-256-GCM(keyring key, nonce, aad, canonical CBOR {"epochs": [first, last], "keys": bstr 32 per epoch}).
 */
export async function sealKeyring(
  masterKey: Uint8Array,
  album: { readonly albumId: string; readonly ownerId: string },
  albumKeys: ReadonlyMap<number, Uint8Array>,
  nonce: Uint8Array = randomBytes(GCM_NONCE_BYTES),
): Promise<Uint8Array> {
  const epochs = [...albumKeys.keys()].sort((a, b) => a - b)
  const [first, last] = [epochs[0], epochs.at(-1)]
  if (first === undefined || last === undefined || last - first + 1 !== epochs.length || epochs.length > SHARE_EPOCHS_MAX)
    throw new TypeError(`album keys: consecutive epochs, 1 to ${SHARE_EPOCHS_MAX}`)
  const plain = encodeCanonical({ epochs: [first, last], keys: concatBytes(...epochs.map((epoch) => albumKeys.get(epoch)!)) })
  const aad = keyringAad(album.albumId, album.ownerId)
  const sealed = await (await primitives().aesGcm(await keyringKey(masterKey))).seal(nonce, aad, plain)
  return concatBytes(new Uint8Array([KEYRING_VERSION]), nonce, sealed)
}

/** The album keys of a keyring; ClientFormatError 'authentication' when it was not sealed under this master key for this album and owner. */
export async function openKeyring(
  masterKey: Uint8Array,
  album: { readonly albumId: string; readonly ownerId: string },
  bytes: Uint8Array,
): Promise<Map<number, Uint8Array>> {
  if (bytes[0] !== KEYRING_VERSION || bytes.length < 1 + GCM_NONCE_BYTES + GCM_TAG_BYTES) throw malformed('keyring: not version 1')
  const aad = keyringAad(album.albumId, album.ownerId)
  const plain = await (await primitives().aesGcm(await keyringKey(masterKey))).open(
    bytes.subarray(1, 1 + GCM_NONCE_BYTES),
    aad,
    bytes.subarray(1 + GCM_NONCE_BYTES),
  )
  if (plain === null) throw new ClientFormatError('authentication', 'keyring: it does not open under this account’s key for this album')
  const value = decodeCanonical(plain)
  if (!exactly(value, 'epochs,keys') || !(value.keys instanceof Uint8Array)) throw malformed('keyring: not {epochs, keys}')
  const epochs = value.epochs
  if (!Array.isArray(epochs) || epochs.length !== 2 || !epochs.every((epoch) => Number.isInteger(epoch))) throw malformed('keyring: epochs')
  const [first, last] = epochs as [number, number]
  if (first < 1 || last < first || value.keys.length !== (last - first + 1) * KEY_BYTES) throw malformed('keyring: epochs and keys disagree')
  const keys = new Map<number, Uint8Array>()
  for (let epoch = first; epoch <= last; epoch++) keys.set(epoch, value.keys.slice((epoch - first) * KEY_BYTES, (epoch - first + 1) * KEY_BYTES))
  return keys
}
