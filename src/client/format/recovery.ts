// Recovery (docs/client-format.md, "Recovery"): a 32-byte recovery key shown to the person once
// as a 24-word BIP-39 phrase, and the escrow blob the server keeps (PUT /v1/escrow): the master
// key and the identity key's seeds sealed under a key derived from the recovery key with
// argon2id (escrow version 2; version 1, HKDF, is still read). Whoever holds the phrase can open
// the escrow on a new device; the server, which holds only the escrow, cannot. WebCrypto
// (HKDF, AES-256-GCM), @noble/hashes' argon2id (or a faster one given through the Argon2id
// port, e.g. node:crypto's in client/node/crypto.ts) and @scure/bip39.
import { argon2idAsync } from '@noble/hashes/argon2.js'
import { entropyToMnemonic, mnemonicToEntropy } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { HYBRID_SEED_BYTES } from '../../contract/signing.ts'
import { concatBytes, utf8 } from '../../sdk/bytes.ts'
import { randomBytes, u32be, uuidBytes } from './bytes.ts'
import { ClientFormatError } from './errors.ts'
import { GCM_NONCE_BYTES, GCM_TAG_BYTES, hkdfSha256, KEY_BYTES } from './keys.ts'
import { primitives } from './primitives.ts'

export const RECOVERY_KEY_BYTES = 32
export const RECOVERY_PHRASE_WORDS = 24
/** The escrow's label, in the v1 key's HKDF info and in both versions' associated data ("v1": client format v1). */
export const ESCROW_INFO = 'coffer/v1/escrow'
/** What sealEscrow writes: the escrow key from argon2id. */
export const ESCROW_VERSION = 0x02
/** Still read (accounts set up before version 2): the escrow key from HKDF. */
export const ESCROW_VERSION_HKDF = 0x01
/** master key (32) || identity seeds (64). */
const ESCROW_PLAINTEXT_BYTES = KEY_BYTES + HYBRID_SEED_BYTES
/** Version 1: version (1) || nonce (12) || AES-256-GCM ciphertext (96) || tag (16): 125 bytes. */
export const ESCROW_V1_BYTES = 1 + GCM_NONCE_BYTES + ESCROW_PLAINTEXT_BYTES + GCM_TAG_BYTES
export const ESCROW_SALT_BYTES = 16
/** Version 2's header: version (1) || m (u32) || t (u32) || p (u32) || salt (16): 29 bytes, also in the associated data. */
export const ESCROW_HEADER_BYTES = 1 + 4 + 4 + 4 + ESCROW_SALT_BYTES
/** Version 2: header (29) || nonce (12) || AES-256-GCM ciphertext (96) || tag (16): 153 bytes. */
export const ESCROW_BYTES = ESCROW_HEADER_BYTES + GCM_NONCE_BYTES + ESCROW_PLAINTEXT_BYTES + GCM_TAG_BYTES

/** Argon2id's costs (RFC 9106): memory in KiB (m), passes (t), lanes (p). */
export interface EscrowKdfParams {
  readonly memoryKiB: number
  readonly passes: number
  readonly lanes: number
}

/**
 * What setup seals with: 64 MiB, 3 passes, 1 lane (RFC 9106's second recommended option, with
 * one lane because a browser runs lanes one after another). About 0.35 s with node:crypto and
 * 2.6 s with @noble/hashes in Node here, once per setup and once per recovery
 * (docs/decisions/0016-photos-account.md, "Escrow version 2").
 */
export const ESCROW_KDF_DEFAULTS: EscrowKdfParams = { memoryKiB: 65_536, passes: 3, lanes: 1 }

/**
 * The most an escrow may ask for and still be opened: the server serves the escrow, and a
 * server that raised m or t could otherwise make a device (a browser tab) allocate gigabytes
 * or compute for minutes before the tag fails. 4x the default memory, about 2.7x its passes.
 */
export const ESCROW_KDF_LIMITS: EscrowKdfParams = { memoryKiB: 262_144, passes: 8, lanes: 4 }

