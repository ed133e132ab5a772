// What a device keeps to resume an upload inside a file (docs/client-format.md, "Resume
// points"): the upload session, the original's hashes and size, its file key and stream salt,
// and what the bundle's other blobs and metadata need (the facts read from the file, the
// encrypted derivatives), so that a later run sends only the rest of the original, reading only
// that part of the file. The file key opens the photo, and the facts may hold where it was
// taken: the point is sealed under a key derived from the master key, bound to its upload
// session, and only the sealed bytes are stored (the state store, an unencrypted file).
import { concatBytes, fromBase64, toBase64, toHex, utf8 } from '../../sdk/bytes.ts'
import { randomBytes } from './bytes.ts'
import { ClientFormatError } from './errors.ts'
import { GCM_NONCE_BYTES, hkdfSha256, KEY_BYTES } from './keys.ts'
import { primitives, type AesGcm } from './primitives.ts'
import type { CameraFacts, CapturedSource, GeoLocation } from './metadata.ts'
import { ciphertextSize, SALT_BYTES } from './stream.ts'

export const RESUME_KEY_INFO = 'coffer/v1/resume'
/** 0x02: points carry `inFlight`. A 0x01 point (without it) does not open: its upload starts again (decision 0049). */
const RESUME_VERSION = 0x02

/** A derivative as it was declared in the session: its encrypted bytes are sent as they are. */
export interface SealedDerivative {
  readonly kind: string
  readonly type: string
  /** Plaintext bytes. */
  readonly size: number
  /** Hex SHA-256 of `sealed`. */
  readonly hash: string
  readonly sealed: Uint8Array
}

export interface ResumePoint {
  /**
   * SHA-256 of the plaintext; null for a file sent as it is read (one pass), whose hashes are
   * known only at its end: `ciphertextHash` is then the provisional name the session declared.
   */
  readonly contentHash: Uint8Array | null
  /** Hex SHA-256 of the encrypted original (or its provisional name), and its size. */
  readonly ciphertextHash: string
  readonly ciphertextSize: number
  readonly chunkSize: number
  readonly fileKey: Uint8Array
  readonly salt: Uint8Array
  readonly facts: {
    readonly captured: number | null
    /** Absent in a point sealed before metadata version 3: its file is finished as version 2. */
    readonly capturedSource?: CapturedSource | null
    /** Absent in a point sealed before captured_offset: its file is finished as version 2 too. */
    readonly capturedOffset?: number | null
    readonly width: number | null
    readonly height: number | null
    /** A video's length in ms; absent in a point sealed before it, for a photo, and when unknown. */
    readonly duration?: number
    /** Absent in a point sealed before the camera facts (or when there are none). */
    readonly camera?: CameraFacts | null
    /** An import's caption and favourite mark (decision 0071); absent in a point sealed before them, and when there are none. */
    readonly description?: string
    readonly favourite?: boolean
    readonly location: GeoLocation | null
  }
  readonly derivatives: readonly SealedDerivative[]
  /**
   * The part of the original last handed to the network (its first ciphertext byte and the hex
   * SHA-256 of its bytes), stored before it is sent; null before the first. A later run sends a
   * part at that place only when its bytes are the same: the file changed since would otherwise
   * seal other plaintext under the same key and nonces (decision 0049).
   */
  readonly inFlight: { readonly start: number; readonly digest: string } | null
}

/** AES-256-GCM under HKDF-SHA256(master key, salt empty, "coffer/v1/resume"). */
async function resumeCipher(masterKey: Uint8Array): Promise<AesGcm> {
  if (masterKey.length !== KEY_BYTES) throw new TypeError(`master key: expected ${KEY_BYTES} bytes`)
  return primitives().aesGcm(await hkdfSha256(masterKey, new Uint8Array(0), utf8(RESUME_KEY_INFO), KEY_BYTES))
}

/** Associated data: "coffer/v1/resume" || 0x00 || the upload id (UTF-8): a point opens only for its session. */
const aad = (uploadId: string): Uint8Array => concatBytes(utf8(RESUME_KEY_INFO), new Uint8Array([0]), utf8(uploadId))

