// Lifecycle writes (POST /v1/albums/{album_id}/ops, and asset deletion at
// POST /v1/albums/{album_id}/assets/{file_id}/delete): the manifest envelope, checked against the
// contract's schema and the chain rules before anything is sent, and the signed manifest. The
// server stores `manifest_cbor` verbatim and never parses it; the SDK's layout, which readers
// of the feed check with `readManifest`:
//
//   manifest_cbor = canonical CBOR {"body": bstr, "sig": bstr}
//   body          = canonical CBOR {"envelope": <the envelope, every nullable field explicit>, "content"?: <app data>}
//   sig           = hybrid signature over UTF-8 "coffer/manifest/v1" | 0x00 | body
//
// The SHA-256 of manifest_cbor is the asset's chain position (`envelope_hash` in the feed): a
// `replace` or a `delete` names the current one as `prior_provenance_hash`. To retry a write whose answer was
// lost, send the same request again (same bytes: the server answers `replayed: true`); signing
// again makes a new manifest.
import type { Static } from 'typebox'
import { Value } from 'typebox/value'
import { decodeCanonical, encodeCanonical } from '../codec/cbor.ts'
import { DeleteManifestEnvelope, ManifestEnvelope, type AssetDeleteRequest, type OpRequest } from '../contract/albums.ts'
import { contextSigningBytes } from '../contract/signing.ts'
import { sha256Hex, toBase64 } from './bytes.ts'
import type { BundleHashes } from './client.ts'
import type { Signer } from './directory.ts'
import { hybridVerify, type HybridVerifier } from './hybrid.ts'
import { CofferInputError, refuseIf } from './input-error.ts'

export const MANIFEST_CONTEXT = 'coffer/manifest/v1'

/** The envelope as the server reads it (API.md section 6), every nullable field explicit. */
export type Envelope = Static<typeof ManifestEnvelope>

/** The envelope of a `delete` manifest (asset deletion). */
export type DeleteEnvelope = Static<typeof DeleteManifestEnvelope>

type Nullable = 'metadata_blob_hash' | 'original_blob_hash' | 'prior_provenance_hash' | 'retention_until'

/** What a caller gives: nullable fields may be left out (null), `timestamp` defaults to now. */
export type EnvelopeInput = Omit<Envelope, Nullable | 'timestamp' | 'album_id'> & {
  readonly album_id: string
  readonly timestamp?: string
} & { readonly [K in Nullable]?: string | null }

/** A signed manifest: the envelope it commits to, its bytes and its chain position. */
export interface SignedManifest<E extends Envelope | DeleteEnvelope = Envelope> {
  readonly envelope: E
  readonly manifestCbor: Uint8Array
  /** SHA-256 of manifestCbor: the asset's chain head once applied. */
  readonly manifestHash: string
}

/** A lifecycle write ready for `CofferClient.applyManifest(albumId, request)`. */
export interface LifecycleWriteRequest extends SignedManifest {
  readonly albumId: string
  readonly request: Static<typeof OpRequest>
}

const NULLABLE: readonly Nullable[] = ['metadata_blob_hash', 'original_blob_hash', 'prior_provenance_hash', 'retention_until']

function schemaProblems(envelope: unknown, schema: typeof ManifestEnvelope | typeof DeleteManifestEnvelope = ManifestEnvelope): string[] {
  return [...Value.Errors(schema, envelope)].map((error) => {
    const extra = error.keyword === 'additionalProperties' ? ` (${String((error.params as { additionalProperties?: unknown }).additionalProperties)})` : ''
    return `${error.instancePath.replace(/^\//, '') || 'envelope'}: ${error.message}${extra}`
  })
}

/**
 * The envelope with every nullable field explicit and `timestamp` filled, checked as the
 * server checks it (the contract's schema, then the chain rules: a `create` continues from
 * nothing; a `replace` names the chain head it continues and the asset's current original).
 * Throws CofferInputError listing every problem.
 */
export function buildEnvelope(input: EnvelopeInput): Envelope {
  const envelope = { ...input, timestamp: input.timestamp ?? new Date().toISOString() } as Record<string, unknown>
  for (const field of NULLABLE) envelope[field] ??= null
  const problems = schemaProblems(envelope)
  if (typeof envelope.album_id !== 'string') problems.push('album_id: required (the album of the write)')
  if (envelope.action === 'create' && envelope.prior_provenance_hash !== null) problems.push('prior_provenance_hash: a create continues from nothing (null)')
  if (envelope.action === 'replace') {
    if (envelope.prior_provenance_hash === null)
      problems.push('prior_provenance_hash: a replace names the chain head it continues (the feed’s envelope_hash of the last write)')
    if (envelope.original_blob_hash === null) problems.push('original_blob_hash: a replace names the asset’s current original')
  }
  refuseIf('manifest envelope', problems)
  return envelope as Envelope
}

