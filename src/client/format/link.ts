// Public links, client format v1 (docs/client-format.md, "Public links"; decision 0068). A link's
// URL carries its id in the path and a 32-byte secret in the fragment, which browsers never send
// to a server. From the secret (and, for a link with a password, the argon2id stretch of the
// password) come two keys: the access token, whose SHA-256 the server keeps to let the link be
// opened, and the envelope key, which seals what the link's page needs: the album's keys, its name
// and the identity keys its photos may be signed by. The server has neither: it cannot open the
// envelope, nor, without the secret, try passwords against anything it holds.
// Browser-safe: WebCrypto through primitives.ts.
import { decodeCanonical, encodeCanonical } from '../../codec/cbor.ts'
import { HYBRID_PUBLIC_KEY_BYTES } from '../../contract/signing.ts'
import { concatBytes, fromBase64Url, toBase64Url, toHex, utf8 } from '../../sdk/bytes.ts'
import { digestSha256, randomBytes } from './bytes.ts'
import { ClientFormatError } from './errors.ts'
import { GCM_NONCE_BYTES, GCM_TAG_BYTES, hkdfSha256, KEY_BYTES } from './keys.ts'
import { primitives } from './primitives.ts'
import { exactly, SHARE_EPOCHS_MAX } from './share.ts'

export const LINK_ENVELOPE_VERSION = 1
export const LINK_ID_BYTES = 16
export const LINK_SECRET_BYTES = 32
export const LINK_TOKEN_INFO = 'coffer/v1/link/token'
export const LINK_KEY_INFO = 'coffer/v1/link/key'
export const LINK_ENVELOPE_AAD = 'coffer/v1/link'
/** The most writers a link names (the owner and its album's contributors). */
export const LINK_WRITERS_MAX = 64

/** The link's two keys: the access token (its SHA-256 is what the server keeps) and the envelope key. */
export interface LinkKeys {
  readonly token: Uint8Array
  readonly key: Uint8Array
}

/** What a link's envelope holds: enough to show the album's photos and check who wrote each. */
export interface LinkContents {
  readonly albumId: string
  /** The album's name as the owner's client read it (shown as the page's title). */
  readonly name: string
  /** The asset id of the album's record (its name), which the page leaves out of the photos; null when there is none. */
  readonly recordId: string | null
  readonly ownerId: string
  /** Each account whose photos the link's page accepts, with its identity public key (the owner's, and the contributors' as the owner pinned them). */
  readonly writers: ReadonlyMap<string, Uint8Array>
  /** The album key of each epoch, from the first to the current one. */
  readonly albumKeys: ReadonlyMap<number, Uint8Array>
}

const malformed = (what: string): ClientFormatError => new ClientFormatError('malformed', `link: ${what}`)

/** A new link's id and secret, from the system's random source. */
export function newLinkSecrets(): { readonly linkId: string; readonly secret: Uint8Array } {
  return { linkId: toBase64Url(randomBytes(LINK_ID_BYTES)), secret: randomBytes(LINK_SECRET_BYTES) }
}

/**
 * The link's keys: HKDF-SHA256(IKM = secret || password key, salt = the link id's 16 bytes, info,
 * L = 32) for each info; the password key (argon2id of the password, 32 bytes) is absent for a
 * link without a password.
 */
export async function linkKeys(linkId: string, secret: Uint8Array, passwordKey: Uint8Array | null): Promise<LinkKeys> {
  const id = linkIdBytes(linkId)
  if (secret.length !== LINK_SECRET_BYTES) throw malformed(`the secret is ${secret.length} bytes, not ${LINK_SECRET_BYTES}`)
  const ikm = passwordKey === null ? secret : concatBytes(secret, passwordKey)
  return {
    token: await hkdfSha256(ikm, id, utf8(LINK_TOKEN_INFO), KEY_BYTES),
    key: await hkdfSha256(ikm, id, utf8(LINK_KEY_INFO), KEY_BYTES),
  }
}

/** The hex SHA-256 of the access token: what the server keeps of it. */
export async function tokenHash(token: Uint8Array): Promise<string> {
  return toHex(await digestSha256(token))
}

function linkIdBytes(linkId: string): Uint8Array {
  let bytes: Uint8Array
  try {
    bytes = fromBase64Url(linkId)
  } catch {
    throw malformed('the link id is not base64url')
  }
  if (bytes.length !== LINK_ID_BYTES || toBase64Url(bytes) !== linkId) throw malformed(`the link id is not ${LINK_ID_BYTES} bytes in base64url`)
  return bytes
}

