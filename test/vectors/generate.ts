// Writes test/vectors/client-format-v1.json from src/client/format with fixed keys, nonces and
// salts. Run only when the format changes (a new version gets a new file):
//   ./node_modules/.bin/node test/vectors/generate.ts
// client-format.test.ts checks the file against this implementation and an independent one.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { sha256 } from '@noble/hashes/sha2.js'
import { decodeCanonical, encodeCanonical } from '../../src/codec/cbor.ts'
import { advanceHead, chainContent, EMPTY_HEAD } from '../../src/client/format/album-chain.ts'
import { contentKey, contentKeys } from '../../src/client/format/content.ts'
import { albumIdFor } from '../../src/client/format/ids.ts'
import { deriveAlbumKey, wrapFileKey } from '../../src/client/format/keys.ts'
import { encodeMetadata, sealMetadata, type AssetMetadata } from '../../src/client/format/metadata.ts'
import {
  ESCROW_KDF_DEFAULTS,
  escrowKeyV1,
  escrowKeyV2,
  recoveryPhrase,
  sealEscrow,
  sealEscrowV1,
  type EscrowKdfParams,
} from '../../src/client/format/recovery.ts'
import { encryptBytes, type StreamRole } from '../../src/client/format/stream.ts'
import { safetyHalf, safetyNumber, sealShare, shareKeysAad } from '../../src/client/format/share.ts'
import { generateXWingKeyPair, xwingEncapsulate } from '../../src/client/format/xwing.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')
const fromHexString = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'hex'))
const pattern = (length: number, start: number): Uint8Array => Uint8Array.from({ length }, (_, i) => (start + i) & 0xff)

const masterKey = pattern(32, 0x00)
const albumId = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0'
const fileId = '11111111-2222-4333-8444-555555555555'
const epoch = 1
const fileKey = pattern(32, 0x40)
const wrapNonce = pattern(12, 0x80)
const albumKey = await deriveAlbumKey(masterKey, albumId, epoch)

const streams: { name: string; role: StreamRole; chunk_size: number; salt: string; plaintext: string; ciphertext: string }[] = []
const stream = async (name: string, role: StreamRole, chunkSize: number, plaintext: Uint8Array, saltStart: number) => {
  const salt = pattern(16, saltStart)
  const ciphertext = await encryptBytes(fileKey, plaintext, { role, chunkSize, salt })
  streams.push({ name, role, chunk_size: chunkSize, salt: hex(salt), plaintext: hex(plaintext), ciphertext: hex(ciphertext) })
}
await stream('empty', 'original', 16, new Uint8Array(0), 0xa0)
await stream('one byte', 'original', 16, Uint8Array.of(0x2a), 0xa1)
await stream('exactly one chunk', 'original', 16, pattern(16, 0x61), 0xa2)
await stream('one chunk and one byte', 'original', 16, pattern(17, 0x61), 0xa3)
await stream('three chunks, the last short', 'original', 16, pattern(40, 0x30), 0xa4)
await stream('exactly two chunks', 'original', 16, pattern(32, 0x30), 0xa5)
await stream('a derivative', 'derivative', 16, pattern(20, 0x10), 0xa6)
await stream('default chunk size', 'original', 65_536, pattern(100, 0x00), 0xa7)

const metadata: AssetMetadata = {
  name: 'IMG_0001.jpg',
  size: 40,
  type: 'image/jpeg',
  modified: 1_767_225_600_000,
  captured: 1_767_222_000_123,
  width: 4032,
  height: 3024,
  blobs: [
    { kind: 'original', hash: pattern(32, 0xc0), size: 40, type: 'image/jpeg' },
    { kind: 'thumbnail', hash: pattern(32, 0xe0), size: 20, type: 'image/webp' },
  ],
}
const metadataSalt = pattern(16, 0xb0)
const metadataWrapNonce = pattern(12, 0x90)
const metadataBlob = await sealMetadata(albumKey, { albumId, fileId }, fileKey, metadata, { wrapNonce: metadataWrapNonce, salt: metadataSalt })

