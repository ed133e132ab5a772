// Recovery (docs/client-format.md, "Recovery"): a 32-byte recovery key shown to the person once
// as a 24-word BIP-39 phrase, and the escrow blob the server keeps (PUT /v1/escrow): the master
// key and the identity key's seeds sealed under a key derived from the recovery key. Whoever
// holds the phrase can open the escrow on a new device; the server, which holds only the
// escrow, cannot. WebCrypto (HKDF, AES-256-GCM) and @scure/bip39.
import { entropyToMnemonic, mnemonicToEntropy } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { HYBRID_SEED_BYTES } from '../../contract/signing.ts'
import { concatBytes, utf8 } from '../../sdk/bytes.ts'
import { own, randomBytes, uuidBytes } from './bytes.ts'
import { ClientFormatError } from './errors.ts'
import { GCM_NONCE_BYTES, GCM_TAG_BYTES, gcmKey, hkdfSha256, KEY_BYTES } from './keys.ts'

export const RECOVERY_KEY_BYTES = 32
export const RECOVERY_PHRASE_WORDS = 24
export const ESCROW_INFO = 'coffer/v1/escrow'
export const ESCROW_VERSION = 0x01
/** master key (32) || identity seeds (64). */
const ESCROW_PLAINTEXT_BYTES = KEY_BYTES + HYBRID_SEED_BYTES
/** version (1) || nonce (12) || AES-256-GCM ciphertext (96) || tag (16): 125 bytes. */
export const ESCROW_BYTES = 1 + GCM_NONCE_BYTES + ESCROW_PLAINTEXT_BYTES + GCM_TAG_BYTES

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
  const words = phrase.trim().toLowerCase().split(/\s+/).filter((word) => word !== '')
  if (words.length !== RECOVERY_PHRASE_WORDS) throw new ClientFormatError('malformed', `recovery phrase: expected ${RECOVERY_PHRASE_WORDS} words, got ${words.length}`)
  const unknown = words.findIndex((word) => !wordlist.includes(word))
  if (unknown >= 0) throw new ClientFormatError('malformed', `recovery phrase: word ${unknown + 1} ("${words[unknown]}") is not in the BIP-39 English list`)
  try {
    return mnemonicToEntropy(words.join(' '), wordlist)
  } catch {
    throw new ClientFormatError('malformed', 'recovery phrase: the checksum does not match (a word is wrong or out of place)')
  }
}

/** HKDF-SHA256(IKM = recovery key, salt = empty, info = "coffer/v1/escrow", L = 32). */
export async function escrowKey(recoveryKey: Uint8Array): Promise<Uint8Array> {
  if (recoveryKey.length !== RECOVERY_KEY_BYTES) throw new TypeError(`recovery key: expected ${RECOVERY_KEY_BYTES} bytes`)
  return hkdfSha256(recoveryKey, new Uint8Array(0), utf8(ESCROW_INFO), KEY_BYTES)
}

/** The associated data: UTF-8 "coffer/v1/escrow" || 0x00 || user id (16): an escrow moved to another account does not open. */
export function escrowAad(userId: string): Uint8Array {
  return concatBytes(utf8(ESCROW_INFO), new Uint8Array([0]), uuidBytes(userId))
}

/** The escrow blob (125 bytes, ESCROW_BYTES). `nonce` is for test vectors only: by default it is random, as it must be. */
export async function sealEscrow(recoveryKey: Uint8Array, userId: string, keys: EscrowedKeys, nonce: Uint8Array = randomBytes(GCM_NONCE_BYTES)): Promise<Uint8Array> {
  if (keys.masterKey.length !== KEY_BYTES) throw new TypeError(`master key: expected ${KEY_BYTES} bytes`)
  if (keys.identitySeeds.length !== HYBRID_SEED_BYTES) throw new TypeError(`identity seeds: expected ${HYBRID_SEED_BYTES} bytes`)
  if (nonce.length !== GCM_NONCE_BYTES) throw new TypeError(`nonce: expected ${GCM_NONCE_BYTES} bytes`)
  const key = await gcmKey(await escrowKey(recoveryKey), 'encrypt')
  const sealed = await globalThis.crypto.subtle.encrypt({ name: 'AES-GCM', iv: own(nonce), additionalData: own(escrowAad(userId)) }, key, own(concatBytes(keys.masterKey, keys.identitySeeds)))
  return concatBytes(new Uint8Array([ESCROW_VERSION]), nonce, new Uint8Array(sealed))
}

/** The keys an escrow holds; throws ClientFormatError when it is not v1, or not sealed under this recovery key for this account. */
export async function openEscrow(recoveryKey: Uint8Array, userId: string, escrow: Uint8Array): Promise<EscrowedKeys> {
  if (escrow.length !== ESCROW_BYTES) throw new ClientFormatError('malformed', `escrow: expected ${ESCROW_BYTES} bytes, got ${escrow.length}`)
  if (escrow[0] !== ESCROW_VERSION) throw new ClientFormatError('malformed', `escrow: unknown version ${escrow[0]}`)
  const key = await gcmKey(await escrowKey(recoveryKey), 'decrypt')
  let plain: Uint8Array
  try {
    const nonce = escrow.subarray(1, 1 + GCM_NONCE_BYTES)
    plain = new Uint8Array(await globalThis.crypto.subtle.decrypt({ name: 'AES-GCM', iv: own(nonce), additionalData: own(escrowAad(userId)) }, key, own(escrow.subarray(1 + GCM_NONCE_BYTES))))
  } catch {
    throw new ClientFormatError('authentication', 'escrow fails to authenticate: another recovery phrase, another account, or altered bytes')
  }
  return { masterKey: plain.slice(0, KEY_BYTES), identitySeeds: plain.slice(KEY_BYTES) }
}
