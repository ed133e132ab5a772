// The metadata blob of client format v1 (docs/client-format.md, "Metadata blob"): the file key
// wrapped under the album key, then a metadata stream (STREAM, role metadata, under the file
// key) of canonical CBOR naming the file and which blob is which (metadata version 3, 4 for a
// video, 5 for what an import or a container brought; 1 and 2 are read). Re-wrapping under a new album key rewrites the first 61 bytes only.
import { decodeCanonical, encodeCanonical } from '../../codec/cbor.ts'
import { concatBytes } from '../../sdk/bytes.ts'
import { ClientFormatError } from './errors.ts'
import { unwrapFileKey, wrapFileKey, WRAPPED_FILE_KEY_BYTES, type FileKeyIds } from './keys.ts'
import { decryptBytes, DEFAULT_CHUNK_SIZE, encryptBytes } from './stream.ts'

/**
 * Version 3 adds `captured_source` and `captured_offset` (and the optional `camera`); version 2
 * added `content_mac` (required in 2 and 3); version 1, written before it, has none of them. A
 * writer writes 3, 4 for a video's (VIDEO_METADATA_VERSION), or 5 (SOURCED_METADATA_VERSION); a
 * reader takes all five.
 */
export const METADATA_VERSION = 3
/**
 * Version 4 is version 3 with a video's `duration`: written only when there is one, so that a
 * photo's metadata stays readable by the clients from before it (decision 0069).
 */
export const VIDEO_METADATA_VERSION = 4
/**
 * Version 5 is version 4 with `duration` optional, the capture sources that are not the file's
 * EXIF (SOURCED_CAPTURES) and an optional `description` (decision 0071): written only when one of
 * those is there, so that a backup's photos and videos stay readable by the clients from before it.
 */
export const SOURCED_METADATA_VERSION = 5

/**
 * Where `captured` came from (`captured_source`, version 3): a date read from the file itself at
 * backup, in the order src/client/taken.ts tries them (docs/client-format.md, "Date taken").
 */
export const EXIF_CAPTURES = ['exif-original', 'exif-digitized', 'exif-modified', 'gps'] as const
/**
 * The sources of version 5: a Google Takeout sidecar's `photoTakenTime`, an XMP sidecar's date,
 * a video container's creation time (decision 0071).
 */
export const SOURCED_CAPTURES = ['takeout', 'xmp', 'container'] as const
export const CAPTURED_SOURCES = [...EXIF_CAPTURES, ...SOURCED_CAPTURES] as const
export type CapturedSource = (typeof CAPTURED_SOURCES)[number]
const isSourced = (source: unknown): boolean => (SOURCED_CAPTURES as readonly unknown[]).includes(source)

/** The longest `description`, in UTF-16 code units (a caption, not a document). */
export const DESCRIPTION_MAX = 4096

/** `captured_offset` spans ±18 hours, in minutes (taken.ts MAX_OFFSET_MINUTES). */
const MAX_CAPTURED_OFFSET = 1080

/**
 * What the camera recorded of the shot (EXIF), as the device read it at backup (`camera`, version
 * 3, docs/client-format.md "Metadata blob"): each field only when the file states it, the whole
 * map only when any is known. Numbers are whole, so that canonical CBOR writes them one way.
 */
export interface CameraFacts {
  /** EXIF Make and Model (IFD0), LensModel: 1 to 255 characters, no control characters. */
  readonly make?: string
  readonly model?: string
  readonly lens?: string
  /** ExposureTime in seconds as a fraction [numerator, denominator] (1/250 s: [1, 250]). */
  readonly exposureTime?: readonly [number, number]
  /** FNumber times 10 (f/2.8: 28). */
  readonly fNumberTenths?: number
  /** ISO speed (EXIF ISOSpeedRatings, its first value). */
  readonly iso?: number
  /** FocalLength in tenths of a millimetre (35 mm: 350). */
  readonly focalLengthTenths?: number
}

/** The largest number a camera fact holds: EXIF's own 32-bit unsigned width. */
export const CAMERA_MAX = 0xffffffff
/** The longest make, model or lens, in characters (UTF-16 code units). */
export const CAMERA_TEXT_MAX = 255