// Content keys: an original whose plaintext is known first is encrypted under keys that follow
// from it; at two chunk sizes (the salt depends on it), each with the original's stream.
const contentCases = await Promise.all(
  [
    { plaintext: pattern(40, 0x30), chunkSize: 16 },
    { plaintext: pattern(40, 0x30), chunkSize: 65_536 },
  ].map(async ({ plaintext, chunkSize }) => {
    const derived = await contentKeys(masterKey, sha256(plaintext), chunkSize)
    return {
      plaintext: hex(plaintext),
      plaintext_sha256: hex(sha256(plaintext)),
      chunk_size: chunkSize,
      content_mac: hex(derived.contentMac),
      file_key: hex(derived.fileKey),
      salt: hex(derived.salt),
      ciphertext: hex(await encryptBytes(derived.fileKey, plaintext, { role: 'original', chunkSize, salt: derived.salt })),
    }
  }),
)

// Metadata version 2: the same metadata with the content mac of the first content case.
const metadataV2: AssetMetadata = { ...metadata, contentMac: Uint8Array.from(Buffer.from(contentCases[0]!.content_mac, 'hex')) }
const metadataV2Salt = pattern(16, 0xb8)
const metadataV2WrapNonce = pattern(12, 0x98)
const metadataV2Blob = await sealMetadata(albumKey, { albumId, fileId }, fileKey, metadataV2, { wrapNonce: metadataV2WrapNonce, salt: metadataV2Salt })

// Metadata version 3: version 2's with the source of its capture time and its offset (-07:00: a
// negative integer; the wall clock, 2025-12-31 16:00:00.123, is another day than in UTC), and
// the camera facts (every field: 1/250 s, f/2.8, ISO 100, 35 mm), marked a favourite.
const metadataV3: AssetMetadata = {
  ...metadataV2,
  favourite: true,
  capturedSource: 'exif-original',
  capturedOffset: -420,
  camera: {
    make: 'Canon',
    model: 'Canon EOS R6',
    lens: 'RF35mm F1.8 MACRO IS STM',
    exposureTime: [1, 250],
    fNumberTenths: 28,
    iso: 100,
    focalLengthTenths: 350,
  },
}
const metadataV3Salt = pattern(16, 0xbc)
const metadataV3WrapNonce = pattern(12, 0x9c)
const metadataV3Blob = await sealMetadata(albumKey, { albumId, fileId }, fileKey, metadataV3, { wrapNonce: metadataV3WrapNonce, salt: metadataV3Salt })

// Metadata version 4: a video's (decision 0069), version 3 with its duration (12.345 s), its
// poster frame as the thumbnail, its capture time unknown (video files carry no EXIF).
const metadataV4: AssetMetadata = {
  name: 'VID_0002.mp4',
  size: 40,
  type: 'video/mp4',
  modified: 1_767_225_600_000,
  captured: null,
  capturedSource: null,
  capturedOffset: null,
  width: 1920,
  height: 1080,
  duration: 12_345,
  contentMac: metadataV2.contentMac!,
  blobs: [
    { kind: 'original', hash: pattern(32, 0xc4), size: 40, type: 'video/mp4' },
    { kind: 'thumbnail', hash: pattern(32, 0xe4), size: 20, type: 'image/webp' },
  ],
}
const metadataV4Salt = pattern(16, 0xbd)
const metadataV4WrapNonce = pattern(12, 0x9d)
const metadataV4Blob = await sealMetadata(albumKey, { albumId, fileId }, fileKey, metadataV4, { wrapNonce: metadataV4WrapNonce, salt: metadataV4Salt })