/**
 * Signs an envelope with the identity key; `content` is any CBOR-encodable app data the
 * manifest carries beside it (e.g. wrapped keys). It signs what it is given: check the envelope
 * with `buildEnvelope` first (`buildLifecycleWrite` and `manifestSigner` do both).
 */
export async function signManifest(identity: Signer, envelope: Envelope, content?: unknown): Promise<SignedManifest>
export async function signManifest(identity: Signer, envelope: DeleteEnvelope, content?: unknown): Promise<SignedManifest<DeleteEnvelope>>
export async function signManifest(
  identity: Signer,
  envelope: Envelope | DeleteEnvelope,
  content?: unknown,
): Promise<SignedManifest<Envelope | DeleteEnvelope>> {
  let body: Uint8Array
  try {
    body = encodeCanonical({ envelope, ...(content === undefined ? {} : { content }) })
  } catch (error) {
    throw new CofferInputError('manifest', [`content: not encodable as CBOR (${(error as Error).message})`])
  }
  const manifestCbor = encodeCanonical({ body, sig: await identity.sign(contextSigningBytes(MANIFEST_CONTEXT, body)) })
  return { envelope, manifestCbor, manifestHash: sha256Hex(manifestCbor) }
}

export interface LifecycleWriteInput {
  readonly envelope: EnvelopeInput
  /** The encrypted metadata blob this write commits; its hash fills (or must equal) metadata_blob_hash. */
  readonly metadata?: Uint8Array
  readonly content?: unknown
}

/**
 * A `create` or `replace` ready to apply: the envelope checked, the metadata blob's hash
 * committed, the manifest signed. Throws CofferInputError for what the server would refuse
 * before it looks at the album (shape, chain fields, metadata agreement).
 */
export async function buildLifecycleWrite(identity: Signer, input: LifecycleWriteInput): Promise<LifecycleWriteRequest> {
  const metadataHash = input.metadata === undefined ? null : sha256Hex(input.metadata)
  const declared = input.envelope.metadata_blob_hash ?? null
  if (input.metadata !== undefined && declared !== null && declared !== metadataHash) {
    throw new CofferInputError('lifecycle write', [`metadata_blob_hash: ${declared} is not the SHA-256 of the metadata given (${metadataHash})`])
  }
  if (input.metadata === undefined && declared !== null)
    throw new CofferInputError('lifecycle write', ['metadata: metadata_blob_hash commits a metadata blob; give its bytes'])
  const envelope = buildEnvelope({ ...input.envelope, metadata_blob_hash: metadataHash })
  const signed = await signManifest(identity, envelope, input.content)
  return {
    ...signed,
    albumId: input.envelope.album_id,
    request: {
      manifest_envelope: envelope,
      manifest_cbor: toBase64(signed.manifestCbor),
      metadata_blob: input.metadata === undefined ? null : toBase64(input.metadata),
    },
  }
}

/**
 * The `sign` callback of `CofferClient.uploadAsset`: once the bytes are hashed, the envelope
 * gets their hashes (`ciphertext_hash`, `metadata_blob_hash`), is checked and signed.
 */
export function manifestSigner(
  identity: Signer,
  envelope: Omit<EnvelopeInput, 'ciphertext_hash' | 'metadata_blob_hash'>,
  content?: unknown,
): (hashes: BundleHashes) => Promise<SignedManifest> {
  return (hashes) =>
    signManifest(identity, buildEnvelope({ ...envelope, ciphertext_hash: hashes.ciphertextHash, metadata_blob_hash: hashes.metadataBlobHash }), content)
}

export interface ReadManifest {
  /** A `create` or `replace` envelope, or a `delete` one (a feed entry whose action is `delete`). */
  readonly envelope: Envelope | DeleteEnvelope
  readonly content: unknown
  readonly manifestHash: string
}

interface ParsedManifest {
  readonly body: Uint8Array
  readonly sig: Uint8Array
  readonly fields: Record<string, unknown>
}