/** One encrypted blob of the asset: the original or a derivative. */
export interface BlobEntry {
  /** "original", or the derivative's kind ("thumbnail", "preview", ...): 1 to 64 characters. */
  readonly kind: string
  /** SHA-256 of the blob as stored (its ciphertext): the envelope's ciphertext_hash for the original. */
  readonly hash: Uint8Array
  /** Plaintext bytes. */
  readonly size: number
  /** Media type of the plaintext. */
  readonly type: string
}

export interface AssetMetadata {
  /** The file's name (no directories). */
  readonly name: string
  /** The original's plaintext bytes. */
  readonly size: number
  /** Media type of the original (e.g. "image/jpeg"). */
  readonly type: string
  /** Modification time: milliseconds since the Unix epoch (UTC), or null when unknown. */
  readonly modified: number | null
  /** Capture time read from the file (EXIF or GPS): milliseconds since the Unix epoch (UTC), or null. */
  readonly captured: number | null
  /**
   * Which tag `captured` came from, null exactly when it is null: written as version 3; absent
   * in versions 1 and 2, written before it (their `captured` is EXIF DateTimeOriginal or CreateDate).
   */
  readonly capturedSource?: CapturedSource | null
  /**
   * Minutes east of UTC of the wall clock where it was taken (-1080 to 1080): the offset `captured`
   * was stated at (the EXIF offset tag; for the GPS clock 0, or the file's EXIF offset tag), null
   * for a time stated without one (a floating wall clock, `captured` read as if UTC) and whenever
   * `captured` is null. Written with `capturedSource`, as version 3; absent in versions 1 and 2.
   */
  readonly capturedOffset?: number | null
  /** Pixel dimensions of the original, or null (not an image or video). */
  readonly width: number | null
  readonly height: number | null
  /** A video's length in whole milliseconds, as the device read it at backup: versions 4 and 5, absent for a photo and when unknown. */
  readonly duration?: number
  /** The person's caption, brought by an import (a Takeout sidecar, an XMP dc:description): version 5 only, absent when none. */
  readonly description?: string
  /** Where the photo was taken (EXIF GPS): present only when the user opted in to recording it. */
  readonly location?: GeoLocation
  /** What the camera recorded (EXIF make, model, lens, exposure): version 3 only, present only when any of it is known. */
  readonly camera?: CameraFacts
  /** The content's keyed hash (content.ts): written as version 2; absent in version 1, written before it. */
  readonly contentMac?: Uint8Array
  /**
   * An album record's cover (docs/client-format.md, "Albums"): the asset id of a photo of the
   * album, as a lowercase UUID; version 3 only, absent when the person chose none (the newest
   * photo is shown) and in every other asset's metadata.
   */
  readonly cover?: string
  /**
   * The person marked the photo a favourite (organise.ts setFavourite), in the encrypted metadata
   * where the server cannot read it. Read as true or absent; written as a boolean in every
   * version 3 metadata (and whenever given), so that its size does not tell the mark.
   */
  readonly favourite?: boolean
  readonly blobs: readonly BlobEntry[]
}

/** Degrees (WGS 84), stored to 1e-7 degree (about 1 cm). */
export interface GeoLocation {
  readonly latitude: number
  readonly longitude: number
}

/** The CBOR stores degrees as integers of this unit: canonical CBOR would keep a float's every bit. */
const LOCATION_UNITS_PER_DEGREE = 1e7

