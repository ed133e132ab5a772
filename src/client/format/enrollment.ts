// Device enrollment, client format v1 (docs/client-format.md, "Device enrollment"; decision
// 0019): the payloads two devices of one account exchange through the server's enrollment
// relay, and what both derive from them. The new device (B, the enrollee) sends its X-Wing key
// and a commitment to a nonce; the enrolled device (A, the initiator) encapsulates a shared
// secret to that key and sends its own nonce; B reveals its nonce. Both hash the channel id and
// the three payloads' exact bytes into the transcript T, and derive from the shared secret and T
// the short authentication string (SAS) the person compares, B's confirmation MAC, and the key
// that seals the account's keys for B. Browser-safe: WebCrypto, @noble/post-quantum through
// xwing.ts, canonical CBOR through codec/.
import { decodeCanonical, encodeCanonical } from '../../codec/cbor.ts'
import { HYBRID_PUBLIC_KEY_BYTES, HYBRID_SEED_BYTES } from '../../contract/signing.ts'
import { concatBytes, equalBytes, utf8 } from '../../sdk/bytes.ts'
import { digestSha256, own, randomBytes, u32be } from './bytes.ts'
import { ClientFormatError } from './errors.ts'
import { GCM_NONCE_BYTES, GCM_TAG_BYTES, hkdfSha256, KEY_BYTES } from './keys.ts'
import { primitives } from './primitives.ts'
import { decodeHandOver, encodeHandOver, type AlbumHandOver } from './album-chain.ts'
import { XWING_CIPHERTEXT_BYTES, XWING_PUBLIC_KEY_BYTES } from './xwing.ts'

export const ENROLLMENT_VERSION = 1
export const ENROLLMENT_NONCE_BYTES = 32
export const CHANNEL_ID_BYTES = 32
export const DEVICE_NAME_MAX = 100
/** Longest relay text a v1 payload can be (the largest, `offer`, is about 4.3 KiB of base64url). */
export const PAYLOAD_TEXT_MAX = 8192
export const ABORT_REASONS = ['declined', 'invalid', 'stopped'] as const
export type AbortReason = (typeof ABORT_REASONS)[number]

export const TRANSCRIPT_CONTEXT = 'coffer/v1/enroll/transcript'
export const SAS_INFO = 'coffer/v1/enroll/sas'
export const CONFIRM_INFO = 'coffer/v1/enroll/confirm'
export const KEYS_INFO = 'coffer/v1/enroll/keys'
export const HISTORY_INFO = 'coffer/v1/enroll/history'
/** Sealed hand-over bytes one `history` payload carries at most: its relay text stays under PAYLOAD_TEXT_MAX. */
export const HISTORY_PART_BYTES = 6000
/** `history` payloads at most (a relay mailbox holds 64). */
export const HISTORY_PARTS_MAX = 48
/** master key (32) || identity seeds (64). */
export const ENROLLED_KEYS_BYTES = KEY_BYTES + HYBRID_SEED_BYTES
/** AES-256-GCM ciphertext of ENROLLED_KEYS_BYTES and its tag: 112 bytes. */
export const SEALED_KEYS_BYTES = ENROLLED_KEYS_BYTES + GCM_TAG_BYTES
export const CONFIRM_MAC_BYTES = 32

/** B -> A, first: B's device and its new X-Wing key, and SHA-256(nonce_B). */
export interface Hello {
  readonly type: 'hello'
  readonly device_id: string
  readonly device_name: string
  /** B's X-Wing public key (1216 bytes): its device encryption key. */
  readonly encryption_key: Uint8Array
  /** SHA-256(nonce_B), 32 bytes. */
  readonly commitment: Uint8Array
}

/** A -> B: the X-Wing ciphertext to B's key, the account's identity key and user id, nonce_A. */
export interface Offer {
  readonly type: 'offer'
  readonly ciphertext: Uint8Array
  readonly identity_key: Uint8Array
  readonly user_id: string
  readonly nonce: Uint8Array
}