const aadOf = (linkId: string) => concatBytes(utf8(LINK_ENVELOPE_AAD), new Uint8Array([0]), linkIdBytes(linkId))

/**
 * The envelope: 0x01 || nonce (12) || AES-256-GCM(envelope key, nonce, aad = UTF-8 "coffer/v1/link"
 * || 0x00 || link id (16), canonical CBOR {"album_id", "name", "record_id", "owner_id", "writers": [[user id,
 * identity public key], ...] by user id, "epochs": [first, last], "keys": 32 bytes per epoch}).
 */
export async function sealLinkEnvelope(
  key: Uint8Array,
  linkId: string,
  contents: LinkContents,
  nonce: Uint8Array = randomBytes(GCM_NONCE_BYTES),
): Promise<Uint8Array> {
  const epochs = [...contents.albumKeys.keys()].sort((a, b) => a - b)
  const [first, last] = [epochs[0], epochs.at(-1)]
  if (first === undefined || last === undefined || last - first + 1 !== epochs.length || epochs.length > SHARE_EPOCHS_MAX)
    throw new TypeError(`album keys: consecutive epochs, 1 to ${SHARE_EPOCHS_MAX}`)
  if (contents.writers.size === 0 || contents.writers.size > LINK_WRITERS_MAX) throw new TypeError(`writers: 1 to ${LINK_WRITERS_MAX}`)
  const writers = [...contents.writers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const plain = encodeCanonical({
    album_id: contents.albumId,
    name: contents.name,
    record_id: contents.recordId,
    owner_id: contents.ownerId,
    writers: writers.map(([userId, publicKey]) => [userId, publicKey]),
    epochs: [first, last],
    keys: concatBytes(...epochs.map((epoch) => contents.albumKeys.get(epoch)!)),
  })
  const sealed = await (await primitives().aesGcm(key)).seal(nonce, aadOf(linkId), plain)
  return concatBytes(new Uint8Array([LINK_ENVELOPE_VERSION]), nonce, sealed)
}

/** The envelope's contents; ClientFormatError 'authentication' when it was not sealed under this key for this link (a wrong secret or password, or bytes the server changed). */
export async function openLinkEnvelope(key: Uint8Array, linkId: string, bytes: Uint8Array): Promise<LinkContents> {
  if (bytes[0] !== LINK_ENVELOPE_VERSION || bytes.length < 1 + GCM_NONCE_BYTES + GCM_TAG_BYTES) throw malformed('envelope: not version 1')
  const plain = await (await primitives().aesGcm(key)).open(bytes.subarray(1, 1 + GCM_NONCE_BYTES), aadOf(linkId), bytes.subarray(1 + GCM_NONCE_BYTES))
  if (plain === null) throw new ClientFormatError('authentication', 'link: the envelope does not open under this link’s key')
  const value = decodeCanonical(plain)
  if (!exactly(value, 'album_id,epochs,keys,name,owner_id,record_id,writers'))
    throw malformed('envelope: not {album_id, name, record_id, owner_id, writers, epochs, keys}')
  const { album_id: albumId, name, record_id: recordId, owner_id: ownerId, writers, epochs, keys } = value
  if (
    typeof albumId !== 'string' ||
    typeof name !== 'string' ||
    (recordId !== null && typeof recordId !== 'string') ||
    typeof ownerId !== 'string' ||
    !(keys instanceof Uint8Array)
  )
    throw malformed('envelope: field types')
  if (!Array.isArray(epochs) || epochs.length !== 2 || !epochs.every((epoch) => Number.isInteger(epoch))) throw malformed('envelope: epochs')
  const [first, last] = epochs as [number, number]
  if (first < 1 || last < first || last - first + 1 > SHARE_EPOCHS_MAX || keys.length !== (last - first + 1) * KEY_BYTES)
    throw malformed('envelope: epochs and keys disagree')
  const albumKeys = new Map<number, Uint8Array>()
  for (let epoch = first; epoch <= last; epoch++) albumKeys.set(epoch, keys.slice((epoch - first) * KEY_BYTES, (epoch - first + 1) * KEY_BYTES))
  if (!Array.isArray(writers) || writers.length === 0 || writers.length > LINK_WRITERS_MAX) throw malformed('envelope: writers')
  const writerKeys = new Map<string, Uint8Array>()
  for (const writer of writers) {
    if (
      !Array.isArray(writer) ||
      writer.length !== 2 ||
      typeof writer[0] !== 'string' ||
      !(writer[1] instanceof Uint8Array) ||
      writer[1].length !== HYBRID_PUBLIC_KEY_BYTES
    )
      throw malformed('envelope: a writer is not [user id, identity public key]')
    writerKeys.set(writer[0], writer[1])
  }
  if (!writerKeys.has(ownerId)) throw malformed('envelope: the owner is not among the writers')
  return { albumId, name, recordId, ownerId, writers: writerKeys, albumKeys }
}

/** The link's URL: `<origin>/s/<link id>#<secret in base64url>`. */
export function linkUrl(origin: string, linkId: string, secret: Uint8Array): string {
  return `${origin.replace(/\/+$/, '')}/s/${linkId}#${toBase64Url(secret)}`
}

/** The origin, link id and secret of a link's URL; ClientFormatError 'malformed' naming what is wrong. */
export function parseLinkUrl(url: string): { readonly origin: string; readonly linkId: string; readonly secret: Uint8Array } {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw malformed('not a URL')
  }
  const id = /^\/s\/([A-Za-z0-9_-]{22})\/?$/.exec(parsed.pathname)?.[1]
  if (id === undefined) throw malformed('the URL is not /s/<link id>')
  linkIdBytes(id)
  let secret: Uint8Array
  try {
    secret = fromBase64Url(parsed.hash.slice(1))
  } catch {
    throw malformed('the URL’s fragment is not the link’s secret')
  }
  if (secret.length !== LINK_SECRET_BYTES) throw malformed('the URL’s fragment is not the link’s secret (cut short when it was copied?)')
  return { origin: parsed.origin, linkId: id, secret }
}