// Metadata version 5 (decision 0071): a photo brought in from a Google Takeout export, its date
// taken from the sidecar's photoTakenTime (2019-07-04 10:34:56 UTC) at the offset of its EXIF
// wall clock (+02:00), its caption and favourite mark from the sidecar too.
const metadataV5: AssetMetadata = {
  name: 'Photos from 2019/IMG_0003.jpg',
  size: 30,
  type: 'image/jpeg',
  modified: 1_767_225_600_000,
  captured: 1_562_236_496_000,
  capturedSource: 'takeout',
  capturedOffset: 120,
  width: 4032,
  height: 3024,
  description: 'Grandma at 80, in the garden',
  favourite: true,
  contentMac: metadataV2.contentMac!,
  blobs: [
    { kind: 'original', hash: pattern(32, 0xc5), size: 30, type: 'image/jpeg' },
    { kind: 'thumbnail', hash: pattern(32, 0xe5), size: 20, type: 'image/webp' },
  ],
}
const metadataV5Salt = pattern(16, 0xbe)
const metadataV5WrapNonce = pattern(12, 0x9e)
const metadataV5Blob = await sealMetadata(albumKey, { albumId, fileId }, fileKey, metadataV5, { wrapNonce: metadataV5WrapNonce, salt: metadataV5Salt })

// An album's record (docs/client-format.md, "Albums"): version 3 metadata of the empty content,
// named as the album, with the cover the person chose (an asset id of the album). Its mac and
// blob hash are patterns: the vector pins the map.
const emptyMac = pattern(32, 0xa0)
const albumRecord: AssetMetadata = {
  name: 'Spain 2019',
  size: 0,
  type: 'application/vnd.coffer.album',
  modified: null,
  captured: null,
  capturedSource: null,
  capturedOffset: null,
  width: null,
  height: null,
  contentMac: emptyMac,
  cover: fileId,
  blobs: [{ kind: 'original', hash: pattern(32, 0xa1), size: 0, type: 'application/vnd.coffer.album' }],
}

const xwingSeed = pattern(32, 0x07)
const xwingRandomness = pattern(64, 0x33)
const pair = generateXWingKeyPair(xwingSeed)
const encapsulated = xwingEncapsulate(pair.publicKey, xwingRandomness)

const recoveryKey = pattern(32, 0xd0)
const userId = '9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d'
const identitySeeds = pattern(64, 0x50)
const escrowNonce = pattern(12, 0xf0)
// Version 2 at small costs (two lanes, to pin their order) and at the defaults setup uses.
const escrowsV2: { name: string; params: EscrowKdfParams; salt: Uint8Array; nonce: Uint8Array }[] = [
  { name: 'small costs, two lanes', params: { memoryKiB: 256, passes: 2, lanes: 2 }, salt: pattern(16, 0x20), nonce: pattern(12, 0x60) },
  { name: 'the defaults', params: ESCROW_KDF_DEFAULTS, salt: pattern(16, 0x21), nonce: pattern(12, 0x61) },
]