/** B -> A: nonce_B, which must hash to the hello's commitment. */
export interface Reveal {
  readonly type: 'reveal'
  readonly nonce: Uint8Array
}

/** B -> A, once the person said the codes match: HMAC-SHA256(confirm key, T). */
export interface Confirm {
  readonly type: 'confirm'
  readonly mac: Uint8Array
}

/** A -> B, last: master key || identity seeds under AES-256-GCM with the keys key, aad T. */
export interface Keys {
  readonly type: 'keys'
  readonly nonce: Uint8Array
  readonly sealed: Uint8Array
}

/** B -> A, last: B checked and kept the keys (A closes the channel only after it, which drops the mailboxes). */
export interface Done {
  readonly type: 'done'
}

/**
 * A -> B after B's `done`, when A hands over its album history: part `part` (from 0) of `parts`.
 * The parts' `data` joined is nonce (12) || AES-256-GCM(derive("coffer/v1/enroll/history"), aad T, the hand-over).
 */
export interface History {
  readonly type: 'history'
  readonly part: number
  readonly parts: number
  readonly data: Uint8Array
}

/** B -> A, last: B kept the history (A closes the channel after it, or after a few seconds without it). */
export interface Kept {
  readonly type: 'kept'
}

/** Either way: stop, nothing is kept. */
export interface Abort {
  readonly type: 'abort'
  readonly reason: AbortReason
}

export type EnrollmentPayload = Hello | Offer | Reveal | Confirm | Keys | Done | History | Kept | Abort
export type PayloadType = EnrollmentPayload['type']

type FieldKind = { readonly bytes: number } | { readonly upTo: number } | { readonly below: number } | 'uuid' | 'name' | 'reason'

/** Each type's fields beside `version` and `type`: exactly these, no others. */
const FIELDS: { readonly [T in PayloadType]: Readonly<Record<string, FieldKind>> } = {
  hello: { device_id: 'uuid', device_name: 'name', encryption_key: { bytes: XWING_PUBLIC_KEY_BYTES }, commitment: { bytes: 32 } },
  offer: {
    ciphertext: { bytes: XWING_CIPHERTEXT_BYTES },
    identity_key: { bytes: HYBRID_PUBLIC_KEY_BYTES },
    user_id: 'uuid',
    nonce: { bytes: ENROLLMENT_NONCE_BYTES },
  },
  reveal: { nonce: { bytes: ENROLLMENT_NONCE_BYTES } },
  confirm: { mac: { bytes: CONFIRM_MAC_BYTES } },
  keys: { nonce: { bytes: GCM_NONCE_BYTES }, sealed: { bytes: SEALED_KEYS_BYTES } },
  done: {},
  history: { part: { below: HISTORY_PARTS_MAX }, parts: { below: HISTORY_PARTS_MAX + 1 }, data: { upTo: HISTORY_PART_BYTES } },
  kept: {},
  abort: { reason: 'reason' },
}

/** A canonical UUID: lowercase, hyphenated (as the device directory requires). */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const malformed = (what: string): ClientFormatError => new ClientFormatError('malformed', `enrollment payload: ${what}`)

function fieldProblem(kind: FieldKind, value: unknown): string | null {
  if (kind === 'uuid') return typeof value === 'string' && CANONICAL_UUID.test(value) ? null : 'a canonical UUID'
  if (kind === 'name')
    return typeof value === 'string' && value.trim().length > 0 && value.length <= DEVICE_NAME_MAX ? null : `1 to ${DEVICE_NAME_MAX} characters`
  if (kind === 'reason') return typeof value === 'string' && (ABORT_REASONS as readonly string[]).includes(value) ? null : `one of ${ABORT_REASONS.join(', ')}`
  if ('below' in kind)
    return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) < kind.below ? null : `a whole number below ${kind.below}`
  if ('upTo' in kind) return value instanceof Uint8Array && value.length >= 1 && value.length <= kind.upTo ? null : `1 to ${kind.upTo} bytes`
  return value instanceof Uint8Array && value.length === kind.bytes ? null : `${kind.bytes} bytes`
}