/** argon2id (version 0x13, no secret, no associated data) of `password` and `salt` at `params`: 32 bytes. */
export type Argon2id = (password: Uint8Array, salt: Uint8Array, params: EscrowKdfParams) => Promise<Uint8Array>

/** @noble/hashes' argon2id: browser-safe, yields to the event loop every 10 ms. */
export const portableArgon2id: Argon2id = (password, salt, params) =>
  argon2idAsync(password, salt, { m: params.memoryKiB, t: params.passes, p: params.lanes, dkLen: KEY_BYTES, maxmem: ESCROW_KDF_LIMITS.memoryKiB * 1024 })

/** What the escrow keeps: enough to act as the account on a new device. */
export interface EscrowedKeys {
  readonly masterKey: Uint8Array
  /** The identity key's 64 seed bytes (IdentityKey.exportSeeds()). */
  readonly identitySeeds: Uint8Array
}

/** 256 random bits, made at setup; shown once as the recovery phrase and never stored. */
export function generateRecoveryKey(): Uint8Array {
  return randomBytes(RECOVERY_KEY_BYTES)
}

/** The 24 English BIP-39 words of a recovery key, separated by single spaces. */
export function recoveryPhrase(recoveryKey: Uint8Array): string {
  if (recoveryKey.length !== RECOVERY_KEY_BYTES) throw new TypeError(`recovery key: expected ${RECOVERY_KEY_BYTES} bytes`)
  return entropyToMnemonic(recoveryKey, wordlist)
}

/**
 * The recovery key a phrase spells. Forgiving about case and spacing (a person types it back);
 * throws ClientFormatError 'malformed' naming what is wrong: the word count, a word not in the
 * list, or a checksum that fails (a wrong or misplaced word).
 */
export function recoveryKeyFromPhrase(phrase: string): Uint8Array {
  const words = phrase
    .trim()
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== '')
  if (words.length !== RECOVERY_PHRASE_WORDS)
    throw new ClientFormatError('malformed', `recovery phrase: expected ${RECOVERY_PHRASE_WORDS} words, got ${words.length}`)
  const unknown = words.findIndex((word) => !wordlist.includes(word))
  if (unknown >= 0) throw new ClientFormatError('malformed', `recovery phrase: word ${unknown + 1} ("${words[unknown]}") is not in the BIP-39 English list`)
  try {
    return mnemonicToEntropy(words.join(' '), wordlist)
  } catch {
    throw new ClientFormatError('malformed', 'recovery phrase: the checksum does not match (a word is wrong or out of place)')
  }
}

/** The problem with argon2id parameters, or null: whole numbers, p from 1, m from 8 p KiB (argon2's minimum), t from 1, none above ESCROW_KDF_LIMITS. */
export function escrowKdfProblem(params: EscrowKdfParams): { code: 'malformed' | 'limit'; message: string } | null {
  const { memoryKiB: m, passes: t, lanes: p } = params
  if (![m, t, p].every((n) => Number.isInteger(n) && n >= 1 && n <= 0xffff_ffff) || m < 8 * p) {
    return {
      code: 'malformed',
      message: `escrow: argon2id parameters m=${m} KiB, t=${t}, p=${p} are not valid (whole numbers, t and p at least 1, m at least 8 p)`,
    }
  }
  const over = [
    m > ESCROW_KDF_LIMITS.memoryKiB ? `memory ${m} KiB (at most ${ESCROW_KDF_LIMITS.memoryKiB})` : null,
    t > ESCROW_KDF_LIMITS.passes ? `${t} passes (at most ${ESCROW_KDF_LIMITS.passes})` : null,
    p > ESCROW_KDF_LIMITS.lanes ? `${p} lanes (at most ${ESCROW_KDF_LIMITS.lanes})` : null,
  ].filter((part) => part !== null)
  if (over.length > 0)
    return {
      code: 'limit',
      message: `escrow: asks argon2id for ${over.join(', ')}, more than this client accepts; refused without trying (an escrow setup made never asks for that: it was altered)`,
    }
  return null
}