const vectors = {
  format: 'coffer client format v1 (docs/client-format.md)',
  keys: {
    master_key: hex(masterKey),
    album_id: albumId,
    amk_version: epoch,
    album_key: hex(albumKey),
    file_id: fileId,
    file_key: hex(fileKey),
    wrap_nonce: hex(wrapNonce),
    wrapped_file_key: hex(await wrapFileKey(albumKey, { albumId, fileId }, fileKey, wrapNonce)),
  },
  streams,
  metadata: {
    value: { ...metadata, blobs: metadata.blobs.map((blob) => ({ ...blob, hash: hex(blob.hash) })) },
    cbor: hex(encodeMetadata(metadata)),
    wrap_nonce: hex(metadataWrapNonce),
    salt: hex(metadataSalt),
    blob: hex(metadataBlob),
  },
  metadata_v2: {
    value: { ...metadata, blobs: metadata.blobs.map((blob) => ({ ...blob, hash: hex(blob.hash) })), content_mac: contentCases[0]!.content_mac },
    cbor: hex(encodeMetadata(metadataV2)),
    wrap_nonce: hex(metadataV2WrapNonce),
    salt: hex(metadataV2Salt),
    blob: hex(metadataV2Blob),
  },
  metadata_v3: {
    value: {
      ...metadata,
      blobs: metadata.blobs.map((blob) => ({ ...blob, hash: hex(blob.hash) })),
      content_mac: contentCases[0]!.content_mac,
      favourite: true,
      captured_source: metadataV3.capturedSource,
      captured_offset: metadataV3.capturedOffset,
      camera: {
        make: metadataV3.camera!.make,
        model: metadataV3.camera!.model,
        lens: metadataV3.camera!.lens,
        exposure_time: metadataV3.camera!.exposureTime,
        f_number_tenths: metadataV3.camera!.fNumberTenths,
        iso: metadataV3.camera!.iso,
        focal_length_tenths: metadataV3.camera!.focalLengthTenths,
      },
    },
    cbor: hex(encodeMetadata(metadataV3)),
    wrap_nonce: hex(metadataV3WrapNonce),
    salt: hex(metadataV3Salt),
    blob: hex(metadataV3Blob),
  },
  metadata_v4: {
    value: {
      ...(({ contentMac: _mac, capturedSource: _source, capturedOffset: _offset, ...fields }) => fields)(metadataV4),
      content_mac: contentCases[0]!.content_mac,
      captured_source: null,
      captured_offset: null,
      favourite: false,
      blobs: metadataV4.blobs.map((blob) => ({ ...blob, hash: hex(blob.hash) })),
    },
    cbor: hex(encodeMetadata(metadataV4)),
    wrap_nonce: hex(metadataV4WrapNonce),
    salt: hex(metadataV4Salt),
    blob: hex(metadataV4Blob),
  },
  metadata_v5: {
    value: {
      ...(({ contentMac: _mac, capturedSource: _source, capturedOffset: _offset, ...fields }) => fields)(metadataV5),
      content_mac: contentCases[0]!.content_mac,
      captured_source: metadataV5.capturedSource,
      captured_offset: metadataV5.capturedOffset,
      blobs: metadataV5.blobs.map((blob) => ({ ...blob, hash: hex(blob.hash) })),
    },
    cbor: hex(encodeMetadata(metadataV5)),
    wrap_nonce: hex(metadataV5WrapNonce),
    salt: hex(metadataV5Salt),
    blob: hex(metadataV5Blob),
  },
  album_record: {
    value: {
      ...(({ contentMac: _mac, capturedSource: _source, capturedOffset: _offset, ...fields }) => fields)(albumRecord),
      content_mac: hex(emptyMac),
      captured_source: null,
      captured_offset: null,
      // Written in every version 3 metadata (decision 0061), a record's too.
      favourite: false,
      blobs: albumRecord.blobs.map((blob) => ({ ...blob, hash: hex(blob.hash) })),
    },
    cbor: hex(encodeMetadata(albumRecord)),
  },
  // The album ids of a name: attempt 0 is the name's own; 1 and 2 follow when a renamed album holds the ones before.
  album_ids: await Promise.all([0, 1, 2].map(async (attempt) => ({ name: 'Holiday', attempt, album_id: await albumIdFor(masterKey, 'Holiday', attempt) }))),
  // A feed of three entries (sync_seq 1, 2, 5: a feed's numbers need not be consecutive), the digest after each, and the
  // `content` a manifest written after reading the first two carries.
  album_chain: (() => {
    let head = EMPTY_HEAD
    const entries = [1, 2, 5].map((syncSeq, i) => {
      const manifestHash = hex(sha256(pattern(40, 0x20 * (i + 1))))
      head = advanceHead(head, syncSeq, manifestHash)
      return { sync_seq: syncSeq, manifest_hash: manifestHash, count: head.count, digest: hex(head.digest) }
    })
    const afterTwo = { seq: 2, count: 2, digest: fromHexString(entries[1]!.digest) }
    return { entries, commitment: { seq: 2, count: 2, digest: entries[1]!.digest, content_cbor: hex(encodeCanonical(chainContent(afterTwo))) } }
  })(),
  content_keys: {
    content_key: hex(await contentKey(masterKey)),
    cases: contentCases,
  },
  share: await (async () => {
    // An owner shares two epochs of an album's keys with one device of a member (docs/client-format.md, "Sharing an album").
    const ownerSeeds = pattern(64, 0x11)
    const ownerKey = IdentityKey.fromSeeds(ownerSeeds)
    const memberKey = IdentityKey.fromSeeds(pattern(64, 0x51))
    const facts = {
      albumId: '6a6b6c6d-7e7f-4081-8283-848586878889',
      ownerId: '0a0b0c0d-1e1f-4021-8223-242526272829',
      memberId: '1a1b1c1d-2e2f-4031-8233-343536373839',
      role: 'viewer' as const,
      memberKeyHash: sha256(memberKey.publicKey),
      firstEpoch: 1,
      lastEpoch: 2,
    }
    const albumKeys = new Map([
      [1, pattern(32, 0x90)],
      [2, pattern(32, 0xb0)],
    ])
    const deviceId = '2a2b2c2d-3e3f-4041-8243-444546474849'
    const device = generateXWingKeyPair(pattern(32, 0x33))
    const randomness = pattern(64, 0x70)
    const nonce = pattern(12, 0xd0)
    const share = await sealShare(ownerKey, {
      ...facts,
      albumKeys,
      recipients: [{ deviceId, encryptionKey: device.publicKey }],
      fixed: new Map([[deviceId, { randomness, nonce }]]),
    })
    const owner = { userId: facts.ownerId, identityKey: ownerKey.publicKey }
    const member = { userId: facts.memberId, identityKey: memberKey.publicKey }
    return {
      owner_identity_seeds: hex(ownerSeeds),
      member_identity_seeds: hex(pattern(64, 0x51)),
      album_id: facts.albumId,
      owner_id: facts.ownerId,
      member_id: facts.memberId,
      role: facts.role,
      epochs: [facts.firstEpoch, facts.lastEpoch],
      album_keys: [...albumKeys.values()].map(hex),
      device_id: deviceId,
      device_xwing_seed: hex(pattern(32, 0x33)),
      encapsulation_randomness: hex(randomness),
      nonce: hex(nonce),
      shared_secret: hex(xwingEncapsulate(device.publicKey, randomness).sharedSecret),
      aad: hex(shareKeysAad(facts, deviceId)),
      body: hex((decodeCanonical(share) as { body: Uint8Array }).body),
      safety: {
        owner_half: safetyHalf(owner.userId, owner.identityKey),
        member_half: safetyHalf(member.userId, member.identityKey),
        number: safetyNumber(owner, member),
      },
    }
  })(),
  xwing: {
    seed: hex(xwingSeed),
    public_key: hex(pair.publicKey),
    encapsulation_randomness: hex(xwingRandomness),
    ciphertext: hex(encapsulated.cipherText),
    shared_secret: hex(encapsulated.sharedSecret),
  },
  recovery: {
    recovery_key: hex(recoveryKey),
    phrase: recoveryPhrase(recoveryKey),
    escrow_key: hex(await escrowKeyV1(recoveryKey)),
    user_id: userId,
    master_key: hex(masterKey),
    identity_seeds: hex(identitySeeds),
    nonce: hex(escrowNonce),
    escrow: hex(await sealEscrowV1(recoveryKey, userId, { masterKey, identitySeeds }, escrowNonce)),
    escrow_v2: await Promise.all(
      escrowsV2.map(async ({ name, params, salt, nonce }) => ({
        name,
        m: params.memoryKiB,
        t: params.passes,
        p: params.lanes,
        salt: hex(salt),
        nonce: hex(nonce),
        escrow_key: hex(await escrowKeyV2(recoveryKey, salt, params)),
        escrow: hex(await sealEscrow(recoveryKey, userId, { masterKey, identitySeeds }, { params, salt, nonce })),
      })),
    ),
  },
}
await writeFile(path.join(import.meta.dirname, 'client-format-v1.json'), `${JSON.stringify(vectors, null, 2)}\n`)