/** version (1) || nonce (12) || AES-256-GCM(JSON of the point). */
export async function sealResumePoint(masterKey: Uint8Array, uploadId: string, point: ResumePoint): Promise<Uint8Array> {
  // The point's fields by name: a caller's object may carry more (upload.ts keeps its session beside it).
  const json = JSON.stringify({
    contentHash: point.contentHash === null ? null : toBase64(point.contentHash),
    ciphertextHash: point.ciphertextHash,
    ciphertextSize: point.ciphertextSize,
    chunkSize: point.chunkSize,
    fileKey: toBase64(point.fileKey),
    salt: toBase64(point.salt),
    facts: point.facts,
    derivatives: point.derivatives.map((d) => ({ ...d, sealed: toBase64(d.sealed) })),
    inFlight: point.inFlight,
  })
  const nonce = randomBytes(GCM_NONCE_BYTES)
  const sealed = await (await resumeCipher(masterKey)).seal(nonce, aad(uploadId), utf8(json))
  return concatBytes(new Uint8Array([RESUME_VERSION]), nonce, sealed)
}

/** The point sealResumePoint sealed for this upload session; ClientFormatError when it does not open (another account's, another session's, altered). */
export async function openResumePoint(masterKey: Uint8Array, uploadId: string, sealed: Uint8Array): Promise<ResumePoint> {
  if (sealed.length < 1 + GCM_NONCE_BYTES || sealed[0] !== RESUME_VERSION) throw new ClientFormatError('malformed', 'resume point: unknown version')
  const json = await (await resumeCipher(masterKey)).open(sealed.subarray(1, 1 + GCM_NONCE_BYTES), aad(uploadId), sealed.subarray(1 + GCM_NONCE_BYTES))
  if (json === null) throw new ClientFormatError('authentication', 'resume point fails to authenticate: another account or upload session, or altered bytes')
  const raw = JSON.parse(new TextDecoder().decode(json)) as Omit<ResumePoint, 'contentHash' | 'fileKey' | 'salt' | 'derivatives'> & {
    contentHash: string | null
    fileKey: string
    salt: string
    derivatives: Array<Omit<SealedDerivative, 'sealed'> & { sealed: string }>
  }
  const point: ResumePoint = {
    ...raw,
    contentHash: raw.contentHash === null ? null : fromBase64(raw.contentHash),
    fileKey: fromBase64(raw.fileKey),
    salt: fromBase64(raw.salt),
    derivatives: raw.derivatives.map((d) => ({ ...d, sealed: fromBase64(d.sealed) })),
  }
  if (point.fileKey.length !== KEY_BYTES || point.salt.length !== SALT_BYTES || (point.contentHash !== null && point.contentHash.length !== 32))
    throw new ClientFormatError('malformed', 'resume point: a key, salt or hash of the wrong size')
  return point
}

/** What opens an original sent under keys of its own (files.ts StoredOriginal), as a device keeps it. */
export interface OriginalKeys {
  readonly ciphertextHash: string
  readonly fileKey: Uint8Array
  readonly salt: Uint8Array
}

/** The id a stored original's keys are sealed under in place of an upload session's: bound to its content. */
const originalId = (contentSha256: Uint8Array): string => `original/${toHex(contentSha256)}`

/**
 * An original's keys sealed as a resume point (no facts, no derivatives) bound to its content
 * (docs/client-format.md, "Resume points"): they open it, so they are kept only sealed.
 */
export function sealOriginalKeys(masterKey: Uint8Array, contentSha256: Uint8Array, size: number, chunkSize: number, keys: OriginalKeys): Promise<Uint8Array> {
  return sealResumePoint(masterKey, originalId(contentSha256), {
    contentHash: contentSha256,
    ciphertextHash: keys.ciphertextHash,
    ciphertextSize: ciphertextSize(size, chunkSize),
    chunkSize,
    fileKey: keys.fileKey,
    salt: keys.salt,
    facts: { captured: null, width: null, height: null, location: null },
    derivatives: [],
    inFlight: null,
  })
}

/** The keys sealOriginalKeys sealed for this content; ClientFormatError when they do not open. */
export async function openOriginalKeys(masterKey: Uint8Array, contentSha256: Uint8Array, sealed: Uint8Array): Promise<OriginalKeys> {
  const point = await openResumePoint(masterKey, originalId(contentSha256), sealed)
  return { ciphertextHash: point.ciphertextHash, fileKey: point.fileKey, salt: point.salt }
}