const REQUIRED_KEYS = ['blobs', 'captured', 'height', 'modified', 'name', 'size', 'type', 'v', 'width']
/** The keys a version adds to REQUIRED_KEYS. */
const VERSION_KEYS: Record<number, string[]> = {
  1: [],
  2: ['content_mac'],
  3: ['captured_offset', 'captured_source', 'content_mac'],
  4: ['captured_offset', 'captured_source', 'content_mac', 'duration'],
  5: ['captured_offset', 'captured_source', 'content_mac'],
}
// `favourite` in every version: a photo stored before version 3 can be marked without inventing
// the capture source version 3 requires (decision 0061). Version 3 writers always write it.
const OPTIONAL_KEYS = ['favourite', 'location']
/** The optional keys a version adds to OPTIONAL_KEYS. */
const VERSION_OPTIONAL_KEYS: Record<number, string[]> = {
  1: [],
  2: [],
  3: ['camera', 'cover'],
  4: ['camera', 'cover'],
  5: ['camera', 'cover', 'description', 'duration'],
}
const BLOB_KEYS = ['hash', 'kind', 'size', 'type']
/** The keys of `camera` (each optional, at least one present), and each one's TypeScript name. */
const CAMERA_KEYS = {
  exposure_time: 'exposureTime',
  f_number_tenths: 'fNumberTenths',
  focal_length_tenths: 'focalLengthTenths',
  iso: 'iso',
  lens: 'lens',
  make: 'make',
  model: 'model',
} as const satisfies Record<string, keyof CameraFacts>
const CAMERA_TEXT = ['lens', 'make', 'model'] as const
const CAMERA_COUNTS = ['f_number_tenths', 'focal_length_tenths', 'iso'] as const

const isSize = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
// C0 controls but tab and line feed, DEL and C1: a caption keeps its lines.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters refused
const DESCRIPTION_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/
/**
 * A caption as `description` takes it, or null for none: controls but tab and line feed made
 * spaces (a carriage return too: CR LF is one line feed), trimmed, clipped to DESCRIPTION_MAX
 * code units without splitting a surrogate pair.
 */
export function descriptionOf(text: string): string | null {
  let clean = text.replace(/\r\n?/g, '\n').replace(new RegExp(DESCRIPTION_CONTROL.source, 'g'), ' ').trim()
  if (clean.length > DESCRIPTION_MAX) {
    const cut = DESCRIPTION_MAX - (/[\ud800-\udbff]/.test(clean[DESCRIPTION_MAX - 1]!) ? 1 : 0)
    clean = clean.slice(0, cut).trimEnd()
  }
  return clean === '' ? null : clean
}

const isTime = (value: unknown): value is number | null => value === null || (typeof value === 'number' && Number.isSafeInteger(value))
const isText = (value: unknown, max: number): value is string => typeof value === 'string' && value.length >= 1 && value.length <= max
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const isUnits = (value: unknown, degrees: number): boolean => Number.isSafeInteger(value) && Math.abs(value as number) <= degrees * LOCATION_UNITS_PER_DEGREE
const isLocation = (value: unknown): boolean => Array.isArray(value) && value.length === 2 && isUnits(value[0], 90) && isUnits(value[1], 180)
// C0 and C1 controls and DEL: a make, model or lens is one line of text a screen shows as it is.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
/** A make, model or lens: 1 to CAMERA_TEXT_MAX characters, no control character. */
export const isCameraText = (value: unknown): value is string => isText(value, CAMERA_TEXT_MAX) && !CONTROL.test(value)
/** A camera number: a whole number from 1 to CAMERA_MAX (0 is no value: EXIF's "unknown"). */
export const isCameraCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= CAMERA_MAX

function cameraProblems(camera: unknown): string[] {
  if (typeof camera !== 'object' || camera === null || Array.isArray(camera) || camera instanceof Uint8Array) return ['camera: a map']
  const found: string[] = []
  const fields = camera as Record<string, unknown>
  const keys = Object.keys(fields)
  if (keys.length === 0) found.push('camera: at least one field (absent when none is known)')
  const unknown = keys.filter((key) => !(key in CAMERA_KEYS))
  if (unknown.length > 0) found.push(`camera: unknown keys ${unknown.sort().join(', ')} (expected some of ${Object.keys(CAMERA_KEYS).join(', ')})`)
  for (const key of CAMERA_TEXT)
    if (key in fields && !isCameraText(fields[key])) found.push(`camera.${key}: text of 1 to ${CAMERA_TEXT_MAX} characters without control characters`)
  for (const key of CAMERA_COUNTS) if (key in fields && !isCameraCount(fields[key])) found.push(`camera.${key}: an integer from 1 to ${CAMERA_MAX}`)
  if ('exposure_time' in fields) {
    const time = fields.exposure_time
    if (!(Array.isArray(time) && time.length === 2 && isCameraCount(time[0]) && isCameraCount(time[1])))
      found.push(`camera.exposure_time: [numerator, denominator], each an integer from 1 to ${CAMERA_MAX}`)
  }
  return found
}