/** The payload's canonical CBOR bytes: {version: 1, type, ...fields}. Throws TypeError for a field out of bounds. */
export function encodePayload(payload: EnrollmentPayload): Uint8Array {
  const fields = FIELDS[payload.type]
  const map: Record<string, unknown> = { version: ENROLLMENT_VERSION, type: payload.type }
  for (const [name, kind] of Object.entries(fields)) {
    const value = (payload as unknown as Record<string, unknown>)[name]
    const problem = fieldProblem(kind, value)
    if (problem !== null) throw new TypeError(`${payload.type}.${name}: expected ${problem}`)
    map[name] = value
  }
  return encodeCanonical(map)
}

/** The payload of canonical CBOR bytes; ClientFormatError 'malformed' for anything that is not exactly a v1 payload. */
export function decodePayload(bytes: Uint8Array): EnrollmentPayload {
  let value: unknown
  try {
    value = decodeCanonical(bytes)
  } catch {
    throw malformed('not canonical CBOR')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Uint8Array) throw malformed('not a map')
  const map = value as Record<string, unknown>
  if (map.version !== ENROLLMENT_VERSION) throw malformed(`unknown version ${JSON.stringify(map.version)}`)
  if (typeof map.type !== 'string' || !Object.hasOwn(FIELDS, map.type)) throw malformed('unknown type')
  const type = map.type as PayloadType
  const fields = FIELDS[type]
  const extra = Object.keys(map).filter((key) => key !== 'version' && key !== 'type' && !Object.hasOwn(fields, key))
  if (extra.length > 0) throw malformed(`${type}: unknown field ${extra.join(', ')}`)
  for (const [name, kind] of Object.entries(fields)) {
    const problem = fieldProblem(kind, map[name])
    if (problem !== null) throw malformed(`${type}.${name}: expected ${problem}`)
  }
  const { version: _, ...payload } = map
  return payload as unknown as EnrollmentPayload
}

/** Base64url without padding: how a payload travels in the relay (RelayRequest.payload). */
export function toBase64Url(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}

export function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw malformed('not base64url')
  const binary = atob(
    text
      .replaceAll('-', '+')
      .replaceAll('_', '/')
      .padEnd(Math.ceil(text.length / 4) * 4, '='),
  )
  return Uint8Array.from(binary, (c) => c.charCodeAt(0))
}

/** The relay text of a payload. */
export function payloadText(bytes: Uint8Array): string {
  return toBase64Url(bytes)
}

/** The bytes of a relay text, bounded before decoding (PAYLOAD_TEXT_MAX). */
export function payloadBytes(text: string): Uint8Array {
  if (typeof text !== 'string' || text.length > PAYLOAD_TEXT_MAX) throw malformed(`longer than ${PAYLOAD_TEXT_MAX} characters`)
  return fromBase64Url(text)
}

/** The 32 bytes of a channel id (the pairing code): base64url without padding, 43 characters. */
export function channelIdBytes(channelId: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]{43}$/.test(channelId)) throw malformed('a channel id is 43 base64url characters (32 bytes)')
  return fromBase64Url(channelId)
}

/** 32 random bytes (nonce_A, nonce_B). */
export function generateNonce(): Uint8Array {
  return randomBytes(ENROLLMENT_NONCE_BYTES)
}

/** commit_B = SHA-256(nonce_B). */
export async function commitment(nonce: Uint8Array): Promise<Uint8Array> {
  if (nonce.length !== ENROLLMENT_NONCE_BYTES) throw new TypeError(`nonce: expected ${ENROLLMENT_NONCE_BYTES} bytes`)
  return digestSha256(nonce)
}

/** True when `nonce` is what `commit` committed to. */
export async function revealMatches(commit: Uint8Array, nonce: Uint8Array): Promise<boolean> {
  return nonce.length === ENROLLMENT_NONCE_BYTES && equalBytes(await digestSha256(nonce), commit)
}

