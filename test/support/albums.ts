// Client-like helpers for albums: a member with a published directory (so it may upload),
// a provisioned album, and the envelope + signed manifest a real client would produce.
import { randomBytes, randomUUID } from 'node:crypto'
import type { Library } from '../../src/client/albums.ts'
import { generateMasterKey } from '../../src/client/format/keys.ts'
import type { BundleHashes, ManifestEnvelopeFields } from '../../src/sdk/client.ts'
import { signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { signManifest } from '../../src/sdk/manifest.ts'
import { registered, type Member } from './actors.ts'
import type { TestServer } from './server.ts'

export interface Uploader extends Member {
  readonly userId: string
  readonly identity: IdentityKey
  readonly deviceId: string
}

/** Registers, publishes a device directory listing one device (uploads need one) and returns the member. */
export async function uploader(server: TestServer, label?: string): Promise<Uploader> {
  const member = await registered(server, label)
  const identity = IdentityKey.generate()
  const deviceId = randomUUID()
  await member.client.publishDirectory(await signDirectory(identity, { version: 1, devices: [{ device_id: deviceId, public_key: randomBytes(32) }] }), identity)
  const { user_id: userId } = await member.client.getProfile()
  return { ...member, userId, identity, deviceId }
}

/** An uploader as the photo library (src/client/albums.ts) takes it, with a fresh master key. */
export async function photoLibrary(server: TestServer, label?: string): Promise<Library> {
  const member = await uploader(server, label)
  return {
    client: member.client,
    identity: member.identity,
    identityPublicKey: member.identity.publicKey,
    userId: member.userId,
    deviceId: member.deviceId,
    masterKey: generateMasterKey(),
  }
}

export async function album(member: Member): Promise<string> {
  const albumId = randomUUID()
  await member.client.provisionAlbum(albumId)
  return albumId
}

export function ciphertext(size = 1024): Buffer {
  return randomBytes(size)
}

export interface ManifestOptions {
  readonly albumId: string
  readonly fileId?: string
  readonly action?: 'create' | 'replace'
  readonly prior?: string | null
  readonly originalBlobHash?: string | null
  readonly protocolVersion?: string
  readonly retentionUntil?: string | null
  readonly cryptoSuiteId?: number
  readonly overrides?: Partial<ManifestEnvelopeFields>
}

/**
 * The envelope and a signed manifest for a bundle, in the SDK's manifest layout, signed with the
 * member's identity key (the server never parses it). The envelope is assembled here, not by
 * the SDK's checked builder, so that tests can send what the server must refuse.
 */
export async function signedManifest(
  member: Uploader,
  hashes: BundleHashes,
  options: ManifestOptions,
): Promise<{ envelope: ManifestEnvelopeFields; manifestCbor: Uint8Array }> {
  const envelope: ManifestEnvelopeFields = {
    crypto_suite_id: options.cryptoSuiteId ?? 1,
    protocol_version: options.protocolVersion ?? '2026-06-01',
    album_id: options.albumId,
    file_id: options.fileId ?? randomUUID(),
    amk_version: 1,
    ciphertext_hash: hashes.ciphertextHash,
    plaintext_size: 1000,
    chunk_size: 65536,
    key_mode: 'derived',
    metadata_blob_hash: hashes.metadataBlobHash,
    original_blob_hash: options.originalBlobHash ?? null,
    created_by_user: member.userId,
    created_by_device: member.deviceId,
    client_version: 'coffer-tests/1',
    timestamp: new Date().toISOString(),
    action: options.action ?? 'create',
    prior_provenance_hash: options.prior ?? null,
    retention_until: options.retentionUntil ?? null,
    ...options.overrides,
  }
  return signManifest(member.identity, envelope)
}