function problems(metadata: Record<string, unknown>): string[] {
  const found: string[] = []
  const keys = Object.keys(metadata).sort()
  const required = [...REQUIRED_KEYS, ...(VERSION_KEYS[metadata.v as number] ?? VERSION_KEYS[METADATA_VERSION]!)].sort()
  const optional = [...OPTIONAL_KEYS, ...(VERSION_OPTIONAL_KEYS[metadata.v as number] ?? VERSION_OPTIONAL_KEYS[METADATA_VERSION]!)].sort()
  const wellKeyed = required.every((key) => keys.includes(key)) && keys.every((key) => required.includes(key) || optional.includes(key))
  if (!wellKeyed) found.push(`keys: expected ${required.join(', ')} and optionally ${optional.join(', ')} (v ${String(metadata.v)}); got ${keys.join(', ')}`)
  if (metadata.v !== undefined && !(typeof metadata.v === 'number' && metadata.v in VERSION_KEYS)) found.push('v: expected 1, 2, 3, 4 or 5')
  if (!isText(metadata.name, 1024)) found.push('name: text of 1 to 1024 characters')
  if (!isSize(metadata.size)) found.push('size: an unsigned integer up to 2^53-1')
  if (!isText(metadata.type, 255)) found.push('type: a media type of 1 to 255 characters')
  for (const field of ['modified', 'captured'] as const) if (!isTime(metadata[field])) found.push(`${field}: an integer (ms since the Unix epoch) or null`)
  for (const field of ['width', 'height'] as const)
    if (metadata[field] !== null && !isSize(metadata[field])) found.push(`${field}: an unsigned integer or null`)
  if ('duration' in metadata && !isSize(metadata.duration)) found.push('duration: an unsigned integer of milliseconds')
  if ('description' in metadata && !(isText(metadata.description, DESCRIPTION_MAX) && !DESCRIPTION_CONTROL.test(metadata.description)))
    found.push(`description: text of 1 to ${DESCRIPTION_MAX} characters without control characters but tab and line feed`)
  if ('favourite' in metadata && typeof metadata.favourite !== 'boolean') found.push('favourite: true or false')
  if ('content_mac' in metadata && !(metadata.content_mac instanceof Uint8Array && metadata.content_mac.length === 32))
    found.push('content_mac: 32 bytes (HMAC-SHA256)')
  if ('captured_source' in metadata) {
    const source = metadata.captured_source
    const sources = metadata.v === SOURCED_METADATA_VERSION ? CAPTURED_SOURCES : EXIF_CAPTURES
    if (source !== null && !(sources as readonly unknown[]).includes(source)) found.push(`captured_source: one of ${sources.join(', ')}, or null`)
    else if ((source === null) !== (metadata.captured === null)) found.push('captured_source: null exactly when captured is null')
  }
  if ('captured_offset' in metadata) {
    const offset = metadata.captured_offset
    if (offset !== null && !(Number.isSafeInteger(offset) && Math.abs(offset as number) <= MAX_CAPTURED_OFFSET))
      found.push(`captured_offset: an integer of minutes from -${MAX_CAPTURED_OFFSET} to ${MAX_CAPTURED_OFFSET}, or null`)
    else if (offset !== null && metadata.captured === null) found.push('captured_offset: null when captured is null')
  }
  if ('location' in metadata && !isLocation(metadata.location))
    found.push('location: [latitude, longitude] in integer units of 1e-7 degree, latitude within ±90, longitude within ±180')
  if ('camera' in metadata) found.push(...cameraProblems(metadata.camera))
  if ('cover' in metadata && !(typeof metadata.cover === 'string' && UUID.test(metadata.cover))) found.push('cover: an asset id (a lowercase UUID)')
  const blobs = metadata.blobs
  if (!Array.isArray(blobs) || blobs.length < 1 || blobs.length > 64) found.push('blobs: an array of 1 to 64 entries')
  else {
    for (const [i, blob] of (blobs as unknown[]).entries()) {
      if (typeof blob !== 'object' || blob === null || Array.isArray(blob) || blob instanceof Uint8Array) {
        found.push(`blobs[${i}]: a map`)
        continue
      }
      const entry = blob as Record<string, unknown>
      if (Object.keys(entry).sort().join() !== BLOB_KEYS.join()) found.push(`blobs[${i}]: expected exactly ${BLOB_KEYS.join(', ')}`)
      if (!isText(entry.kind, 64)) found.push(`blobs[${i}].kind: text of 1 to 64 characters`)
      if (!(entry.hash instanceof Uint8Array) || entry.hash.length !== 32) found.push(`blobs[${i}].hash: 32 bytes (SHA-256)`)
      if (!isSize(entry.size)) found.push(`blobs[${i}].size: an unsigned integer`)
      if (!isText(entry.type, 255)) found.push(`blobs[${i}].type: a media type`)
    }
    const kinds = blobs.map((blob: { kind?: unknown }) => blob?.kind)
    if (new Set(kinds).size !== kinds.length) found.push('blobs: each kind at most once')
    if (!kinds.includes('original')) found.push('blobs: one entry of kind "original"')
  }
  return found
}

