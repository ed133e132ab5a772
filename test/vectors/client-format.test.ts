// Pins client format v1 (docs/client-format.md): test/vectors/client-format-v1.json holds fixed
// keys, nonces, salts and inputs with their bytes. src/client/format must reproduce them, and an
// independent implementation written from the document (@noble/ciphers AES-GCM, @noble/hashes
// HKDF, HMAC and SHA-3, ML-KEM-768 and X25519 composed by hand into X-Wing, BIP-39 words counted
// out by hand, argon2id of node:crypto) must make and open them: a wrong byte in the file fails.
// All of it twice: on WebCrypto (browsers) and on node:crypto's primitives (the CLI installs them).
import { argon2Sync } from 'node:crypto'
import { decode as decodeCbor, encode as encodeCbor, rfc8949EncodeOptions } from 'cborg'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { gcm } from '@noble/ciphers/aes.js'
import { ed25519, x25519 } from '@noble/curves/ed25519.js'
import { hkdf } from '@noble/hashes/hkdf.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha256, sha512 } from '@noble/hashes/sha2.js'
import { sha3_256, shake256 } from '@noble/hashes/sha3.js'
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js'
import { ml_kem768 } from '@noble/post-quantum/ml-kem.js'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { describe, expect, it } from 'vitest'
import { decodeCanonical, encodeCanonical } from '../../src/codec/cbor.ts'
import { advanceHead, chainContent, committedHead, EMPTY_HEAD } from '../../src/client/format/album-chain.ts'
import { contentKey, contentKeys } from '../../src/client/format/content.ts'
import { deriveAlbumKey, unwrapFileKey, wrapFileKey } from '../../src/client/format/keys.ts'
import { encodeMetadata, openMetadata, sealMetadata, type AssetMetadata, type CapturedSource } from '../../src/client/format/metadata.ts'
import { decryptBytes, encryptBytes, type StreamRole } from '../../src/client/format/stream.ts'
import { ClientFormatError } from '../../src/client/format/errors.ts'
import { onEachPrimitives } from '../support/primitives.ts'
import {
  escrowKeyV1,
  escrowKeyV2,
  openEscrow,
  recoveryKeyFromPhrase,
  recoveryPhrase,
  sealEscrow,
  sealEscrowV1,
  type Argon2id,
} from '../../src/client/format/recovery.ts'
import { openShare, safetyNumber, sealShare, shareKeysAad } from '../../src/client/format/share.ts'
import { generateXWingKeyPair, xwingDecapsulate, xwingEncapsulate } from '../../src/client/format/xwing.ts'
import { signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { buildAssetDeletion, buildLifecycleWrite } from '../../src/sdk/manifest.ts'

interface Vectors {
  keys: {
    master_key: string
    album_id: string
    amk_version: number
    album_key: string
    file_id: string
    file_key: string
    wrap_nonce: string
    wrapped_file_key: string
  }
  streams: { name: string; role: StreamRole; chunk_size: number; salt: string; plaintext: string; ciphertext: string }[]
  metadata: {
    value: Omit<AssetMetadata, 'blobs'> & { blobs: { kind: string; hash: string; size: number; type: string }[] }
    cbor: string
    wrap_nonce: string
    salt: string
    blob: string
  }
  album_record: {
    value: Omit<AssetMetadata, 'blobs' | 'contentMac' | 'capturedSource' | 'capturedOffset'> & {
      blobs: { kind: string; hash: string; size: number; type: string }[]
      content_mac: string
      captured_source: null
      captured_offset: null
    }
    cbor: string
  }
  album_ids: { name: string; attempt: number; album_id: string }[]
  album_chain: {
    entries: { sync_seq: number; manifest_hash: string; count: number; digest: string }[]
    commitment: { seq: number; count: number; digest: string; content_cbor: string }
  }
  metadata_v2: {
    value: Omit<AssetMetadata, 'blobs' | 'contentMac'> & { blobs: { kind: string; hash: string; size: number; type: string }[]; content_mac: string }
    cbor: string
    wrap_nonce: string
    salt: string
    blob: string
  }
  metadata_v3: {
    value: Omit<AssetMetadata, 'blobs' | 'contentMac' | 'capturedSource' | 'capturedOffset' | 'camera'> & {
      blobs: { kind: string; hash: string; size: number; type: string }[]
      content_mac: string
      favourite: true
      captured_source: CapturedSource | null
      captured_offset: number | null
      camera: {
        make: string
        model: string
        lens: string
        exposure_time: [number, number]
        f_number_tenths: number
        iso: number
        focal_length_tenths: number
      }
    }
    cbor: string
    wrap_nonce: string
    salt: string
    blob: string
  }
  metadata_v4: {
    value: Omit<AssetMetadata, 'blobs' | 'contentMac' | 'capturedSource' | 'capturedOffset'> & {
      blobs: { kind: string; hash: string; size: number; type: string }[]
      content_mac: string
      favourite: false
      captured_source: CapturedSource | null
      captured_offset: number | null
    }
    cbor: string
    wrap_nonce: string
    salt: string
    blob: string
  }
  metadata_v5: {
    value: Omit<AssetMetadata, 'blobs' | 'contentMac' | 'capturedSource' | 'capturedOffset'> & {
      blobs: { kind: string; hash: string; size: number; type: string }[]
      content_mac: string
      captured_source: CapturedSource | null
      captured_offset: number | null
    }
    cbor: string
    wrap_nonce: string
    salt: string
    blob: string
  }
  content_keys: {
    content_key: string
    cases: { plaintext: string; plaintext_sha256: string; chunk_size: number; content_mac: string; file_key: string; salt: string; ciphertext: string }[]
  }
  xwing: { seed: string; public_key: string; encapsulation_randomness: string; ciphertext: string; shared_secret: string }
  share: {
    owner_identity_seeds: string
    member_identity_seeds: string
    album_id: string
    owner_id: string
    member_id: string
    role: 'viewer' | 'contributor'
    epochs: [number, number]
    album_keys: string[]
    device_id: string
    device_xwing_seed: string
    encapsulation_randomness: string
    nonce: string
    shared_secret: string
    aad: string
    body: string
    safety: { owner_half: string; member_half: string; number: string }
  }
  recovery: {
    recovery_key: string
    phrase: string
    escrow_key: string
    user_id: string
    master_key: string
    identity_seeds: string
    nonce: string
    escrow: string
    escrow_v2: { name: string; m: number; t: number; p: number; salt: string; nonce: string; escrow_key: string; escrow: string }[]
  }
}

const vectors = JSON.parse(readFileSync(path.join(import.meta.dirname, 'client-format-v1.json'), 'utf8')) as Vectors
const bytes = (hex: string): Uint8Array => Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16))
const hex = (data: Uint8Array): string => Array.from(data, (b) => b.toString(16).padStart(2, '0')).join('')
const cat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((part) => [...part]))
const ascii = (text: string): Uint8Array => new TextEncoder().encode(text)
const u32 = (n: number): Uint8Array => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff)
const uuid = (text: string): Uint8Array => bytes(text.replaceAll('-', ''))
const { keys } = vectors
const ids = { albumId: keys.album_id, fileId: keys.file_id }
const metadataValue: AssetMetadata = { ...vectors.metadata.value, blobs: vectors.metadata.value.blobs.map((blob) => ({ ...blob, hash: bytes(blob.hash) })) }
const { content_mac: contentMacHex, ...metadataV2Fields } = vectors.metadata_v2.value
const metadataV2Value: AssetMetadata = {
  ...metadataV2Fields,
  blobs: metadataV2Fields.blobs.map((blob) => ({ ...blob, hash: bytes(blob.hash) })),
  contentMac: bytes(contentMacHex),
}
const { content_mac: v3MacHex, captured_source: v3Source, captured_offset: v3Offset, camera: v3Camera, ...metadataV3Fields } = vectors.metadata_v3.value
const metadataV3Value: AssetMetadata = {
  ...metadataV3Fields,
  blobs: metadataV3Fields.blobs.map((blob) => ({ ...blob, hash: bytes(blob.hash) })),
  contentMac: bytes(v3MacHex),
  capturedSource: v3Source,
  capturedOffset: v3Offset,
  camera: {
    make: v3Camera.make,
    model: v3Camera.model,
    lens: v3Camera.lens,
    exposureTime: v3Camera.exposure_time,
    fNumberTenths: v3Camera.f_number_tenths,
    iso: v3Camera.iso,
    focalLengthTenths: v3Camera.focal_length_tenths,
  },
}