/** Version 1's key: HKDF-SHA256(IKM = recovery key, salt = empty, info = "coffer/v1/escrow", L = 32). */
export async function escrowKeyV1(recoveryKey: Uint8Array): Promise<Uint8Array> {
  checkRecoveryKey(recoveryKey)
  return hkdfSha256(recoveryKey, new Uint8Array(0), utf8(ESCROW_INFO), KEY_BYTES)
}

/** Version 2's key: argon2id(password = the recovery key's 32 bytes, salt, m, t, p, T = 32). */
export async function escrowKeyV2(
  recoveryKey: Uint8Array,
  salt: Uint8Array,
  params: EscrowKdfParams,
  argon2id: Argon2id = portableArgon2id,
): Promise<Uint8Array> {
  checkRecoveryKey(recoveryKey)
  if (salt.length !== ESCROW_SALT_BYTES) throw new TypeError(`salt: expected ${ESCROW_SALT_BYTES} bytes`)
  const problem = escrowKdfProblem(params)
  if (problem !== null) throw new ClientFormatError(problem.code, problem.message)
  const key = await argon2id(recoveryKey, salt, params)
  if (key.length !== KEY_BYTES) throw new TypeError(`argon2id: expected ${KEY_BYTES} bytes, got ${key.length}`)
  return key
}

function checkRecoveryKey(recoveryKey: Uint8Array): void {
  if (recoveryKey.length !== RECOVERY_KEY_BYTES) throw new TypeError(`recovery key: expected ${RECOVERY_KEY_BYTES} bytes`)
}

/**
 * The associated data: UTF-8 "coffer/v1/escrow" || 0x00 || user id (16), then for version 2 its
 * 29-byte header: an escrow moved to another account does not open, nor one whose parameters
 * or salt were changed.
 */
export function escrowAad(userId: string, header: Uint8Array = new Uint8Array(0)): Uint8Array {
  return concatBytes(utf8(ESCROW_INFO), new Uint8Array([0]), uuidBytes(userId), header)
}

export interface SealOptions {
  /** ESCROW_KDF_DEFAULTS unless given (tests and vectors use small ones). */
  readonly params?: EscrowKdfParams
  /** portableArgon2id unless given. */
  readonly argon2id?: Argon2id
  /** For test vectors only: random by default, as they must be. */
  readonly salt?: Uint8Array
  readonly nonce?: Uint8Array
}

export interface OpenOptions {
  /** portableArgon2id unless given. */
  readonly argon2id?: Argon2id
}

function checkKeys(keys: EscrowedKeys): void {
  if (keys.masterKey.length !== KEY_BYTES) throw new TypeError(`master key: expected ${KEY_BYTES} bytes`)
  if (keys.identitySeeds.length !== HYBRID_SEED_BYTES) throw new TypeError(`identity seeds: expected ${HYBRID_SEED_BYTES} bytes`)
}

async function seal(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, keys: EscrowedKeys): Promise<Uint8Array> {
  if (nonce.length !== GCM_NONCE_BYTES) throw new TypeError(`nonce: expected ${GCM_NONCE_BYTES} bytes`)
  return (await primitives().aesGcm(key)).seal(nonce, aad, concatBytes(keys.masterKey, keys.identitySeeds))
}

/** The escrow blob, version 2 (153 bytes, ESCROW_BYTES): header, nonce, AES-256-GCM under the argon2id key. */
export async function sealEscrow(recoveryKey: Uint8Array, userId: string, keys: EscrowedKeys, options: SealOptions = {}): Promise<Uint8Array> {
  checkKeys(keys)
  const params = options.params ?? ESCROW_KDF_DEFAULTS
  const salt = options.salt ?? randomBytes(ESCROW_SALT_BYTES)
  const nonce = options.nonce ?? randomBytes(GCM_NONCE_BYTES)
  const key = await escrowKeyV2(recoveryKey, salt, params, options.argon2id)
  const header = concatBytes(new Uint8Array([ESCROW_VERSION]), u32be(params.memoryKiB), u32be(params.passes), u32be(params.lanes), salt)
  return concatBytes(header, nonce, await seal(key, nonce, escrowAad(userId, header), keys))
}