/**
 * T = SHA-256(UTF-8 "coffer/v1/enroll/transcript" || 0x00 || channel id (32)
 *             || u32be(len hello) || hello || u32be(len offer) || offer || u32be(len reveal) || reveal).
 */
export async function transcriptHash(channelId: string, hello: Uint8Array, offer: Uint8Array, reveal: Uint8Array): Promise<Uint8Array> {
  const parts = [utf8(TRANSCRIPT_CONTEXT), new Uint8Array([0]), channelIdBytes(channelId)]
  for (const payload of [hello, offer, reveal]) parts.push(u32be(payload.length), payload)
  return digestSha256(concatBytes(...parts))
}

/** HKDF-SHA256(IKM = ss, salt = empty, info = UTF-8 label || 0x00 || T, length). */
async function derive(sharedSecret: Uint8Array, label: string, transcript: Uint8Array, length: number): Promise<Uint8Array> {
  if (sharedSecret.length !== KEY_BYTES) throw new TypeError(`shared secret: expected ${KEY_BYTES} bytes`)
  if (transcript.length !== 32) throw new TypeError('transcript hash: expected 32 bytes')
  return hkdfSha256(sharedSecret, new Uint8Array(0), concatBytes(utf8(label), new Uint8Array([0]), transcript), length)
}

/** The SAS: the first 4 bytes of HKDF(ss, "coffer/v1/enroll/sas", T) as u32be mod 10^6, six digits shown "482 913". */
export async function shortAuthenticationString(sharedSecret: Uint8Array, transcript: Uint8Array): Promise<string> {
  const bytes = await derive(sharedSecret, SAS_INFO, transcript, 4)
  const digits = String(new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0) % 1_000_000).padStart(6, '0')
  return `${digits.slice(0, 3)} ${digits.slice(3)}`
}

async function hmacKey(raw: Uint8Array) {
  return globalThis.crypto.subtle.importKey('raw', own(raw), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])
}

/** B's confirmation: HMAC-SHA256(key = HKDF(ss, "coffer/v1/enroll/confirm", T), message = T). */
export async function confirmMac(sharedSecret: Uint8Array, transcript: Uint8Array): Promise<Uint8Array> {
  const key = await hmacKey(await derive(sharedSecret, CONFIRM_INFO, transcript, KEY_BYTES))
  return new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, own(transcript)))
}

/** True when `mac` is B's confirmation of this transcript under this shared secret (constant time, WebCrypto's verify). */
export async function confirmMacValid(sharedSecret: Uint8Array, transcript: Uint8Array, mac: Uint8Array): Promise<boolean> {
  if (mac.length !== CONFIRM_MAC_BYTES) return false
  const key = await hmacKey(await derive(sharedSecret, CONFIRM_INFO, transcript, KEY_BYTES))
  return globalThis.crypto.subtle.verify('HMAC', key, own(mac), own(transcript))
}

/** What `keys` carries: what setup saves besides the device's own X-Wing seed. */
export interface EnrolledKeys {
  readonly masterKey: Uint8Array
  /** The identity key's 64 seed bytes (IdentityKey.exportSeeds()). */
  readonly identitySeeds: Uint8Array
}

/** The `keys` payload: AES-256-GCM(HKDF(ss, "coffer/v1/enroll/keys", T), nonce, aad = T, master key || identity seeds). `nonce` for test vectors only. */
export async function sealKeys(
  sharedSecret: Uint8Array,
  transcript: Uint8Array,
  keys: EnrolledKeys,
  nonce: Uint8Array = randomBytes(GCM_NONCE_BYTES),
): Promise<Keys> {
  if (keys.masterKey.length !== KEY_BYTES) throw new TypeError(`master key: expected ${KEY_BYTES} bytes`)
  if (keys.identitySeeds.length !== HYBRID_SEED_BYTES) throw new TypeError(`identity seeds: expected ${HYBRID_SEED_BYTES} bytes`)
  if (nonce.length !== GCM_NONCE_BYTES) throw new TypeError(`nonce: expected ${GCM_NONCE_BYTES} bytes`)
  const cipher = await primitives().aesGcm(await derive(sharedSecret, KEYS_INFO, transcript, KEY_BYTES))
  return { type: 'keys', nonce, sealed: await cipher.seal(nonce, transcript, concatBytes(keys.masterKey, keys.identitySeeds)) }
}

