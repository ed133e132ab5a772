// Client-like helpers for lifecycle writes and the upgrade ceremony: an upload session with its
// blobs sent (or deliberately not), the OpRequest a client would send for it, CBOR intents, and
// what a test compares before and after a write (the feed, in_flight, what the blob store holds).
import { encode } from 'cborg'
import {
  CofferProblem,
  sha256Hex,
  type AssetDeletion,
  type BundleHashes,
  type LifecycleWrite,
  type ManifestEnvelopeFields,
  type Feed,
} from '../../src/sdk/client.ts'
import { signManifest, type DeleteEnvelope } from '../../src/sdk/manifest.ts'
import { raw } from './actors.ts'
import { countRows } from './database.ts'
import { ciphertext, signedManifest, type ManifestOptions, type Uploader } from './albums.ts'
import type { TestServer } from './server.ts'
import { storedHashes, writesInProgress } from './blobs.ts'

/** API.md section 6 defaults (the test servers run with them). */
export const PROTOCOL_MIN = '2025-01-01'
export const PROTOCOL_CURRENT = '2026-06-01'
export const PROTOCOL_MAX = '2026-11-01'

export interface Bundle {
  readonly albumId: string
  readonly uploadId: string
  readonly original: Buffer
  readonly derivatives: readonly Buffer[]
  readonly metadata: Buffer | null
  readonly hashes: BundleHashes
}

export interface BundleOptions {
  /** How many derivatives besides the original (default 1). */
  readonly derivatives?: number
  /** Whether the write commits a metadata blob (default true). */
  readonly metadata?: boolean
  /** Which declared blobs are sent: all (default), only the original, or none. */
  readonly send?: 'all' | 'original' | 'none'
  readonly cryptoSuiteId?: number
}

/** Opens an upload session for fresh random bytes and sends the blobs `send` asks for. */
export async function openBundle(member: Uploader, albumId: string, options: BundleOptions = {}): Promise<Bundle> {
  const original = ciphertext(700)
  const derivatives = Array.from({ length: options.derivatives ?? 1 }, () => ciphertext(300))
  const metadata = options.metadata === false ? null : ciphertext(90)
  const hashes: BundleHashes = {
    ciphertextHash: sha256Hex(original),
    derivativeHashes: derivatives.map(sha256Hex),
    metadataBlobHash: metadata === null ? null : sha256Hex(metadata),
  }
  const session = await member.client.openUploadSession({
    album_id: albumId,
    crypto_suite_id: options.cryptoSuiteId ?? 1,
    ciphertext_hash: hashes.ciphertextHash,
    blobs: [
      { role: 'original', hash: hashes.ciphertextHash, size: original.length },
      ...derivatives.map((bytes, i) => ({ role: 'derivative' as const, hash: hashes.derivativeHashes[i]!, size: bytes.length })),
    ],
  })
  const send = options.send ?? 'all'
  if (send !== 'none') await member.client.putBlob(session.upload_id, hashes.ciphertextHash, original)
  if (send === 'all') for (const [i, bytes] of derivatives.entries()) await member.client.putBlob(session.upload_id, hashes.derivativeHashes[i]!, bytes)
  return { albumId, uploadId: session.upload_id, original, derivatives, metadata, hashes }
}

export interface Write {
  readonly request: LifecycleWrite
  readonly envelope: ManifestEnvelopeFields
  readonly manifest: Buffer
  /** SHA-256 of the manifest: the chain position this write takes. */
  readonly manifestHash: string
}

export interface WriteOptions extends Omit<ManifestOptions, 'albumId'> {
  /** Defaults to the bundle's album. */
  readonly albumId?: string
  /** The metadata_blob member: default the bundle's metadata (or null); `undefined` leaves the key out. */
  readonly metadataBlob?: string | null | undefined
}

/** The OpRequest a client sends to apply `bundle`: the envelope, the signed manifest, the metadata. */
export async function writeFor(member: Uploader, bundle: Bundle, options: WriteOptions = {}): Promise<Write> {
  const { albumId, metadataBlob, ...manifestOptions } = options
  const signed = await signedManifest(member, bundle.hashes, { albumId: albumId ?? bundle.albumId, ...manifestOptions })
  const manifest = Buffer.from(signed.manifestCbor)
  const metadata = 'metadataBlob' in options ? metadataBlob : bundle.metadata === null ? null : bundle.metadata.toString('base64')
  return {
    request: { manifest_envelope: signed.envelope, manifest_cbor: manifest.toString('base64'), ...(metadata === undefined ? {} : { metadata_blob: metadata }) },
    envelope: signed.envelope,
    manifest,
    manifestHash: sha256Hex(manifest),
  }
}

/** An asset as a delete names it: where it is, its chain head and its current original. */
export interface DeletionTarget {
  readonly albumId: string
  readonly fileId: string
  readonly head: string
  readonly original: string
}