/** `camera` as CBOR: the fields given, by their CBOR names (undefined ones left out). */
function cameraCbor(camera: CameraFacts): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(CAMERA_KEYS)) {
    const value = camera[field]
    if (value !== undefined) out[key] = Array.isArray(value) ? [...value] : value
  }
  return out
}

/** `camera` as read: its fields by their TypeScript names. */
function cameraFacts(cbor: Record<string, unknown>): CameraFacts {
  return Object.fromEntries(Object.entries(cbor).map(([key, value]) => [CAMERA_KEYS[key as keyof typeof CAMERA_KEYS], value])) as CameraFacts
}

// NaN stays NaN, so problems() refuses it with the out-of-range values.
const toUnits = (degrees: number): number => Math.round(degrees * LOCATION_UNITS_PER_DEGREE)

/**
 * The metadata as canonical CBOR (RFC 8949 section 4.2.1); throws TypeError listing every
 * problem. The version follows from the fields given: 3 with `contentMac` and `capturedSource`
 * (what a backup writes; `capturedOffset` is then required; `camera` and `cover` only here), 4
 * when a `duration` comes with them (a video), 5 when the source is one of SOURCED_CAPTURES or a
 * `description` comes with them, 2 with `contentMac` alone (a capture time whose source is not
 * known: an upload resumed from a point sealed before version 3), 1 with neither (the test vectors).
 */
export function encodeMetadata(metadata: AssetMetadata): Uint8Array {
  const version =
    metadata.contentMac === undefined
      ? 1
      : metadata.capturedSource === undefined
        ? 2
        : isSourced(metadata.capturedSource) || metadata.description !== undefined
          ? SOURCED_METADATA_VERSION
          : metadata.duration === undefined
            ? METADATA_VERSION
            : VIDEO_METADATA_VERSION
  const value = {
    v: version,
    name: metadata.name,
    size: metadata.size,
    type: metadata.type,
    modified: metadata.modified,
    captured: metadata.captured,
    width: metadata.width,
    height: metadata.height,
    ...(metadata.duration === undefined ? {} : { duration: metadata.duration }),
    ...(metadata.description === undefined ? {} : { description: metadata.description }),
    ...(metadata.location === undefined ? {} : { location: [toUnits(metadata.location.latitude), toUnits(metadata.location.longitude)] }),
    ...(metadata.camera === undefined ? {} : { camera: cameraCbor(metadata.camera) }),
    ...(metadata.cover === undefined ? {} : { cover: metadata.cover }),
    ...(metadata.contentMac === undefined ? {} : { content_mac: metadata.contentMac }),
    // Always in versions 3 to 5, true or false: one byte either way, so a mark set or taken off keeps the blob's size.
    ...(metadata.favourite !== undefined || version >= METADATA_VERSION ? { favourite: metadata.favourite === true } : {}),
    ...(metadata.capturedSource === undefined ? {} : { captured_source: metadata.capturedSource }),
    // + 0: an offset of -0 would be written as a float.
    ...(metadata.capturedOffset === undefined ? {} : { captured_offset: metadata.capturedOffset === null ? null : metadata.capturedOffset + 0 }),
    blobs: metadata.blobs.map((blob) => ({ kind: blob.kind, hash: blob.hash, size: blob.size, type: blob.type })),
  }
  const found = problems(value)
  if (found.length > 0) throw new TypeError(`asset metadata: ${found.join('; ')}`)
  return encodeCanonical(value)
}