/** The format, written again from docs/client-format.md on other libraries. */
const independent = {
  albumKey: (master: Uint8Array, albumId: string, epoch: number) =>
    hkdf(sha256, master, new Uint8Array(0), cat(ascii('coffer/v1/album-key'), Uint8Array.of(0), uuid(albumId), u32(epoch)), 32),
  wrapAad: (albumId: string, fileId: string) => cat(ascii('coffer/v1/file-key'), Uint8Array.of(0), uuid(albumId), uuid(fileId)),
  wrap(albumKey: Uint8Array, albumId: string, fileId: string, fileKey: Uint8Array, nonce: Uint8Array) {
    return cat(Uint8Array.of(1), nonce, gcm(albumKey, nonce, this.wrapAad(albumId, fileId)).encrypt(fileKey))
  },
  unwrap(albumKey: Uint8Array, albumId: string, fileId: string, wrapped: Uint8Array) {
    expect(wrapped.length).toBe(61)
    expect(wrapped[0]).toBe(1)
    return gcm(albumKey, wrapped.subarray(1, 13), this.wrapAad(albumId, fileId)).decrypt(wrapped.subarray(13))
  },
  roles: { original: 1, derivative: 2, metadata: 3 } as Record<string, number>,
  nonce: (index: number, last: boolean) => cat(new Uint8Array(7), u32(index), Uint8Array.of(last ? 1 : 0)),
  encrypt(fileKey: Uint8Array, role: string, chunkSize: number, salt: Uint8Array, plaintext: Uint8Array) {
    const header = cat(Uint8Array.of(1, this.roles[role]!), u32(chunkSize), salt)
    const key = hkdf(sha256, fileKey, salt, cat(ascii('coffer/v1/stream'), Uint8Array.of(0, this.roles[role]!)), 32)
    const count = Math.max(1, Math.ceil(plaintext.length / chunkSize))
    const chunks = Array.from({ length: count }, (_, i) =>
      gcm(key, this.nonce(i, i === count - 1), header).encrypt(plaintext.subarray(i * chunkSize, (i + 1) * chunkSize)),
    )
    return cat(header, ...chunks)
  },
  decrypt(fileKey: Uint8Array, stream: Uint8Array) {
    const header = stream.subarray(0, 22)
    expect(header[0]).toBe(1)
    const chunkSize = new DataView(header.buffer, header.byteOffset + 2, 4).getUint32(0)
    const key = hkdf(sha256, fileKey, header.subarray(6, 22), cat(ascii('coffer/v1/stream'), Uint8Array.of(0, header[1]!)), 32)
    const body = stream.subarray(22)
    const sealed = chunkSize + 16
    const count = Math.max(1, Math.ceil(body.length / sealed))
    const parts = Array.from({ length: count }, (_, i) => gcm(key, this.nonce(i, i === count - 1), header).decrypt(body.subarray(i * sealed, (i + 1) * sealed)))
    return cat(...parts)
  },
  contentKey: (master: Uint8Array) => hkdf(sha256, master, new Uint8Array(0), ascii('coffer/v1/content'), 32),
  /** The content mac, the original's file key and its stream salt (docs/client-format.md, "Content keys"). */
  contentKeys(master: Uint8Array, plaintext: Uint8Array, chunkSize: number) {
    const key = this.contentKey(master)
    const mac = hmac(sha256, key, sha256(plaintext))
    return {
      mac,
      fileKey: hkdf(sha256, key, mac, ascii('coffer/v1/content/file-key'), 32),
      salt: hkdf(sha256, key, mac, cat(ascii('coffer/v1/content/salt'), Uint8Array.of(0), u32(chunkSize)), 16),
    }
  },
  /** The identity key's signature over UTF-8 context || 0x00 || body: Ed25519 (64) || ML-DSA-65 (3309), both verifying. */
  signedBy(publicKey: Uint8Array, context: string, body: Uint8Array, sig: Uint8Array) {
    expect([publicKey.length, sig.length]).toEqual([1984, 3373])
    const message = cat(ascii(context), Uint8Array.of(0), body)
    return ed25519.verify(sig.subarray(0, 64), message, publicKey.subarray(0, 32)) && ml_dsa65.verify(sig.subarray(64), message, publicKey.subarray(32))
  },
  /** Canonical CBOR read as the document says: decoded, and the same bytes when encoded again in RFC 8949 order. */
  canonical(cbor: Uint8Array): Record<string, unknown> {
    const value = decodeCbor(cbor) as Record<string, unknown>
    expect(hex(encodeCbor(value, rfc8949EncodeOptions))).toBe(hex(cbor))
    return value
  },
  xwingLabel: bytes('5c2e2f2f5e5c'),
  xwingKeys(seed: Uint8Array) {
    const expanded = shake256(seed, { dkLen: 96 })
    const mlkem = ml_kem768.keygen(expanded.subarray(0, 64))
    const skX = expanded.subarray(64, 96)
    const pkX = x25519.getPublicKey(skX)
    return { skM: mlkem.secretKey, pkM: mlkem.publicKey, skX, pkX, publicKey: cat(mlkem.publicKey, pkX) }
  },
  xwingEncapsulate(publicKey: Uint8Array, randomness: Uint8Array) {
    const pkM = publicKey.subarray(0, 1184)
    const pkX = publicKey.subarray(1184)
    const { cipherText: ctM, sharedSecret: ssM } = ml_kem768.encapsulate(pkM, randomness.subarray(0, 32))
    const ekX = randomness.subarray(32, 64)
    const ctX = x25519.getPublicKey(ekX)
    const ssX = x25519.getSharedSecret(ekX, pkX)
    return { cipherText: cat(ctM, ctX), sharedSecret: sha3_256(cat(ssM, ssX, ctX, pkX, this.xwingLabel)) }
  },
  xwingDecapsulate(cipherText: Uint8Array, seed: Uint8Array) {
    const { skM, skX, pkX } = this.xwingKeys(seed)
    const ctX = cipherText.subarray(1088)
    const ssM = ml_kem768.decapsulate(cipherText.subarray(0, 1088), skM)
    return sha3_256(cat(ssM, x25519.getSharedSecret(skX, ctX), ctX, pkX, this.xwingLabel))
  },
  /** BIP-39: the entropy's bits, then the first ENT/32 bits of its SHA-256, read as 11-bit word indices. */
  phrase(entropy: Uint8Array) {
    const bits = [...entropy, ...sha256(entropy)]
      .map((b) => b.toString(2).padStart(8, '0'))
      .join('')
      .slice(0, entropy.length * 8 + entropy.length / 4)
    return (bits.match(/.{11}/g) ?? []).map((index) => wordlist[Number.parseInt(index, 2)]).join(' ')
  },
  escrowKey: (recoveryKey: Uint8Array) => hkdf(sha256, recoveryKey, new Uint8Array(0), ascii('coffer/v1/escrow'), 32),
  escrowAad: (userId: string) => cat(ascii('coffer/v1/escrow'), Uint8Array.of(0), uuid(userId)),
  openEscrow(recoveryKey: Uint8Array, userId: string, escrow: Uint8Array) {
    expect(escrow.length).toBe(125)
    expect(escrow[0]).toBe(1)
    const plain = gcm(this.escrowKey(recoveryKey), escrow.subarray(1, 13), this.escrowAad(userId)).decrypt(escrow.subarray(13))
    return { masterKey: plain.subarray(0, 32), identitySeeds: plain.subarray(32) }
  },
  /** Version 2: argon2id (node:crypto, OpenSSL's) of the recovery key under the header's m, t, p and salt. */
  escrowKeyV2: (recoveryKey: Uint8Array, salt: Uint8Array, m: number, t: number, p: number) =>
    new Uint8Array(argon2Sync('argon2id', { message: recoveryKey, nonce: salt, memory: m, passes: t, parallelism: p, tagLength: 32 })),
  openEscrowV2(recoveryKey: Uint8Array, userId: string, escrow: Uint8Array) {
    expect(escrow.length).toBe(153)
    expect(escrow[0]).toBe(2)
    const view = new DataView(escrow.buffer, escrow.byteOffset)
    const key = this.escrowKeyV2(recoveryKey, escrow.subarray(13, 29), view.getUint32(1), view.getUint32(5), view.getUint32(9))
    const plain = gcm(key, escrow.subarray(29, 41), cat(this.escrowAad(userId), escrow.subarray(0, 29))).decrypt(escrow.subarray(41))
    return { masterKey: plain.subarray(0, 32), identitySeeds: plain.subarray(32) }
  },
}

