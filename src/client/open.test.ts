// openAsset, openDerivative and openOriginal: an asset opened from bytes the caller fetched (the
// web app fetches on its page and opens in a worker), with every check restoreFile makes.
import { sha256 } from '@noble/hashes/sha2.js'
import { describe, expect, it } from 'vitest'
import { toBase64, toHex } from '../sdk/bytes.ts'
import { IdentityKey } from '../sdk/identity.ts'
import { buildLifecycleWrite } from '../sdk/manifest.ts'
import { CRYPTO_SUITE_V1, FileTransferError, openAsset, openDerivative, openOriginal } from './files.ts'
import { deriveAlbumKey, generateFileKey, generateMasterKey } from './format/keys.ts'
import { sealMetadata } from './format/metadata.ts'
import { encryptBytes } from './format/stream.ts'

const albumId = '0190b6a2-4c1e-8f3a-9b2d-3e4f5a6b7c8d'
const fileId = '0190b6a2-4c1e-8a11-9b2d-111111111111'
const identity = IdentityKey.generate()
const masterKey = generateMasterKey()
const keys = { masterKey, albumId, identityPublicKey: identity.publicKey }

/** An asset as backupFile writes it: an original of 3 chunks, a thumbnail, the metadata, a signed manifest. */
async function asset() {
  const fileKey = generateFileKey()
  const original = Uint8Array.from({ length: 40_000 }, (_, i) => (i * 7) & 0xff)
  const thumbnail = Uint8Array.from({ length: 900 }, (_, i) => (i * 13) & 0xff)
  const sealedOriginal = await encryptBytes(fileKey, original, { role: 'original', chunkSize: 16_384 })
  const sealedThumbnail = await encryptBytes(fileKey, thumbnail, { role: 'derivative' })
  const metadataBlob = await sealMetadata(await deriveAlbumKey(masterKey, albumId, 1), { albumId, fileId }, fileKey, {
    name: 'IMG_0001.jpg',
    size: original.length,
    type: 'image/jpeg',
    modified: null,
    captured: 1_620_000_000_000,
    width: 640,
    height: 480,
    blobs: [
      { kind: 'original', hash: sha256(sealedOriginal), size: original.length, type: 'image/jpeg' },
      { kind: 'thumbnail', hash: sha256(sealedThumbnail), size: thumbnail.length, type: 'image/webp' },
    ],
  })
  const write = await buildLifecycleWrite(identity, {
    envelope: {
      crypto_suite_id: CRYPTO_SUITE_V1,
      protocol_version: '2026-06-01',
      album_id: albumId,
      file_id: fileId,
      amk_version: 1,
      ciphertext_hash: toHex(sha256(sealedOriginal)),
      plaintext_size: original.length,
      chunk_size: 16_384,
      key_mode: 'wrapped',
      created_by_user: '0190b6a2-4c1e-8f3a-9b2d-222222222222',
      created_by_device: '0190b6a2-4c1e-8f3a-9b2d-333333333333',
      client_version: 'coffer-tests/1',
      action: 'create',
    },
    metadata: metadataBlob,
  })
  return { entry: { asset_id: fileId, manifest_cbor: toBase64(write.manifestCbor) }, metadataBlob, original, sealedOriginal, thumbnail, sealedThumbnail }
}

const failure = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => null,
    (error: unknown) => error,
  )

describe('opening an asset from fetched bytes', () => {
  it('opens the metadata, a derivative and the original, each checked', async () => {
    const made = await asset()
    const opened = await openAsset(keys, made.entry, made.metadataBlob)
    expect(opened).toMatchObject({ assetId: fileId, metadataBlobSize: made.metadataBlob.length })
    expect(opened.metadata).toMatchObject({ name: 'IMG_0001.jpg', width: 640, height: 480, captured: 1_620_000_000_000 })
    // Plain data: it survives the structured clone between a page and a worker.
    const cloned = structuredClone(opened)
    expect(await openDerivative(cloned, 'thumbnail', made.sealedThumbnail)).toEqual(made.thumbnail)
    expect(await openOriginal(cloned, made.sealedOriginal)).toEqual(made.original)
  })

  it('refuses a manifest another key signed, a metadata blob the manifest does not commit, and blobs that are not the ones named', async () => {
    const made = await asset()
    const other = await asset()
    const stranger = { ...keys, identityPublicKey: IdentityKey.generate().publicKey }
    expect(await failure(openAsset(stranger, made.entry, made.metadataBlob))).toBeInstanceOf(FileTransferError)
    expect(String(await failure(openAsset(keys, made.entry, other.metadataBlob)))).toMatch(/metadata blob is not the one the manifest commits/)
    expect(String(await failure(openAsset({ ...keys, albumId: '0190b6a2-4c1e-8f3a-9b2d-444444444444' }, made.entry, made.metadataBlob)))).toMatch(/names album/)

    const opened = await openAsset(keys, made.entry, made.metadataBlob)
    expect(String(await failure(openDerivative(opened, 'thumbnail', other.sealedThumbnail)))).toMatch(
      /IMG_0001\.jpg.*thumbnail: the thumbnail is not the one the metadata names/,
    )
    expect(String(await failure(openDerivative(opened, 'preview', made.sealedThumbnail)))).toMatch(/preview: the asset has none/)
    expect(String(await failure(openOriginal(opened, made.sealedOriginal.subarray(0, made.sealedOriginal.length - 1))))).toMatch(/IMG_0001\.jpg/)
    expect(String(await failure(openOriginal(opened, other.sealedOriginal)))).toMatch(/IMG_0001\.jpg/)
  })
})