export interface DeletionOptions {
  /** Default: the target's head. */
  readonly prior?: string | null
  /** Default: the target's original. */
  readonly originalBlobHash?: string | null
  /** Default: the target's original. */
  readonly ciphertextHash?: string
  readonly protocolVersion?: string
  /** Anything else, set as given (or removed, when undefined). */
  readonly overrides?: Record<string, unknown>
}

export interface Deletion {
  readonly request: AssetDeletion
  readonly envelope: DeleteEnvelope
  readonly manifest: Buffer
  readonly manifestHash: string
}

/**
 * The body a client sends to delete `target`: a delete envelope and its signed manifest. The
 * envelope is assembled here, not by the SDK's checked builder, so that tests can send what the
 * server must refuse.
 */
export async function deletionFor(member: Uploader, target: DeletionTarget, options: DeletionOptions = {}): Promise<Deletion> {
  const envelope: Record<string, unknown> = {
    crypto_suite_id: 1,
    protocol_version: options.protocolVersion ?? PROTOCOL_CURRENT,
    album_id: target.albumId,
    file_id: target.fileId,
    amk_version: 1,
    ciphertext_hash: options.ciphertextHash ?? target.original,
    plaintext_size: 1000,
    chunk_size: 65536,
    key_mode: 'derived',
    metadata_blob_hash: null,
    original_blob_hash: options.originalBlobHash === undefined ? target.original : options.originalBlobHash,
    created_by_user: member.userId,
    created_by_device: member.deviceId,
    client_version: 'coffer-tests/1',
    timestamp: new Date().toISOString(),
    action: 'delete',
    prior_provenance_hash: options.prior === undefined ? target.head : options.prior,
    retention_until: null,
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) {
    if (value === undefined) delete envelope[key]
    else envelope[key] = value
  }
  const signed = await signManifest(member.identity, envelope as unknown as DeleteEnvelope)
  const manifest = Buffer.from(signed.manifestCbor)
  return {
    request: { manifest_envelope: signed.envelope, manifest_cbor: manifest.toString('base64') },
    envelope: signed.envelope,
    manifest,
    manifestHash: signed.manifestHash,
  }
}

/** POST .../assets/{file_id}/delete with any JSON body, for what the SDK's types would not let through. */
export function deleteRaw(server: TestServer, member: Uploader, albumId: string, fileId: string, body: unknown) {
  return raw(server, 'POST', `/v1/albums/${albumId}/assets/${fileId}/delete`, {
    headers: { ...bearer(member), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

/** A blob's bytes as the member downloads them, or the status of the refusal (404, 451). */
export async function downloaded(member: Uploader, hash: string): Promise<Buffer | number> {
  try {
    return Buffer.from(await member.client.downloadBlob(hash))
  } catch (error) {
    if (error instanceof CofferProblem) return error.status
    throw error
  }
}

export function bearer(member: Uploader): Record<string, string> {
  return { authorization: `Bearer ${member.client.tokens!.access_token}` }
}

/** POST .../ops with any JSON body, for what the SDK's types would not let through. */
export function opsRaw(server: TestServer, member: Uploader, albumId: string, body: unknown) {
  return raw(server, 'POST', `/v1/albums/${albumId}/ops`, { headers: { ...bearer(member), 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

/**
 * What the blob store holds, sorted: the hash of every stored blob and the name of every write
 * in progress or left behind (a folder's tmp/ file, a bucket's staging object; never a hash).
 */
export async function blobFiles(server: TestServer): Promise<string[]> {
  return [...(await storedHashes(server)), ...(await writesInProgress(server))].sort()
}

export interface AlbumState {
  readonly feed: Feed['entries']
  readonly inFlight: number
  readonly files: string[]
  /** Rows of every table a write or an upload touches, counted in the database itself. */
  readonly rows: Record<string, number>
}

const WRITE_TABLES = ['assets', 'asset_blobs', 'blobs', 'album_ops', 'upload_sessions', 'upload_blobs', 'upload_extras', 'receipts', 'album_upgrades'] as const

/** What a write may change: the album's feed, its in_flight, what the blob store holds, the rows of the database. */
export async function albumState(server: TestServer, member: Uploader, albumId: string): Promise<AlbumState> {
  return {
    feed: (await member.client.feed(albumId, 0, 1000)).entries,
    inFlight: (await member.client.readUpgrade(albumId)).in_flight,
    files: await blobFiles(server),
    rows: await countRows(server.database, WRITE_TABLES),
  }
}

/** A CBOR upgrade intent; `extra` adds opaque keys. */
export function intent(intentId: string, toProtocolVersion: string, extra: Record<string, unknown> = {}): Uint8Array {
  return encode({ intent_id: intentId, to_protocol_version: toProtocolVersion, ...extra })
}

export function tombstone(intentId: string): Uint8Array {
  return encode({ tombstone: intentId })
}

export const iso = (ms: number) => new Date(ms).toISOString()