function parseManifest(manifestCbor: Uint8Array): ParsedManifest {
  try {
    const outer = decodeCanonical(manifestCbor) as Record<string, unknown>
    if (!(outer.body instanceof Uint8Array) || !(outer.sig instanceof Uint8Array)) throw new Error('no body or sig')
    return { body: outer.body, sig: outer.sig, fields: decodeCanonical(outer.body) as Record<string, unknown> }
  } catch {
    throw new CofferInputError('manifest', ['not a signed manifest in the SDK layout (canonical CBOR {body, sig})'])
  }
}

function acceptManifest(manifestCbor: Uint8Array, parsed: ParsedManifest, verified: boolean): ReadManifest {
  if (!verified) throw new CofferInputError('manifest', ['the signature does not verify under this identity key'])
  const envelope = parsed.fields.envelope as { action?: unknown } | null
  refuseIf('manifest envelope', schemaProblems(envelope, envelope?.action === 'delete' ? DeleteManifestEnvelope : ManifestEnvelope))
  return { envelope: envelope as Envelope | DeleteEnvelope, content: parsed.fields.content, manifestHash: sha256Hex(manifestCbor) }
}

/**
 * Reads a manifest (e.g. a feed entry's `manifest_cbor`, base64-decoded) and checks it was
 * signed by `publicKey`, with the SDK's own hybridVerify on this thread (about 5 ms: Ed25519 and
 * ML-DSA-65 on the noble libraries). Throws CofferInputError otherwise. A `delete` manifest
 * reads back with its delete envelope (check `envelope.action`). `readManifestWith` is the same
 * check with a verifier of the caller's choosing.
 */
export function readManifest(manifestCbor: Uint8Array, publicKey: Uint8Array): ReadManifest {
  const parsed = parseManifest(manifestCbor)
  return acceptManifest(manifestCbor, parsed, hybridVerify(publicKey, contextSigningBytes(MANIFEST_CONTEXT, parsed.body), parsed.sig))
}

/**
 * `readManifest` with the signature checked by `verify` (the SDK's hybridVerify unless given),
 * which may be asynchronous: e.g. node:crypto's on the libuv pool, about 1 ms off the event loop
 * instead of 5 on it. The same answers and errors as readManifest, as a promise.
 */
export async function readManifestWith(manifestCbor: Uint8Array, publicKey: Uint8Array, verify: HybridVerifier = hybridVerify): Promise<ReadManifest> {
  const parsed = parseManifest(manifestCbor)
  return acceptManifest(manifestCbor, parsed, await verify(publicKey, contextSigningBytes(MANIFEST_CONTEXT, parsed.body), parsed.sig))
}

/** The identity public key of the account a manifest names as its writer (`created_by_user`): one for the whole of an album of one account, each member's own in a shared one. */
export type WriterKeys = (userId: string) => Uint8Array | Promise<Uint8Array>

/**
 * readManifestWith, the signature checked under the key `keyOf` gives for the account the
 * envelope names as its writer (`created_by_user`): a shared album's entries are each signed by
 * their writer's own identity key. `keyOf` throws for an account that may not have written it.
 */
export async function readManifestBy(manifestCbor: Uint8Array, keyOf: WriterKeys, verify: HybridVerifier = hybridVerify): Promise<ReadManifest> {
  const parsed = parseManifest(manifestCbor)
  const writer = (parsed.fields.envelope as { created_by_user?: unknown } | null)?.created_by_user
  if (typeof writer !== 'string') throw new CofferInputError('manifest', ['the envelope names no writer (created_by_user)'])
  return acceptManifest(manifestCbor, parsed, await verify(await keyOf(writer), contextSigningBytes(MANIFEST_CONTEXT, parsed.body), parsed.sig))
}

/** A field of a manifest's envelope, its signature NOT checked (statedPlaintextSize, statedOriginalHash); undefined when unreadable. */
function statedField(manifestCbor: Uint8Array, field: string): unknown {
  try {
    return (parseManifest(manifestCbor).fields.envelope as Record<string, unknown> | null)?.[field]
  } catch {
    return undefined
  }
}

/**
 * The writer (`created_by_user`) and the `content` a manifest states, its signature NOT checked:
 * a hint to find the one entry worth a checked read among many (a shared album's record, the
 * owner's entry that records its membership). Null for bytes that are no manifest.
 */
export function statedWriting(manifestCbor: Uint8Array): { readonly writer: unknown; readonly content: unknown } | null {
  try {
    const { fields } = parseManifest(manifestCbor)
    return { writer: (fields.envelope as Record<string, unknown> | null)?.created_by_user, content: fields.content }
  } catch {
    return null
  }
}