export const LINK_OWNER_COPY_INFO = 'coffer/v1/link/owner'

const ownerCopyKey = (masterKey: Uint8Array): Promise<Uint8Array> => hkdfSha256(masterKey, new Uint8Array(0), utf8(LINK_OWNER_COPY_INFO), KEY_BYTES)
const ownerCopyAad = (linkId: string) => concatBytes(utf8(LINK_OWNER_COPY_INFO), new Uint8Array([0]), linkIdBytes(linkId))

/**
 * The owner's copy of a link's secret and envelope key, so that any of its devices can show the
 * link again and seal the envelope anew (a new epoch): 0x01 || nonce (12) || AES-256-GCM(key =
 * HKDF-SHA256(master key, salt = empty, info = "coffer/v1/link/owner"), nonce, aad = UTF-8
 * "coffer/v1/link/owner" || 0x00 || link id (16), secret (32) || envelope key (32)).
 */
export async function sealOwnerCopy(
  masterKey: Uint8Array,
  linkId: string,
  secret: Uint8Array,
  key: Uint8Array,
  nonce: Uint8Array = randomBytes(GCM_NONCE_BYTES),
): Promise<Uint8Array> {
  const sealed = await (await primitives().aesGcm(await ownerCopyKey(masterKey))).seal(nonce, ownerCopyAad(linkId), concatBytes(secret, key))
  return concatBytes(new Uint8Array([LINK_ENVELOPE_VERSION]), nonce, sealed)
}

/** The secret and envelope key of the owner's copy; ClientFormatError 'authentication' when it is not this account's copy for this link. */
export async function openOwnerCopy(
  masterKey: Uint8Array,
  linkId: string,
  bytes: Uint8Array,
): Promise<{ readonly secret: Uint8Array; readonly key: Uint8Array }> {
  if (bytes[0] !== LINK_ENVELOPE_VERSION || bytes.length !== 1 + GCM_NONCE_BYTES + LINK_SECRET_BYTES + KEY_BYTES + GCM_TAG_BYTES)
    throw malformed('owner copy: not version 1')
  const plain = await (await primitives().aesGcm(await ownerCopyKey(masterKey))).open(
    bytes.subarray(1, 1 + GCM_NONCE_BYTES),
    ownerCopyAad(linkId),
    bytes.subarray(1 + GCM_NONCE_BYTES),
  )
  if (plain === null) throw new ClientFormatError('authentication', 'link: the owner’s copy does not open under this account’s key for this link')
  return { secret: plain.slice(0, LINK_SECRET_BYTES), key: plain.slice(LINK_SECRET_BYTES) }
}