/** The keys of a `keys` payload; ClientFormatError 'authentication' when it was not sealed under this shared secret for this transcript. */
export async function openKeys(sharedSecret: Uint8Array, transcript: Uint8Array, payload: Keys): Promise<EnrolledKeys> {
  const cipher = await primitives().aesGcm(await derive(sharedSecret, KEYS_INFO, transcript, KEY_BYTES))
  const plain = await cipher.open(payload.nonce, transcript, payload.sealed)
  if (plain === null)
    throw new ClientFormatError('authentication', 'enrollment keys fail to authenticate: another shared secret or transcript, or altered bytes')
  return { masterKey: plain.slice(0, KEY_BYTES), identitySeeds: plain.slice(KEY_BYTES) }
}

/**
 * The `history` payloads handing `albums` over (docs/client-format.md, "Handing over the album
 * history"): the hand-over sealed once under derive("coffer/v1/enroll/history"), aad T, and cut
 * into parts of HISTORY_PART_BYTES. RangeError when even without the writes it needs more than
 * HISTORY_PARTS_MAX parts (some thousands of albums). `nonce` for test vectors only.
 */
export async function sealHistory(
  sharedSecret: Uint8Array,
  transcript: Uint8Array,
  albums: AlbumHandOver,
  nonce: Uint8Array = randomBytes(GCM_NONCE_BYTES),
): Promise<History[]> {
  const most = HISTORY_PARTS_MAX * HISTORY_PART_BYTES - GCM_NONCE_BYTES - GCM_TAG_BYTES
  let plain = encodeHandOver(albums)
  // Too many writes not yet checked: the heads alone still catch every change to what was checked.
  if (plain.length > most) plain = encodeHandOver(new Map([...albums].map(([id, album]) => [id, { head: album.head, writes: [] }])))
  if (plain.length > most) throw new RangeError(`the album history is ${plain.length} bytes, more than a hand-over carries`)
  const cipher = await primitives().aesGcm(await derive(sharedSecret, HISTORY_INFO, transcript, KEY_BYTES))
  const data = concatBytes(nonce, await cipher.seal(nonce, transcript, plain))
  const parts = Math.ceil(data.length / HISTORY_PART_BYTES)
  return Array.from({ length: parts }, (_, part) => ({
    type: 'history' as const,
    part,
    parts,
    data: data.slice(part * HISTORY_PART_BYTES, (part + 1) * HISTORY_PART_BYTES),
  }))
}

/** The hand-over of `history` payloads received in order; ClientFormatError 'authentication' when they do not open, 'malformed' when what opens is not a hand-over. */
export async function openHistory(sharedSecret: Uint8Array, transcript: Uint8Array, parts: readonly History[]): Promise<AlbumHandOver> {
  if (parts.length === 0 || parts.some((payload, i) => payload.part !== i || payload.parts !== parts.length))
    throw malformed('history: parts missing or out of order')
  const data = concatBytes(...parts.map((payload) => payload.data))
  const cipher = await primitives().aesGcm(await derive(sharedSecret, HISTORY_INFO, transcript, KEY_BYTES))
  const plain = data.length > GCM_NONCE_BYTES ? await cipher.open(data.subarray(0, GCM_NONCE_BYTES), transcript, data.subarray(GCM_NONCE_BYTES)) : null
  if (plain === null)
    throw new ClientFormatError('authentication', 'the album history fails to authenticate: another shared secret or transcript, or altered bytes')
  try {
    return decodeHandOver(plain)
  } catch (error) {
    throw malformed(`history: ${(error as Error).message}`)
  }
}