/**
 * The plaintext size a `create` or `replace` manifest states, its signature NOT checked: a hint
 * only (the sync engine's guess whether an album may hold a file's content), never a fact to act
 * on without the checked read. Null for a manifest that states none (a delete, another layout).
 */
export function statedPlaintextSize(manifestCbor: Uint8Array): number | null {
  const size = statedField(manifestCbor, 'plaintext_size')
  return typeof size === 'number' && Number.isSafeInteger(size) ? size : null
}

/**
 * The original (its ciphertext hash) a `create` or `replace` manifest states, its signature NOT
 * checked: which version of an asset the album holds, as a hint (the sync engine's guess whether
 * the album moved on since this device last wrote; a replace then checks it on the signed read).
 * Null for a manifest that states none.
 */
export function statedOriginalHash(manifestCbor: Uint8Array): string | null {
  const hash = statedField(manifestCbor, 'ciphertext_hash')
  return typeof hash === 'string' ? hash : null
}

/** The last applied write of an asset, as a delete needs it: its envelope and its hash (the chain head). */
export interface LastWrite {
  readonly envelope: Pick<
    Envelope,
    | 'crypto_suite_id'
    | 'protocol_version'
    | 'album_id'
    | 'file_id'
    | 'amk_version'
    | 'ciphertext_hash'
    | 'plaintext_size'
    | 'chunk_size'
    | 'key_mode'
    | 'created_by_user'
  >
  /** SHA-256 of its manifest_cbor: the feed's `envelope_hash`, `manifestHash` of readManifest or of a write. */
  readonly manifestHash: string
}

export interface AssetDeletionInput {
  /** The asset's last applied write (create or replace): the delete continues from it and names its original. */
  readonly last: LastWrite
  /** The deleting device (it need not be the one that wrote the asset). */
  readonly created_by_device: string
  readonly client_version: string
  /** Defaults to the last write's; an album upgraded since then needs a version it still accepts. */
  readonly protocol_version?: string
  /** Defaults to now. */
  readonly timestamp?: string
  readonly content?: unknown
}

/** An asset deletion ready for `CofferClient.deleteAsset(albumId, fileId, request)`. */
export interface AssetDeletionRequest extends SignedManifest<DeleteEnvelope> {
  readonly albumId: string
  readonly fileId: string
  readonly request: Static<typeof AssetDeleteRequest>
}

/**
 * A signed `delete` manifest for an asset (API.md section 6, "Asset deletion"): the envelope
 * takes the asset's fields from its last write, continues from that write's hash, names its
 * original as both `ciphertext_hash` and `original_blob_hash`, and commits no metadata. Checked
 * against the server's schema; throws CofferInputError listing every problem.
 */
export async function buildAssetDeletion(identity: Signer, input: AssetDeletionInput): Promise<AssetDeletionRequest> {
  const { last } = input
  const envelope = {
    crypto_suite_id: last.envelope.crypto_suite_id,
    protocol_version: input.protocol_version ?? last.envelope.protocol_version,
    album_id: last.envelope.album_id,
    file_id: last.envelope.file_id,
    amk_version: last.envelope.amk_version,
    ciphertext_hash: last.envelope.ciphertext_hash,
    plaintext_size: last.envelope.plaintext_size,
    chunk_size: last.envelope.chunk_size,
    key_mode: last.envelope.key_mode,
    metadata_blob_hash: null,
    original_blob_hash: last.envelope.ciphertext_hash,
    created_by_user: last.envelope.created_by_user,
    created_by_device: input.created_by_device,
    client_version: input.client_version,
    timestamp: input.timestamp ?? new Date().toISOString(),
    action: 'delete',
    prior_provenance_hash: last.manifestHash,
    retention_until: null,
  }
  const problems = schemaProblems(envelope, DeleteManifestEnvelope)
  if (typeof envelope.album_id !== 'string') problems.push('last.envelope.album_id: required (the album of the asset)')
  if (!/^[0-9a-f]{64}$/.test(last.manifestHash)) problems.push("last.manifestHash: the SHA-256 of the last write's manifest_cbor (64 lowercase hex characters)")
  refuseIf('asset deletion', problems)
  const signed = await signManifest(identity, envelope as DeleteEnvelope, input.content)
  return {
    ...signed,
    albumId: envelope.album_id as string,
    fileId: envelope.file_id,
    request: { manifest_envelope: signed.envelope, manifest_cbor: toBase64(signed.manifestCbor) },
  }
}