/** A version 1 escrow (125 bytes): no longer written by setup; for test vectors and tests of reading one. */
export async function sealEscrowV1(
  recoveryKey: Uint8Array,
  userId: string,
  keys: EscrowedKeys,
  nonce: Uint8Array = randomBytes(GCM_NONCE_BYTES),
): Promise<Uint8Array> {
  checkKeys(keys)
  const key = await escrowKeyV1(recoveryKey)
  return concatBytes(new Uint8Array([ESCROW_VERSION_HKDF]), nonce, await seal(key, nonce, escrowAad(userId), keys))
}

/** Version 2's parameters, read from its header; ClientFormatError when the bytes are not a version 2 escrow. */
export function escrowKdfParams(escrow: Uint8Array): EscrowKdfParams {
  if (escrow.length !== ESCROW_BYTES || escrow[0] !== ESCROW_VERSION)
    throw new ClientFormatError('malformed', `escrow: not a version ${ESCROW_VERSION} escrow of ${ESCROW_BYTES} bytes`)
  const view = new DataView(escrow.buffer, escrow.byteOffset, ESCROW_HEADER_BYTES)
  return { memoryKiB: view.getUint32(1), passes: view.getUint32(5), lanes: view.getUint32(9) }
}

/**
 * The keys an escrow holds. Reads version 2 and version 1. Throws ClientFormatError:
 * `authentication` when it is not sealed under this recovery key for this account (a wrong
 * phrase, another account, an altered byte), `malformed` for a wrong length or version or
 * invalid parameters, `limit` for parameters above ESCROW_KDF_LIMITS (checked before any
 * argon2id work).
 */
export async function openEscrow(recoveryKey: Uint8Array, userId: string, escrow: Uint8Array, options: OpenOptions = {}): Promise<EscrowedKeys> {
  checkRecoveryKey(recoveryKey)
  let key: Uint8Array
  let body: Uint8Array
  let aad: Uint8Array
  if (escrow[0] === ESCROW_VERSION) {
    if (escrow.length !== ESCROW_BYTES)
      throw new ClientFormatError('malformed', `escrow: version ${ESCROW_VERSION} is ${ESCROW_BYTES} bytes, got ${escrow.length}`)
    const header = escrow.subarray(0, ESCROW_HEADER_BYTES)
    key = await escrowKeyV2(recoveryKey, header.subarray(13), escrowKdfParams(escrow), options.argon2id)
    body = escrow.subarray(ESCROW_HEADER_BYTES)
    aad = escrowAad(userId, header)
  } else if (escrow[0] === ESCROW_VERSION_HKDF) {
    if (escrow.length !== ESCROW_V1_BYTES)
      throw new ClientFormatError('malformed', `escrow: version ${ESCROW_VERSION_HKDF} is ${ESCROW_V1_BYTES} bytes, got ${escrow.length}`)
    key = await escrowKeyV1(recoveryKey)
    body = escrow.subarray(1)
    aad = escrowAad(userId)
  } else {
    throw new ClientFormatError('malformed', escrow.length === 0 ? 'escrow: empty' : `escrow: unknown version ${escrow[0]}`)
  }
  const plain = await (await primitives().aesGcm(key)).open(body.subarray(0, GCM_NONCE_BYTES), aad, body.subarray(GCM_NONCE_BYTES))
  if (plain === null) throw new ClientFormatError('authentication', 'escrow fails to authenticate: another recovery phrase, another account, or altered bytes')
  return { masterKey: plain.slice(0, KEY_BYTES), identitySeeds: plain.slice(KEY_BYTES) }
}
