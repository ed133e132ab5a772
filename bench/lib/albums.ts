// What a client does before it can write to an album, done through the SDK as a real client
// does it (the same steps as test/support/albums.ts): an account with a published device
// directory (uploads need one, and it binds the identity key that revoke-all proofs use), an
// album, signed manifests, and large blobs streamed from a generator.
import { encode } from 'cborg'
import { createHash, randomBytes, randomUUID, type Hash } from 'node:crypto'
import { CofferClient, type BundleHashes, type ManifestEnvelopeFields } from '../../src/sdk/client.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import type { CofferChild } from './coffer.ts'

export const PASSWORD = 'correct horse battery staple'

export interface Uploader {
  readonly email: string
  readonly client: CofferClient
  readonly userId: string
  readonly identity: IdentityKey
  readonly deviceId: string
}

/** The current access token of a signed-in client. */
export function accessToken(client: CofferClient): string {
  const token = client.tokens?.access_token
  if (token === undefined) throw new Error('the client is not signed in')
  return token
}

/** Registers (one argon2 hash), publishes a device directory (binding a fresh identity key). */
export async function uploader(server: CofferChild): Promise<Uploader> {
  const email = `bench-${randomUUID()}@example.test`
  const client = new CofferClient({ baseUrl: server.ready.url })
  await client.register(email, PASSWORD)
  const identity = IdentityKey.generate()
  await client.publishDirectory(encode({ directory_version: 1 }), identity)
  const { user_id: userId } = await client.getProfile()
  return { email, client, userId, identity, deviceId: randomUUID() }
}

export async function album(member: Uploader): Promise<string> {
  const albumId = randomUUID()
  await member.client.provisionAlbum(albumId)
  return albumId
}

/** Where a write puts its asset in the chain: a `create` of a new asset by default. */
export interface ChainPosition {
  readonly action?: 'create' | 'replace'
  readonly fileId?: string
  /** A `replace`: the asset's chain head (the SHA-256 of its last applied manifest). */
  readonly prior?: string | null
  /** A `replace`: the asset's current original. */
  readonly originalBlobHash?: string | null
}

/**
 * The envelope of a `create` (or of a `replace`, per `chain`) and the manifest a client signs with
 * its identity key: canonical CBOR of { body: CBOR of { envelope, nonce }, sig } (the server
 * stores and hashes it, never parses it).
 */
export async function signedManifest(
  member: Pick<Uploader, 'userId' | 'identity' | 'deviceId'>,
  albumId: string,
  hashes: BundleHashes,
  chain: ChainPosition = {},
): Promise<{ envelope: ManifestEnvelopeFields; manifestCbor: Uint8Array }> {
  const envelope: ManifestEnvelopeFields = {
    crypto_suite_id: 1,
    protocol_version: '2026-06-01',
    album_id: albumId,
    file_id: chain.fileId ?? randomUUID(),
    amk_version: 1,
    ciphertext_hash: hashes.ciphertextHash,
    plaintext_size: 1000,
    chunk_size: 65536,
    key_mode: 'derived',
    metadata_blob_hash: hashes.metadataBlobHash,
    original_blob_hash: chain.originalBlobHash ?? null,
    created_by_user: member.userId,
    created_by_device: member.deviceId,
    client_version: 'coffer-bench/1',
    timestamp: new Date().toISOString(),
    action: chain.action ?? 'create',
    prior_provenance_hash: chain.prior ?? null,
    retention_until: null,
  }
  const body = encode({ envelope, nonce: randomBytes(8) })
  const signature = await member.identity.sign(body)
  return { envelope, manifestCbor: encode({ body, sig: signature }) }
}

/** The JSON body of `POST /v1/albums/{id}/ops` for a signed manifest. */
export function opBody(signed: { envelope: ManifestEnvelopeFields; manifestCbor: Uint8Array }): string {
  return JSON.stringify(opRequest(signed))
}

function opRequest(signed: { envelope: ManifestEnvelopeFields; manifestCbor: Uint8Array }) {
  return { manifest_envelope: signed.envelope, manifest_cbor: Buffer.from(signed.manifestCbor).toString('base64'), metadata_blob: null }
}

/** An upload session whose bundle is one original blob (`hash`, `size` bytes); its id. */
export async function openOriginalSession(member: Uploader, albumId: string, hash: string, size: number): Promise<string> {
  const session = await member.client.openUploadSession({
    album_id: albumId,
    crypto_suite_id: 1,
    ciphertext_hash: hash,
    blobs: [{ role: 'original', hash, size }],
  })
  return session.upload_id
}

/** Makes an uploaded bundle a live asset (a signed `create` whose original is `ciphertextHash`); the asset's id. */
export async function createAsset(member: Uploader, albumId: string, ciphertextHash: string): Promise<string> {
  const signed = await signedManifest(member, albumId, { ciphertextHash, derivativeHashes: [], metadataBlobHash: null })
  await member.client.applyManifest(albumId, opRequest(signed))
  return signed.envelope.file_id
}

const MIB = 1024 * 1024
/** The size of the chunks a large blob is streamed in (a file read stream's default). */
export const STREAM_CHUNK_BYTES = 64 * 1024

/**
 * Large blobs that never sit in memory: `mib - 1` copies of one random MiB, then a random MiB
 * of their own (so that every blob has its own hash). The SHA-256 state after the shared part
 * is computed once and copied, so a new blob costs hashing only its last MiB.
 */
export class BlobFactory {
  readonly mib: number
  readonly bytes: number
  readonly #base = randomBytes(MIB)
  readonly #prefix: Hash

  constructor(mib: number) {
    if (!Number.isInteger(mib) || mib < 1) throw new Error('a blob of whole MiB, at least one')
    this.mib = mib
    this.bytes = mib * MIB
    this.#prefix = createHash('sha256')
    for (let i = 0; i < mib - 1; i++) this.#prefix.update(this.#base)
  }

  /** A new blob: its hash and a way to stream it (as many times as needed). */
  next(): { readonly hash: string; readonly tail: Buffer; stream(): AsyncGenerator<Buffer> } {
    const tail = randomBytes(MIB)
    const hash = this.#prefix.copy().update(tail).digest('hex')
    return { hash, tail, stream: () => this.stream(tail) }
  }

  async *stream(tail: Buffer): AsyncGenerator<Buffer> {
    for (let i = 0; i < this.mib; i++) {
      const source = i === this.mib - 1 ? tail : this.#base
      for (let offset = 0; offset < MIB; offset += STREAM_CHUNK_BYTES) yield source.subarray(offset, offset + STREAM_CHUNK_BYTES)
    }
  }

  /** Bytes `start..end` (inclusive) of the blob whose last MiB is `tail`. */
  slice(tail: Buffer, start: number, end: number): Buffer {
    const parts: Buffer[] = []
    for (let at = start; at <= end; ) {
      const mibIndex = Math.floor(at / MIB)
      const source = mibIndex === this.mib - 1 ? tail : this.#base
      const from = at % MIB
      const to = Math.min(MIB, from + (end - at + 1))
      parts.push(source.subarray(from, to))
      at += to - from
    }
    return Buffer.concat(parts)
  }
}