/** node:crypto's argon2id, to keep the tests that run it many times quick. */
const fastArgon2id: Argon2id = async (password, salt, { memoryKiB, passes, lanes }) =>
  new Uint8Array(argon2Sync('argon2id', { message: password, nonce: salt, memory: memoryKiB, passes, parallelism: lanes, tagLength: 32 }))

onEachPrimitives('client format v1 test vectors (test/vectors/client-format-v1.json)', () => {
  it('covers the cases the document promises', () => {
    expect(vectors.streams.map((s) => s.plaintext.length / 2)).toEqual(expect.arrayContaining([0, 1, 16, 17, 32, 40]))
    expect(vectors.streams.some((s) => s.chunk_size === 65_536)).toBe(true)
  })

  it('keys: this implementation reproduces the album key and the wrapped file key, and unwraps it', async () => {
    const albumKey = await deriveAlbumKey(bytes(keys.master_key), keys.album_id, keys.amk_version)
    expect(hex(albumKey)).toBe(keys.album_key)
    expect(hex(await wrapFileKey(albumKey, ids, bytes(keys.file_key), bytes(keys.wrap_nonce)))).toBe(keys.wrapped_file_key)
    expect(hex(await unwrapFileKey(albumKey, ids, bytes(keys.wrapped_file_key)))).toBe(keys.file_key)
  })

  it('keys: an independent implementation derives, wraps and unwraps the same bytes', () => {
    const albumKey = independent.albumKey(bytes(keys.master_key), keys.album_id, keys.amk_version)
    expect(hex(albumKey)).toBe(keys.album_key)
    expect(hex(independent.wrap(albumKey, keys.album_id, keys.file_id, bytes(keys.file_key), bytes(keys.wrap_nonce)))).toBe(keys.wrapped_file_key)
    expect(hex(independent.unwrap(albumKey, keys.album_id, keys.file_id, bytes(keys.wrapped_file_key)))).toBe(keys.file_key)
  })

  for (const vector of vectors.streams) {
    it(`stream "${vector.name}": both implementations make exactly its bytes and open them`, async () => {
      const fileKey = bytes(keys.file_key)
      const options = { role: vector.role, chunkSize: vector.chunk_size, salt: bytes(vector.salt) }
      expect(hex(await encryptBytes(fileKey, bytes(vector.plaintext), options))).toBe(vector.ciphertext)
      expect(hex(await decryptBytes(fileKey, bytes(vector.ciphertext), { role: vector.role, chunkSize: vector.chunk_size }))).toBe(vector.plaintext)
      expect(hex(independent.encrypt(fileKey, vector.role, vector.chunk_size, bytes(vector.salt), bytes(vector.plaintext)))).toBe(vector.ciphertext)
      expect(hex(independent.decrypt(fileKey, bytes(vector.ciphertext)))).toBe(vector.plaintext)
    })
  }

  it('album chain: this implementation gives each digest, and the commitment a manifest carries as its content', () => {
    let head = EMPTY_HEAD
    for (const entry of vectors.album_chain.entries) {
      head = advanceHead(head, entry.sync_seq, entry.manifest_hash)
      expect({ count: head.count, digest: hex(head.digest) }).toEqual({ count: entry.count, digest: entry.digest })
    }
    const { commitment } = vectors.album_chain
    expect(hex(encodeCanonical(chainContent({ seq: commitment.seq, count: commitment.count, digest: bytes(commitment.digest) })))).toBe(commitment.content_cbor)
    expect(committedHead(decodeCanonical(bytes(commitment.content_cbor)))).toEqual({ seq: 2, count: 2, digest: bytes(commitment.digest) })
  })

  it('album chain: an independent implementation (SHA-256 of @noble/hashes, cborg) gives the same digests and reads the commitment', () => {
    let digest = new Uint8Array(32)
    for (const entry of vectors.album_chain.entries) {
      const seq = new Uint8Array(8)
      new DataView(seq.buffer).setBigUint64(0, BigInt(entry.sync_seq))
      digest = sha256(new Uint8Array([...new TextEncoder().encode('coffer/v1/album-chain'), 0, ...digest, ...seq, ...bytes(entry.manifest_hash)]))
      expect(hex(digest)).toBe(entry.digest)
    }
    const { commitment } = vectors.album_chain
    expect(decodeCbor(bytes(commitment.content_cbor))).toEqual({ chain: { seq: commitment.seq, count: commitment.count, digest: bytes(commitment.digest) } })
    expect(hex(encodeCbor({ chain: { seq: 2, count: 2, digest: bytes(commitment.digest) } }, rfc8949EncodeOptions))).toBe(commitment.content_cbor)
  })

  it('metadata blob: this implementation seals exactly its bytes and opens them', async () => {
    const albumKey = bytes(keys.album_key)
    expect(hex(encodeMetadata(metadataValue))).toBe(vectors.metadata.cbor)
    const blob = await sealMetadata(albumKey, ids, bytes(keys.file_key), metadataValue, {
      wrapNonce: bytes(vectors.metadata.wrap_nonce),
      salt: bytes(vectors.metadata.salt),
    })
    expect(hex(blob)).toBe(vectors.metadata.blob)
    const opened = await openMetadata(albumKey, ids, blob)
    expect(hex(opened.fileKey)).toBe(keys.file_key)
    expect(opened.metadata).toEqual(metadataValue)
  })

  it('metadata blob: an independent implementation opens it into the documented CBOR map', () => {
    const blob = bytes(vectors.metadata.blob)
    const fileKey = independent.unwrap(bytes(keys.album_key), keys.album_id, keys.file_id, blob.subarray(0, 61))
    expect(hex(fileKey)).toBe(keys.file_key)
    const stream = blob.subarray(61)
    expect(stream[1]).toBe(3) // role: metadata
    const cbor = independent.decrypt(fileKey, stream)
    expect(hex(cbor)).toBe(vectors.metadata.cbor)
    expect(decodeCanonical(cbor)).toEqual({ v: 1, ...metadataValue })
  })

  it('metadata blob v2 (content_mac): this implementation seals exactly its bytes and opens them', async () => {
    const albumKey = bytes(keys.album_key)
    const v2 = vectors.metadata_v2
    expect(hex(encodeMetadata(metadataV2Value))).toBe(v2.cbor)
    const blob = await sealMetadata(albumKey, ids, bytes(keys.file_key), metadataV2Value, { wrapNonce: bytes(v2.wrap_nonce), salt: bytes(v2.salt) })
    expect(hex(blob)).toBe(v2.blob)
    expect((await openMetadata(albumKey, ids, blob)).metadata).toEqual(metadataV2Value)
  })

  it('metadata blob v2: an independent implementation opens it into the documented CBOR map, v 2 with content_mac', () => {
    const blob = bytes(vectors.metadata_v2.blob)
    const fileKey = independent.unwrap(bytes(keys.album_key), keys.album_id, keys.file_id, blob.subarray(0, 61))
    const cbor = independent.decrypt(fileKey, blob.subarray(61))
    expect(hex(cbor)).toBe(vectors.metadata_v2.cbor)
    const { contentMac, ...rest } = metadataV2Value
    expect(decodeCanonical(cbor)).toEqual({ v: 2, content_mac: contentMac, ...rest })
    // The mac is the one "Content keys" derives for the content the metadata describes.
    expect(hex(contentMac!)).toBe(vectors.content_keys.cases[0]!.content_mac)
  })

  it('metadata blob v3 (captured_source, captured_offset, camera): this implementation seals exactly its bytes and opens them', async () => {
    const albumKey = bytes(keys.album_key)
    const v3 = vectors.metadata_v3
    expect(hex(encodeMetadata(metadataV3Value))).toBe(v3.cbor)
    const blob = await sealMetadata(albumKey, ids, bytes(keys.file_key), metadataV3Value, { wrapNonce: bytes(v3.wrap_nonce), salt: bytes(v3.salt) })
    expect(hex(blob)).toBe(v3.blob)
    expect((await openMetadata(albumKey, ids, blob)).metadata).toEqual(metadataV3Value)
  })

  it('metadata blob v4 (a video: duration): this implementation seals exactly its bytes, and an independent implementation opens it into the documented CBOR map', async () => {
    const v4 = vectors.metadata_v4
    const { content_mac: mac, captured_source: source, captured_offset: offset, favourite: _favourite, ...fields } = v4.value
    const value: AssetMetadata = {
      ...fields,
      blobs: fields.blobs.map((blob) => ({ ...blob, hash: bytes(blob.hash) })),
      contentMac: bytes(mac),
      capturedSource: source,
      capturedOffset: offset,
    }
    const albumKey = bytes(keys.album_key)
    expect(hex(encodeMetadata(value))).toBe(v4.cbor)
    const blob = await sealMetadata(albumKey, ids, bytes(keys.file_key), value, { wrapNonce: bytes(v4.wrap_nonce), salt: bytes(v4.salt) })
    expect(hex(blob)).toBe(v4.blob)
    expect((await openMetadata(albumKey, ids, blob)).metadata).toEqual(value)
    const fileKey = independent.unwrap(albumKey, keys.album_id, keys.file_id, blob.subarray(0, 61))
    const cbor = independent.decrypt(fileKey, blob.subarray(61))
    expect(decodeCanonical(cbor)).toEqual({ v: 4, ...v4.value, content_mac: bytes(mac), blobs: value.blobs })
    expect((decodeCanonical(cbor) as { duration: number }).duration).toBe(12_345)
  })

  it('metadata blob v5 (an import: a sidecar date, a description): this implementation seals exactly its bytes, and an independent implementation opens it into the documented CBOR map', async () => {
    const v5 = vectors.metadata_v5
    const { content_mac: mac, captured_source: source, captured_offset: offset, ...fields } = v5.value
    const value: AssetMetadata = {
      ...fields,
      blobs: fields.blobs.map((blob) => ({ ...blob, hash: bytes(blob.hash) })),
      contentMac: bytes(mac),
      capturedSource: source,
      capturedOffset: offset,
    }
    const albumKey = bytes(keys.album_key)
    expect(hex(encodeMetadata(value))).toBe(v5.cbor)
    const blob = await sealMetadata(albumKey, ids, bytes(keys.file_key), value, { wrapNonce: bytes(v5.wrap_nonce), salt: bytes(v5.salt) })
    expect(hex(blob)).toBe(v5.blob)
    expect((await openMetadata(albumKey, ids, blob)).metadata).toEqual(value)
    const fileKey = independent.unwrap(albumKey, keys.album_id, keys.file_id, blob.subarray(0, 61))
    const cbor = independent.decrypt(fileKey, blob.subarray(61))
    expect(decodeCanonical(cbor)).toEqual({ v: 5, ...v5.value, content_mac: bytes(mac), blobs: value.blobs })
    expect(decodeCanonical(cbor)).toMatchObject({ captured_source: 'takeout', description: 'Grandma at 80, in the garden', favourite: true })
  })

  it('album record (metadata v3 with cover): this implementation writes exactly its CBOR, the documented map', () => {
    const { content_mac: mac, captured_source: _source, captured_offset: _offset, ...fields } = vectors.album_record.value
    const record: AssetMetadata = {
      ...fields,
      capturedSource: null,
      capturedOffset: null,
      contentMac: bytes(mac),
      blobs: fields.blobs.map((blob) => ({ ...blob, hash: bytes(blob.hash) })),
    }
    expect(hex(encodeMetadata(record))).toBe(vectors.album_record.cbor)
    const { blobs, ...rest } = vectors.album_record.value
    expect(decodeCbor(bytes(vectors.album_record.cbor))).toEqual({
      v: 3,
      ...rest,
      content_mac: bytes(mac),
      blobs: blobs.map((blob) => ({ ...blob, hash: bytes(blob.hash) })),
    })
    expect(rest.cover).toBe(keys.file_id)
  })

  it('metadata blob v3: an independent implementation opens it into the documented CBOR map, v 3 with content_mac, captured_source, captured_offset, camera and favourite', () => {
    const blob = bytes(vectors.metadata_v3.blob)
    const fileKey = independent.unwrap(bytes(keys.album_key), keys.album_id, keys.file_id, blob.subarray(0, 61))
    const cbor = independent.decrypt(fileKey, blob.subarray(61))
    expect(hex(cbor)).toBe(vectors.metadata_v3.cbor)
    const { contentMac, capturedSource, capturedOffset, camera: _camera, ...rest } = metadataV3Value
    expect(decodeCanonical(cbor)).toEqual({
      v: 3,
      content_mac: contentMac,
      captured_source: capturedSource,
      captured_offset: capturedOffset,
      camera: vectors.metadata_v3.value.camera,
      ...rest,
    })
    // The camera map's keys in canonical order (shorter first, then bytewise), its fractions and tenths as unsigned integers.
    expect(Object.keys((decodeCanonical(cbor) as { camera: object }).camera)).toEqual([
      'iso',
      'lens',
      'make',
      'model',
      'exposure_time',
      'f_number_tenths',
      'focal_length_tenths',
    ])
    expect(vectors.metadata_v3.value.camera).toMatchObject({ exposure_time: [1, 250], f_number_tenths: 28, focal_length_tenths: 350 })
    expect([capturedSource, capturedOffset]).toEqual(['exif-original', -420])
    // favourite: "favourite" (text of 9), then true (0xf5).
    expect(vectors.metadata_v3.cbor).toContain(`${hex(cat(Uint8Array.of(0x69), ascii('favourite')))}f5`)
    // captured_offset, a negative integer, is CBOR major type 1: "captured_offset" (text of 15), then 0x39 0x01a3 (-1 - 419).
    expect(vectors.metadata_v3.cbor).toContain(`${hex(cat(Uint8Array.of(0x6f), ascii('captured_offset')))}3901a3`)
  })

  it('content keys: this implementation derives the content key, mac, file key and salt, and encrypts the original to the vector', async () => {
    const master = bytes(keys.master_key)
    expect(hex(await contentKey(master))).toBe(vectors.content_keys.content_key)
    for (const vector of vectors.content_keys.cases) {
      expect(hex(sha256(bytes(vector.plaintext)))).toBe(vector.plaintext_sha256)
      const derived = await contentKeys(master, bytes(vector.plaintext_sha256), vector.chunk_size)
      expect([hex(derived.contentMac), hex(derived.fileKey), hex(derived.salt)]).toEqual([vector.content_mac, vector.file_key, vector.salt])
      const options = { role: 'original' as const, chunkSize: vector.chunk_size, salt: derived.salt }
      expect(hex(await encryptBytes(derived.fileKey, bytes(vector.plaintext), options))).toBe(vector.ciphertext)
    }
  })

  it('content keys: an independent implementation (HKDF and HMAC of @noble/hashes) derives the same and encrypts to the same bytes', () => {
    const master = bytes(keys.master_key)
    expect(hex(independent.contentKey(master))).toBe(vectors.content_keys.content_key)
    expect(new Set(vectors.content_keys.cases.map((vector) => vector.chunk_size)).size).toBe(2)
    for (const vector of vectors.content_keys.cases) {
      const derived = independent.contentKeys(master, bytes(vector.plaintext), vector.chunk_size)
      expect([hex(derived.mac), hex(derived.fileKey), hex(derived.salt)]).toEqual([vector.content_mac, vector.file_key, vector.salt])
      expect(hex(independent.encrypt(derived.fileKey, 'original', vector.chunk_size, derived.salt, bytes(vector.plaintext)))).toBe(vector.ciphertext)
      expect(hex(independent.decrypt(derived.fileKey, bytes(vector.ciphertext)))).toBe(vector.plaintext)
    }
  })

  describe('manifests and the device directory: an independent reader of the SDK layout the document gives', () => {
    const identity = IdentityKey.fromSeeds(bytes(vectors.recovery.identity_seeds))
    const envelopeKeys = [
      'action',
      'album_id',
      'amk_version',
      'chunk_size',
      'client_version',
      'created_by_device',
      'created_by_user',
      'crypto_suite_id',
      'ciphertext_hash',
      'file_id',
      'key_mode',
      'metadata_blob_hash',
      'original_blob_hash',
      'plaintext_size',
      'prior_provenance_hash',
      'protocol_version',
      'retention_until',
      'timestamp',
    ].sort()
    const envelope = {
      crypto_suite_id: 1,
      protocol_version: '2026-01-01',
      album_id: keys.album_id,
      file_id: keys.file_id,
      amk_version: 1,
      ciphertext_hash: 'c0'.repeat(32),
      plaintext_size: 40,
      chunk_size: 65_536,
      key_mode: 'wrapped' as const,
      created_by_user: vectors.recovery.user_id,
      created_by_device: '22222222-3333-4444-8555-666666666666',
      client_version: 'coffer-client/1',
      action: 'create' as const,
    }

    it('a create: {body, sig}; body {envelope} with every field, nulls explicit; signed over "coffer/manifest/v1" 0x00 body', async () => {
      const metadata = bytes(vectors.metadata_v2.blob)
      const { manifestCbor } = await buildLifecycleWrite(identity, { envelope, metadata })
      const outer = independent.canonical(manifestCbor)
      expect(Object.keys(outer).sort()).toEqual(['body', 'sig'])
      const body = outer.body as Uint8Array
      expect(independent.signedBy(identity.publicKey, 'coffer/manifest/v1', body, outer.sig as Uint8Array)).toBe(true)
      expect(independent.signedBy(identity.publicKey, 'coffer/device-directory/v1', body, outer.sig as Uint8Array)).toBe(false)
      const fields = independent.canonical(body)
      expect(Object.keys(fields)).toEqual(['envelope'])
      const written = fields.envelope as Record<string, unknown>
      expect(Object.keys(written).sort()).toEqual(envelopeKeys)
      expect(written).toMatchObject({
        ...envelope,
        metadata_blob_hash: hex(sha256(metadata)),
        original_blob_hash: null,
        prior_provenance_hash: null,
        retention_until: null,
      })
      expect(written.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    })

    it("a delete: the last write's fields, its original named twice, no metadata, chained to its hash", async () => {
      const last = await buildLifecycleWrite(identity, { envelope, metadata: bytes(vectors.metadata.blob) })
      const { manifestCbor } = await buildAssetDeletion(identity, {
        last: { envelope: last.envelope, manifestHash: last.manifestHash },
        created_by_device: envelope.created_by_device,
        client_version: 'coffer-client/1',
      })
      const outer = independent.canonical(manifestCbor)
      expect(independent.signedBy(identity.publicKey, 'coffer/manifest/v1', outer.body as Uint8Array, outer.sig as Uint8Array)).toBe(true)
      const written = independent.canonical(outer.body as Uint8Array).envelope as Record<string, unknown>
      expect(Object.keys(written).sort()).toEqual(envelopeKeys)
      expect(written).toMatchObject({
        action: 'delete',
        ciphertext_hash: envelope.ciphertext_hash,
        original_blob_hash: envelope.ciphertext_hash,
        metadata_blob_hash: null,
        prior_provenance_hash: hex(sha256(last.manifestCbor)),
        retention_until: null,
      })
    })

    it('a directory: {directory_version, body, sig}, the version signed inside the body, absent fields left out', async () => {
      const devices = [
        { device_id: envelope.created_by_device, public_key: identity.publicKey, encryption_key: bytes(vectors.xwing.public_key), name: 'Laptop' },
        { device_id: '33333333-4444-4555-8666-777777777777', public_key: identity.publicKey, added_at: '2026-03-01T14:02:11.000Z' },
      ]
      const signed = await signDirectory(identity, { version: 7, devices })
      const outer = independent.canonical(signed)
      expect(Object.keys(outer).sort()).toEqual(['body', 'directory_version', 'sig'])
      expect(outer.directory_version).toBe(7)
      const body = outer.body as Uint8Array
      expect(independent.signedBy(identity.publicKey, 'coffer/device-directory/v1', body, outer.sig as Uint8Array)).toBe(true)
      const fields = independent.canonical(body)
      expect(Object.keys(fields).sort()).toEqual(['devices', 'directory_version'])
      expect(fields.directory_version).toBe(7)
      expect(fields.devices).toEqual(devices)
      expect(Object.keys((fields.devices as object[])[1]!).sort()).toEqual(['added_at', 'device_id', 'public_key'])
    })
  })

  it('X-Wing: both the library and a composition of ML-KEM-768, X25519 and SHA3-256 give the vector', () => {
    const seed = bytes(vectors.xwing.seed)
    const pair = generateXWingKeyPair(seed)
    expect(hex(pair.publicKey)).toBe(vectors.xwing.public_key)
    expect(hex(independent.xwingKeys(seed).publicKey)).toBe(vectors.xwing.public_key)
    const randomness = bytes(vectors.xwing.encapsulation_randomness)
    const mine = xwingEncapsulate(pair.publicKey, randomness)
    const theirs = independent.xwingEncapsulate(pair.publicKey, randomness)
    expect([hex(mine.cipherText), hex(mine.sharedSecret)]).toEqual([vectors.xwing.ciphertext, vectors.xwing.shared_secret])
    expect([hex(theirs.cipherText), hex(theirs.sharedSecret)]).toEqual([vectors.xwing.ciphertext, vectors.xwing.shared_secret])
    expect(hex(xwingDecapsulate(bytes(vectors.xwing.ciphertext), seed))).toBe(vectors.xwing.shared_secret)
    expect(hex(independent.xwingDecapsulate(bytes(vectors.xwing.ciphertext), seed))).toBe(vectors.xwing.shared_secret)
  })

  const { share } = vectors
  const shareIdentities = () => ({
    owner: IdentityKey.fromSeeds(bytes(share.owner_identity_seeds)),
    member: IdentityKey.fromSeeds(bytes(share.member_identity_seeds)),
  })

  it('share: this implementation seals exactly the body, and the member’s device opens it to both epochs’ keys', async () => {
    const { owner, member } = shareIdentities()
    const device = generateXWingKeyPair(bytes(share.device_xwing_seed))
    const facts = {
      albumId: share.album_id,
      ownerId: share.owner_id,
      memberId: share.member_id,
      role: share.role,
      memberKeyHash: sha256(member.publicKey),
      firstEpoch: share.epochs[0],
      lastEpoch: share.epochs[1],
    }
    const sealed = await sealShare(owner, {
      ...facts,
      albumKeys: new Map(share.album_keys.map((key, i) => [share.epochs[0] + i, bytes(key)])),
      recipients: [{ deviceId: share.device_id, encryptionKey: device.publicKey }],
      fixed: new Map([[share.device_id, { randomness: bytes(share.encapsulation_randomness), nonce: bytes(share.nonce) }]]),
    })
    expect(hex((decodeCanonical(sealed) as { body: Uint8Array }).body)).toBe(share.body)
    expect(hex(shareKeysAad(facts, share.device_id))).toBe(share.aad)
    const opened = await openShare(sealed, {
      ownerIdentityKey: owner.publicKey,
      memberId: share.member_id,
      memberIdentityKey: member.publicKey,
      deviceId: share.device_id,
      xwingSecret: bytes(share.device_xwing_seed),
    })
    expect([...opened.albumKeys.values()].map(hex)).toEqual(share.album_keys)
    expect(safetyNumber({ userId: share.owner_id, identityKey: owner.publicKey }, { userId: share.member_id, identityKey: member.publicKey })).toBe(
      share.safety.number,
    )
  })

  it('share: an independent implementation (cborg, X-Wing composed by hand, HKDF and AES-GCM of @noble) reads the body, opens the part, and derives the safety number', () => {
    const { owner, member } = shareIdentities()
    const body = decodeCbor(bytes(share.body)) as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(['album_id', 'epochs', 'member', 'member_key', 'owner', 'recipients', 'role', 'v'])
    expect(body).toMatchObject({ v: 1, album_id: share.album_id, owner: share.owner_id, member: share.member_id, role: share.role, epochs: share.epochs })
    expect(hex(body.member_key as Uint8Array)).toBe(hex(sha256(member.publicKey)))
    const [part] = body.recipients as Array<{ device_id: string; encapsulation: Uint8Array; sealed: Uint8Array }>
    expect(part!.device_id).toBe(share.device_id)
    expect(hex(independent.xwingDecapsulate(part!.encapsulation, bytes(share.device_xwing_seed)))).toBe(share.shared_secret)
    const aad = cat(ascii('coffer/v1/share/keys'), Uint8Array.of(0), uuid(share.album_id), uuid(share.member_id), uuid(share.device_id), u32(1), u32(2))
    expect(hex(aad)).toBe(share.aad)
    const key = hkdf(sha256, bytes(share.shared_secret), new Uint8Array(0), aad, 32)
    expect(hex(part!.sealed.subarray(0, 12))).toBe(share.nonce)
    expect(hex(gcm(key, part!.sealed.subarray(0, 12), aad).decrypt(part!.sealed.subarray(12)))).toBe(share.album_keys.join(''))
    const half = (userId: string, identityKey: Uint8Array): string => {
      let hash = sha512(cat(Uint8Array.of(0, 0), identityKey, uuid(userId)))
      for (let i = 0; i < 5200; i++) hash = sha512(cat(hash, identityKey))
      return Array.from({ length: 6 }, (_, chunk) =>
        String(Number(BigInt(`0x${hex(hash.subarray(chunk * 5, chunk * 5 + 5))}`) % 100_000n)).padStart(5, '0'),
      ).join('')
    }
    expect([half(share.owner_id, owner.publicKey), half(share.member_id, member.publicKey)]).toEqual([share.safety.owner_half, share.safety.member_half])
    expect(share.safety.number.replaceAll(' ', '')).toBe([share.safety.owner_half, share.safety.member_half].sort().join(''))
  })

  const { recovery } = vectors

  it("recovery phrase: the library and a count of BIP-39 bits give the vector's 24 words, and BIP-39's own 256-bit vectors", () => {
    expect(recoveryPhrase(bytes(recovery.recovery_key))).toBe(recovery.phrase)
    expect(independent.phrase(bytes(recovery.recovery_key))).toBe(recovery.phrase)
    expect(recovery.phrase.split(' ')).toHaveLength(24)
    expect(hex(recoveryKeyFromPhrase(recovery.phrase))).toBe(recovery.recovery_key)
    // The reference vectors of BIP-39 (trezor/python-mnemonic, vectors.json), 256-bit entropy.
    const reference: [number, string][] = [
      [
        0x00,
        'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon art',
      ],
      [
        0x7f,
        'legal winner thank year wave sausage worth useful legal winner thank year wave sausage worth useful legal winner thank year wave sausage worth title',
      ],
      [
        0x80,
        'letter advice cage absurd amount doctor acoustic avoid letter advice cage absurd amount doctor acoustic avoid letter advice cage absurd amount doctor acoustic bless',
      ],
      [0xff, 'zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo vote'],
    ]
    for (const [fill, words] of reference) {
      expect(recoveryPhrase(new Uint8Array(32).fill(fill))).toBe(words)
      expect(independent.phrase(new Uint8Array(32).fill(fill))).toBe(words)
    }
  })

  const escrowedKeys = { masterKey: bytes(recovery.master_key), identitySeeds: bytes(recovery.identity_seeds) }
  const recoveryKey = bytes(recovery.recovery_key)
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: unknown) => (error instanceof ClientFormatError ? error.code : error),
    )

  it('covers version 2 at the defaults setup uses and at other costs', () => {
    expect(recovery.escrow_v2.map((v) => [v.m, v.t, v.p])).toEqual(
      expect.arrayContaining([
        [65_536, 3, 1],
        [256, 2, 2],
      ]),
    )
  })

  it.each(recovery.escrow_v2.map((v) => [v.name, v] as const))(
    "escrow v2 (%s): this implementation derives the key with argon2id and seals exactly the vector's bytes, and opens them",
    async (_name, vector) => {
      const params = { memoryKiB: vector.m, passes: vector.t, lanes: vector.p }
      // The portable argon2id (@noble/hashes) seals and opens; the key alone is checked on node:crypto's, to spare a run of seconds.
      expect(hex(await escrowKeyV2(recoveryKey, bytes(vector.salt), params, fastArgon2id))).toBe(vector.escrow_key)
      expect(hex(await sealEscrow(recoveryKey, recovery.user_id, escrowedKeys, { params, salt: bytes(vector.salt), nonce: bytes(vector.nonce) }))).toBe(
        vector.escrow,
      )
      const opened = await openEscrow(recoveryKeyFromPhrase(recovery.phrase), recovery.user_id, bytes(vector.escrow))
      expect([hex(opened.masterKey), hex(opened.identitySeeds)]).toEqual([recovery.master_key, recovery.identity_seeds])
    },
  )

  it.each(recovery.escrow_v2.map((v) => [v.name, v] as const))(
    'escrow v2 (%s): an independent implementation (node:crypto argon2id) derives the key and opens it',
    (_name, vector) => {
      expect(hex(independent.escrowKeyV2(recoveryKey, bytes(vector.salt), vector.m, vector.t, vector.p))).toBe(vector.escrow_key)
      const opened = independent.openEscrowV2(recoveryKey, recovery.user_id, bytes(vector.escrow))
      expect([hex(opened.masterKey), hex(opened.identitySeeds)]).toEqual([recovery.master_key, recovery.identity_seeds])
    },
  )

  it("escrow v1 (still read): this implementation derives the key and seals exactly the vector's bytes, and opens them", async () => {
    expect(hex(await escrowKeyV1(recoveryKey))).toBe(recovery.escrow_key)
    expect(hex(await sealEscrowV1(recoveryKey, recovery.user_id, escrowedKeys, bytes(recovery.nonce)))).toBe(recovery.escrow)
    const opened = await openEscrow(recoveryKeyFromPhrase(recovery.phrase), recovery.user_id, bytes(recovery.escrow))
    expect([hex(opened.masterKey), hex(opened.identitySeeds)]).toEqual([recovery.master_key, recovery.identity_seeds])
  })

  it('escrow v1: an independent implementation opens it into master key || identity seeds', () => {
    expect(hex(independent.escrowKey(recoveryKey))).toBe(recovery.escrow_key)
    const opened = independent.openEscrow(recoveryKey, recovery.user_id, bytes(recovery.escrow))
    expect([hex(opened.masterKey), hex(opened.identitySeeds)]).toEqual([recovery.master_key, recovery.identity_seeds])
  })

  it('escrow v1: does not open under another recovery key, for another account, or altered', async () => {
    const escrow = bytes(recovery.escrow)
    const otherKey = recoveryKey.map((b) => b ^ 1)
    expect(await refusal(openEscrow(otherKey, recovery.user_id, escrow))).toBe('authentication')
    expect(await refusal(openEscrow(recoveryKey, '00000000-0000-4000-8000-000000000000', escrow))).toBe('authentication')
    const flipped = escrow.slice()
    flipped[40]! ^= 0x01
    expect(await refusal(openEscrow(recoveryKey, recovery.user_id, flipped))).toBe('authentication')
    expect(await refusal(openEscrow(recoveryKey, recovery.user_id, escrow.subarray(0, 124)))).toBe('malformed')
    expect(await refusal(openEscrow(recoveryKey, recovery.user_id, cat(Uint8Array.of(3), escrow.subarray(1))))).toBe('malformed')
  })

  describe('escrow v2 refusals', () => {
    const vector = recovery.escrow_v2.find((v) => v.m === 256)!
    const escrow = bytes(vector.escrow)
    const open = (bytes: Uint8Array, key = recoveryKey, userId = recovery.user_id) => refusal(openEscrow(key, userId, bytes, { argon2id: fastArgon2id }))

    it('a wrong phrase (valid BIP-39, another key) or another account: authentication', async () => {
      const otherPhrase = recoveryPhrase(recoveryKey.map((b) => b ^ 0x5a))
      expect(await open(escrow, recoveryKeyFromPhrase(otherPhrase))).toBe('authentication')
      const error = await openEscrow(recoveryKeyFromPhrase(otherPhrase), recovery.user_id, escrow, { argon2id: fastArgon2id }).catch(
        (caught: unknown) => caught,
      )
      expect(error).toBeInstanceOf(ClientFormatError)
      expect((error as Error).message).toBe('escrow fails to authenticate: another recovery phrase, another account, or altered bytes')
      expect(await open(escrow, recoveryKey, '00000000-0000-4000-8000-000000000000')).toBe('authentication')
    })

    it('any byte altered: refused; past the header as a failed authentication', async () => {
      for (let at = 0; at < escrow.length; at++) {
        const altered = escrow.slice()
        altered[at]! ^= 0x01
        const code = await open(altered)
        if (at >= 13) expect(code, `byte ${at}`).toBe('authentication')
        else expect(['authentication', 'malformed', 'limit'], `byte ${at}: ${String(code)}`).toContain(code)
      }
    })

    it('a wrong length or version: malformed', async () => {
      expect(await open(escrow.subarray(0, 152))).toBe('malformed')
      expect(await open(cat(escrow, Uint8Array.of(0)))).toBe('malformed')
      expect(await open(new Uint8Array(0))).toBe('malformed')
      expect(await open(cat(Uint8Array.of(0), escrow.subarray(1)))).toBe('malformed')
    })

    const withParams = (m: number, t: number, p: number): Uint8Array => {
      const changed = escrow.slice()
      const view = new DataView(changed.buffer)
      view.setUint32(1, m)
      view.setUint32(5, t)
      view.setUint32(9, p)
      return changed
    }

    it('costs above the caps: refused as a limit before any argon2id work, naming what is too much', async () => {
      const never: Argon2id = () => Promise.reject(new Error('argon2id ran'))
      for (const [m, t, p, named] of [
        [262_145, 2, 1, /memory 262145 KiB \(at most 262144\)/],
        [4_194_304, 2, 1, /memory 4194304 KiB/],
        [256, 9, 1, /9 passes \(at most 8\)/],
        [256, 0xffff_ffff, 1, /passes/],
        [256, 2, 5, /5 lanes \(at most 4\)/],
      ] as const) {
        const error = await openEscrow(recoveryKey, recovery.user_id, withParams(m, t, p), { argon2id: never }).catch((caught: unknown) => caught)
        expect(error, `m=${m} t=${t} p=${p}`).toBeInstanceOf(ClientFormatError)
        expect((error as ClientFormatError).code).toBe('limit')
        expect((error as Error).message).toMatch(named)
      }
    })

    it('costs argon2id does not define (t or p of 0, m under 8 p): malformed', async () => {
      for (const [m, t, p] of [
        [256, 0, 1],
        [256, 2, 0],
        [15, 2, 2],
        [0, 1, 1],
      ] as const)
        expect(await open(withParams(m, t, p)), `m=${m} t=${t} p=${p}`).toBe('malformed')
    })

    it('the caps are accepted: an escrow sealed at them opens', async () => {
      const sealed = await sealEscrow(recoveryKey, recovery.user_id, escrowedKeys, {
        params: { memoryKiB: 262_144, passes: 1, lanes: 4 },
        argon2id: fastArgon2id,
      })
      expect((await openEscrow(recoveryKey, recovery.user_id, sealed, { argon2id: fastArgon2id })).masterKey).toEqual(escrowedKeys.masterKey)
    })
  })
})