/** Reads canonical CBOR metadata; throws ClientFormatError (malformed) listing every problem. */
export function decodeMetadata(cbor: Uint8Array): AssetMetadata {
  let value: unknown
  try {
    value = decodeCanonical(cbor)
  } catch (error) {
    throw new ClientFormatError('malformed', `asset metadata: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Uint8Array)
    throw new ClientFormatError('malformed', 'asset metadata: not a map')
  const found = problems(value as Record<string, unknown>)
  if (found.length > 0) throw new ClientFormatError('malformed', `asset metadata: ${found.join('; ')}`)
  const {
    v: _version,
    favourite,
    location,
    camera,
    content_mac: contentMac,
    captured_source: capturedSource,
    captured_offset: capturedOffset,
    ...metadata
  } = value as Omit<AssetMetadata, 'location' | 'contentMac' | 'capturedSource' | 'capturedOffset' | 'camera' | 'favourite'> & {
    v: number
    favourite?: boolean
    location?: [number, number]
    camera?: Record<string, unknown>
    content_mac?: Uint8Array
    captured_source?: CapturedSource | null
    captured_offset?: number | null
  }
  return {
    ...metadata,
    ...(contentMac === undefined ? {} : { contentMac }),
    ...(capturedSource === undefined ? {} : { capturedSource }),
    ...(capturedOffset === undefined ? {} : { capturedOffset }),
    ...(camera === undefined ? {} : { camera: cameraFacts(camera) }),
    ...(favourite === true ? { favourite } : {}),
    ...(location === undefined ? {} : { location: { latitude: location[0] / LOCATION_UNITS_PER_DEGREE, longitude: location[1] / LOCATION_UNITS_PER_DEGREE } }),
  }
}

export interface SealOptions {
  /** For test vectors only: by default random. */
  readonly wrapNonce?: Uint8Array
  /** For test vectors only: by default random. */
  readonly salt?: Uint8Array
}

/** The metadata blob: wrapped file key (61 bytes) || metadata stream of the canonical CBOR. */
export async function sealMetadata(
  albumKey: Uint8Array,
  ids: FileKeyIds,
  fileKey: Uint8Array,
  metadata: AssetMetadata,
  options: SealOptions = {},
): Promise<Uint8Array> {
  const cbor = encodeMetadata(metadata)
  const wrapped = await wrapFileKey(albumKey, ids, fileKey, options.wrapNonce)
  const sealed = await encryptBytes(fileKey, cbor, {
    role: 'metadata',
    chunkSize: DEFAULT_CHUNK_SIZE,
    ...(options.salt === undefined ? {} : { salt: options.salt }),
  })
  return concatBytes(wrapped, sealed)
}

/** The file key and the metadata from a metadata blob; throws ClientFormatError. */
export async function openMetadata(albumKey: Uint8Array, ids: FileKeyIds, blob: Uint8Array): Promise<{ fileKey: Uint8Array; metadata: AssetMetadata }> {
  if (blob.length < WRAPPED_FILE_KEY_BYTES) throw new ClientFormatError('truncated', 'metadata blob: shorter than a wrapped file key')
  const fileKey = await unwrapFileKey(albumKey, ids, blob.subarray(0, WRAPPED_FILE_KEY_BYTES))
  const cbor = await decryptBytes(fileKey, blob.subarray(WRAPPED_FILE_KEY_BYTES), { role: 'metadata' })
  return { fileKey, metadata: decodeMetadata(cbor) }
}
