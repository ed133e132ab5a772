// Every applied lifecycle write issues one signed custody receipt per blob of its bundle, in
// bundle order, on one gapless hash-linked chain across the whole server; each receipt_cbor is the
// canonical signed CBOR of exactly what the JSON says, verifiable (independently of the server's
// code) under a key of the attestation-keys document, and survives key rotation.
import { ed25519 } from '@noble/curves/ed25519.js'
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js'
import { decode, encode, rfc8949EncodeOptions } from 'cborg'
import { createHash, createPublicKey, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rotateAttestationKey } from '../../src/features/custody/attestation.ts'
import { CofferClient, sha256Hex, type AssetReceipts, type AttestationKeys } from '../../src/sdk/client.ts'
import { verifyReceipts, type ReceiptView } from '../../src/sdk/receipts.ts'
import { raw, problemOf } from '../support/actors.ts'
import { album, ciphertext, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { PROTOCOL_MAX, bearer, openBundle, opsRaw, writeFor, type Bundle, type BundleOptions, type Write, type WriteOptions } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ORIGIN = 'https://photos.coffer.example'
const CONTEXT = 'coffer/custody-receipt/v1'

let server: TestServer
let alice: Uploader
let bob: Uploader
beforeAll(async () => {
  server = await startServer({ PUBLIC_ORIGIN: ORIGIN })
  alice = await uploader(server, 'alice')
  bob = await uploader(server, 'bob')
})
afterAll(() => server.close())

type Role = 'original' | 'derivative' | 'metadata' | 'provenance'

interface Applied {
  readonly assetId: string
  readonly owner: Uploader
  readonly bundle: Bundle
  readonly write: Write
  /** The bundle's blobs in receipt order. */
  readonly blobs: ReadonlyArray<{ role: Role; hash: string; size: number }>
  readonly appliedAt: number
}

/** Every asset written in this file, and how many receipts its applied writes should have issued. */
const written = new Map<string, Uploader>()
let expectedReceipts = 0

function bundleBlobs(bundle: Bundle, write: Write) {
  return [
    { role: 'original' as const, hash: bundle.hashes.ciphertextHash, size: bundle.original.length },
    ...bundle.derivatives.map((bytes) => ({ role: 'derivative' as const, hash: sha256Hex(bytes), size: bytes.length })),
    ...(bundle.metadata === null ? [] : [{ role: 'metadata' as const, hash: sha256Hex(bundle.metadata), size: bundle.metadata.length }]),
    { role: 'provenance' as const, hash: write.manifestHash, size: write.manifest.length },
  ]
}

async function apply(owner: Uploader, albumId: string, options: WriteOptions & { bundle?: BundleOptions } = {}): Promise<Applied> {
  const { bundle: bundleOptions, ...writeOptions } = options
  const bundle = await openBundle(owner, albumId, bundleOptions)
  const write = await writeFor(owner, bundle, writeOptions)
  server.clock.advance(17)
  const appliedAt = server.clock.now()
  const result = await owner.client.applyManifest(albumId, write.request)
  expect(result.replayed).toBe(false)
  written.set(result.asset_id, owner)
  const blobs = bundleBlobs(bundle, write)
  expectedReceipts += blobs.length
  return { assetId: result.asset_id, owner, bundle, write, blobs, appliedAt }
}

async function replaceOf(previous: Applied, options: { bundle?: BundleOptions } = {}): Promise<Applied> {
  const albumId = previous.bundle.albumId
  return apply(previous.owner, albumId, {
    ...options,
    fileId: previous.assetId,
    action: 'replace',
    prior: previous.write.manifestHash,
    originalBlobHash: previous.bundle.hashes.ciphertextHash,
  })
}

async function receiptsOf(asset: { assetId: string; owner: Uploader }): Promise<ReceiptView[]> {
  const list: AssetReceipts = await asset.owner.client.assetReceipts(asset.assetId)
  expect(list.asset_id).toBe(asset.assetId)
  return list.receipts
}

/** Every receipt of every asset written in this file, by receipt_seq. */
async function chain(): Promise<ReceiptView[]> {
  const lists = await Promise.all([...written].map(([assetId, owner]) => receiptsOf({ assetId, owner })))
  const bySeq = new Map(lists.flat().map((receipt) => [receipt.receipt_seq, receipt]))
  return [...bySeq.values()].sort((a, b) => a.receipt_seq - b.receipt_seq)
}

/**
 * The bundle's blobs in the order of its receipts, after checking that order: original,
 * derivatives (in no promised order among themselves), metadata, provenance, one receipt each.
 */
function inReceiptOrder<B extends { role: Role; hash: string }>(blobs: readonly B[], receipts: readonly ReceiptView[]): B[] {
  expect(receipts.map((r) => r.blob_role)).toEqual(blobs.map((b) => b.role))
  expect(receipts.map((r) => r.ciphertext_hash).sort()).toEqual(blobs.map((b) => b.hash).sort())
  return receipts.map((r) => blobs.find((b) => b.hash === r.ciphertext_hash && b.role === r.blob_role)!)
}

const receiptHash = (receipt: ReceiptView) => createHash('sha256').update(Buffer.from(receipt.receipt_cbor, 'base64')).digest('hex')

interface Decoded {
  readonly outerKeys: string[]
  readonly body: Uint8Array
  readonly sig: Uint8Array
  readonly fields: Record<string, unknown>
}

function decodeReceipt(receipt: ReceiptView): Decoded {
  const bytes = Buffer.from(receipt.receipt_cbor, 'base64')
  const outer = decode(bytes, { strict: true, rejectDuplicateMapKeys: true }) as Record<string, unknown>
  const body = outer.body as Uint8Array
  const sig = outer.sig as Uint8Array
  expect(body).toBeInstanceOf(Uint8Array)
  expect(sig).toBeInstanceOf(Uint8Array)
  const fields = decode(body, { strict: true, rejectDuplicateMapKeys: true }) as Record<string, unknown>
  return { outerKeys: Object.keys(outer), body, sig, fields }
}

/** RFC 8949 section 4.2.1 order of short text keys: by encoded length, then bytewise. */
function canonicalOrder(keys: readonly string[]): string[] {
  return [...keys].sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)))
}

/** An implementation of the hybrid check that shares no code with the server's: @noble/curves and @noble/post-quantum. */
function independentlyVerifies(publicKeyB64: string, body: Uint8Array, sig: Uint8Array): boolean {
  const publicKey = Buffer.from(publicKeyB64, 'base64')
  if (publicKey.length !== 1984 || sig.length !== 64 + 3309) return false
  const message = Buffer.concat([Buffer.from(CONTEXT, 'utf8'), Buffer.of(0), body])
  return (
    ed25519.verify(sig.subarray(0, 64), message, publicKey.subarray(0, 32), { zip215: false }) &&
    ml_dsa65.verify(sig.subarray(64), message, publicKey.subarray(32))
  )
}

function keyOf(document: AttestationKeys, keyId: string) {
  const key = document.keys.find((k) => k.key_id === keyId)
  expect(key, `key ${keyId} is listed`).toBeDefined()
  return key!
}

const iso = (ms: number) => new Date(ms).toISOString()

describe('receipts of a lifecycle write', () => {
  it('start the server’s chain at 1 with no prior_receipt_hash, one receipt per blob in bundle order', async () => {
    const first = await apply(alice, await album(alice), { bundle: { derivatives: 2 } })
    const receipts = await receiptsOf(first)
    const document = await alice.client.attestationKeys()
    expect(document.keys).toHaveLength(1)
    const keyId = document.keys[0]!.key_id
    expect(receipts.map((r) => r.receipt_seq)).toEqual([1, 2, 3, 4, 5])
    expect(receipts).toEqual(
      inReceiptOrder(first.blobs, receipts).map((blob, i) => ({
        receipt_seq: i + 1,
        server_id: ORIGIN,
        server_key_id: keyId,
        ...(i === 0 ? {} : { prior_receipt_hash: receiptHash(receipts[i - 1]!) }),
        upload_id: first.bundle.uploadId,
        blob_role: blob.role,
        ciphertext_hash: blob.hash,
        size: blob.size,
        ...(blob.role === 'provenance' ? { envelope_hash: sha256Hex(first.write.manifest) } : {}),
        received_at: iso(first.appliedAt),
        receipt_cbor: expect.any(String),
      })),
    )
    expect(receipts[0]).not.toHaveProperty('prior_receipt_hash')
    expect(receipts.map((r) => r.blob_role)).toEqual(['original', 'derivative', 'derivative', 'metadata', 'provenance'])
  })

  it('issue just the original and the provenance for a bundle without derivatives or metadata', async () => {
    const bare = await apply(bob, await album(bob), { bundle: { derivatives: 0, metadata: false } })
    const receipts = await receiptsOf(bare)
    expect(receipts.map((r) => [r.blob_role, r.ciphertext_hash, r.size, r.envelope_hash ?? null])).toEqual([
      ['original', bare.bundle.hashes.ciphertextHash, bare.bundle.original.length, null],
      ['provenance', bare.write.manifestHash, bare.write.manifest.length, bare.write.manifestHash],
    ])
  })

  it('are the canonical CBOR map {body, sig} whose body is exactly the JSON reading plus asset_id', async () => {
    const asset = await apply(alice, await album(alice), { bundle: { derivatives: 1 } })
    for (const receipt of await receiptsOf(asset)) {
      const bytes = Buffer.from(receipt.receipt_cbor, 'base64')
      expect(bytes.toString('base64')).toBe(receipt.receipt_cbor) // standard base64 with padding
      const decoded = decodeReceipt(receipt)
      expect(decoded.outerKeys).toEqual(['sig', 'body'])
      expect(decoded.sig).toHaveLength(3373)
      // One encoding only: re-encoding deterministically gives the same bytes, outside and in.
      expect(Buffer.from(encode({ body: decoded.body, sig: decoded.sig }, rfc8949EncodeOptions)).equals(bytes)).toBe(true)
      expect(Buffer.from(encode(decoded.fields, rfc8949EncodeOptions)).equals(Buffer.from(decoded.body))).toBe(true)
      const keys = [
        'receipt_seq',
        'server_id',
        'server_key_id',
        'prior_receipt_hash',
        'upload_id',
        'asset_id',
        'blob_role',
        'ciphertext_hash',
        'size',
        'envelope_hash',
        'received_at',
      ]
      expect(Object.keys(decoded.fields)).toEqual(canonicalOrder(keys))
      expect(decoded.fields).toEqual({
        receipt_seq: receipt.receipt_seq,
        server_id: receipt.server_id,
        server_key_id: receipt.server_key_id,
        prior_receipt_hash: receipt.prior_receipt_hash ?? null,
        upload_id: receipt.upload_id,
        asset_id: asset.assetId,
        blob_role: receipt.blob_role,
        ciphertext_hash: receipt.ciphertext_hash,
        size: receipt.size,
        envelope_hash: receipt.envelope_hash ?? null,
        received_at: receipt.received_at,
      })
    }
  })

  it('verify under the key server_key_id names in the attestation-keys document, with an independent implementation', async () => {
    const asset = await apply(bob, await album(bob))
    const document = await bob.client.attestationKeys()
    const receipts = await receiptsOf(asset)
    for (const receipt of receipts) {
      const { body, sig } = decodeReceipt(receipt)
      expect(independentlyVerifies(keyOf(document, receipt.server_key_id).public_key, body, sig)).toBe(true)
      // The checker is not trivially true: another message, or one half of the signature spoiled, fails.
      const otherBody = Buffer.from(body)
      otherBody[otherBody.length - 1]! ^= 1
      expect(independentlyVerifies(keyOf(document, receipt.server_key_id).public_key, otherBody, sig)).toBe(false)
      for (const at of [10, 64 + 10]) {
        const spoiled = Buffer.from(sig)
        spoiled[at]! ^= 1
        expect(independentlyVerifies(keyOf(document, receipt.server_key_id).public_key, body, spoiled)).toBe(false)
      }
    }
    expect(await verifyReceipts(receipts, document, asset.assetId)).toEqual({ valid: true, problems: [] })
  })

  it('name the server clock of the write and the session that carried the bundle', async () => {
    const albumId = await album(alice)
    const chosen = Math.floor(Date.now() / 1000) * 1000 + 30_654
    server.clock.set(chosen)
    const asset = await apply(alice, albumId)
    expect(asset.appliedAt).toBe(chosen + 17)
    const receipts = await receiptsOf(asset)
    expect(new Set(receipts.map((r) => r.received_at))).toEqual(new Set([iso(chosen + 17)]))
    expect(new Set(receipts.map((r) => r.upload_id))).toEqual(new Set([asset.bundle.uploadId]))
    server.clock.set(Date.now())
  })

  it('come through the SDK’s uploadAsset like any client’s', async () => {
    const albumId = await album(bob)
    const original = ciphertext(2048)
    const derivative = ciphertext(512)
    const metadata = ciphertext(64)
    const result = await bob.client.uploadAsset({
      albumId,
      cryptoSuiteId: 1,
      original,
      derivatives: [derivative],
      metadata,
      sign: (hashes) => signedManifest(bob, hashes, { albumId }),
    })
    written.set(result.asset_id, bob)
    expectedReceipts += 4
    const receipts = await receiptsOf({ assetId: result.asset_id, owner: bob })
    expect(receipts.map((r) => [r.blob_role, r.ciphertext_hash, r.size, r.upload_id])).toEqual([
      ['original', sha256Hex(original), original.length, result.uploadId],
      ['derivative', sha256Hex(derivative), derivative.length, result.uploadId],
      ['metadata', sha256Hex(metadata), metadata.length, result.uploadId],
      ['provenance', receipts[3]!.envelope_hash, receipts[3]!.size, result.uploadId],
    ])
    expect(await verifyReceipts(receipts, await bob.client.attestationKeys(), result.asset_id)).toEqual({ valid: true, problems: [] })
  })
})

describe('the chain', () => {
  it('is one gapless line across accounts, albums and assets, each receipt linking to the one before', async () => {
    const albums = { alice: [await album(alice), await album(alice)], bob: [await album(bob)] }
    for (const [owner, albumId] of [
      [alice, albums.alice[0]],
      [bob, albums.bob[0]],
      [alice, albums.alice[1]],
      [alice, albums.alice[0]],
      [bob, albums.bob[0]],
    ] as const) {
      await apply(owner, albumId!, { bundle: { derivatives: Math.floor(Math.random() * 3), metadata: Math.random() < 0.5 } })
    }
    const all = await chain()
    expect(all.map((r) => r.receipt_seq)).toEqual(Array.from({ length: expectedReceipts }, (_, i) => i + 1))
    for (const [i, receipt] of all.entries()) {
      if (i === 0) expect(receipt).not.toHaveProperty('prior_receipt_hash')
      else expect(receipt.prior_receipt_hash, `receipt ${receipt.receipt_seq}`).toBe(receiptHash(all[i - 1]!))
    }
    // The SDK's check agrees on the whole line.
    expect(await verifyReceipts(all, await alice.client.attestationKeys())).toEqual({ valid: true, problems: [] })
  })

  it('gains nothing from rejected or replayed writes: the next write continues right after the last receipt', async () => {
    const albumId = await album(alice)
    const applied = await apply(alice, albumId)
    const before = await chain()
    const last = before.at(-1)!
    const appliedReceipts = await receiptsOf(applied)

    // A replay answers the first application and issues nothing.
    const replay = await alice.client.applyManifest(albumId, applied.write.request)
    expect(replay).toMatchObject({ asset_id: applied.assetId, replayed: true })
    // Refusals at several checks: bundle incomplete (422), stale chain (409), protocol (426), shape (422).
    const incomplete = await openBundle(alice, albumId, { send: 'original' })
    const refusals = [
      [await writeFor(alice, incomplete), 422],
      [await writeFor(alice, await openBundle(alice, albumId), { fileId: applied.assetId }), 409],
      [await writeFor(alice, await openBundle(alice, albumId), { protocolVersion: '2099-01-01' }), 426],
      [await writeFor(alice, await openBundle(alice, albumId), { overrides: { key_mode: 'sideways' as 'derived' } }), 422],
    ] as const
    for (const [write, status] of refusals) {
      const answer = await opsRaw(server, alice, albumId, write.request)
      expect(answer.status, answer.text).toBe(status)
      // A refused create leaves no asset behind to hold receipts.
      if (write.envelope.file_id !== applied.assetId) expect((await problemOf(alice.client.assetReceipts(write.envelope.file_id))).status).toBe(404)
    }
    expect(await receiptsOf(applied)).toEqual(appliedReceipts)
    expect(await chain()).toEqual(before)

    const next = await apply(alice, albumId)
    const receipts = await receiptsOf(next)
    expect(receipts[0]!.receipt_seq).toBe(last.receipt_seq + 1)
    expect(receipts[0]!.prior_receipt_hash).toBe(receiptHash(last))
  })
})

describe('an asset’s receipt list', () => {
  it('keeps the receipts of every bundle it had, replaced ones included, in receipt_seq order', async () => {
    const first = await apply(bob, await album(bob), { bundle: { derivatives: 1 } })
    const firstReceipts = await receiptsOf(first)
    await apply(alice, await album(alice)) // someone else's receipts come in between
    const second = await replaceOf(first, { bundle: { derivatives: 0 } })
    const third = await replaceOf(second, { bundle: { derivatives: 2, metadata: false } })
    const receipts = await receiptsOf(first)
    expect(receipts.slice(0, firstReceipts.length)).toEqual(firstReceipts)
    let at = 0
    for (const bundle of [first, second, third]) {
      const own = receipts.slice(at, at + bundle.blobs.length)
      at += bundle.blobs.length
      inReceiptOrder(bundle.blobs, own)
      expect(new Set(own.map((r) => r.upload_id))).toEqual(new Set([bundle.bundle.uploadId]))
    }
    expect(at).toBe(receipts.length)
    const seqs = receipts.map((r) => r.receipt_seq)
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
    expect(new Set(seqs).size).toBe(seqs.length)
    expect(receipts.filter((r) => r.blob_role === 'provenance').map((r) => r.envelope_hash)).toEqual([first, second, third].map((a) => a.write.manifestHash))
    expect(await verifyReceipts(receipts, await bob.client.attestationKeys(), first.assetId)).toEqual({ valid: true, problems: [] })
  })

  it('answers 404 for another account’s asset exactly as for an unknown one, 400 for a malformed id, 401 without a token', async () => {
    const asset = await apply(alice, await album(alice))
    const foreign = await problemOf(bob.client.assetReceipts(asset.assetId))
    const unknown = await problemOf(bob.client.assetReceipts(randomUUID()))
    expect([foreign.status, foreign.code]).toEqual([404, 'error.not_found'])
    expect([unknown.status, unknown.code]).toEqual([404, 'error.not_found'])
    expect(foreign.problem.detail).toBe(unknown.problem.detail)
    const malformed = await raw(server, 'GET', '/v1/assets/not-a-uuid/receipts', { headers: bearer(alice) })
    expect(malformed.status).toBe(400)
    const anonymous = await raw(server, 'GET', `/v1/assets/${asset.assetId}/receipts`)
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer realm="coffer"/)
  })
})

describe('an asset’s receipt list, a page at a time', () => {
  /** An asset with three bundles (12 receipts), someone else's receipts in between. */
  let asset: Applied
  let all: ReceiptView[]
  beforeAll(async () => {
    const first = await apply(bob, await album(bob), { bundle: { derivatives: 1 } })
    await apply(alice, await album(alice))
    const second = await replaceOf(first, { bundle: { derivatives: 1 } })
    await replaceOf(second, { bundle: { derivatives: 1 } })
    asset = first
    const whole = await raw(server, 'GET', `/v1/assets/${asset.assetId}/receipts?limit=1000`, { headers: bearer(bob) })
    all = (whole.json as AssetReceipts).receipts
    expect(all).toHaveLength(12)
  })

  const page = async (query: string) => raw(server, 'GET', `/v1/assets/${asset.assetId}/receipts?${query}`, { headers: bearer(bob) })

  it('pages in receipt_seq order after `after`, each page at most `limit`, next_after the last receipt_seq: every receipt once', async () => {
    const walked: ReceiptView[] = []
    const sizes: number[] = []
    for (let after = 0; ; ) {
      const answer = await page(`after=${after}&limit=5`)
      expect(answer.status, answer.text).toBe(200)
      const body = answer.json as AssetReceipts
      expect(body.asset_id).toBe(asset.assetId)
      sizes.push(body.receipts.length)
      walked.push(...body.receipts)
      expect(body.next_after).toBe(body.receipts.at(-1)?.receipt_seq ?? after)
      if (body.receipts.length < 5) break
      after = body.next_after
    }
    expect(sizes).toEqual([5, 5, 2])
    expect(walked).toEqual(all)
  })

  it('answers an empty page, next_after = after, past the last receipt; 200 receipts when no limit is given', async () => {
    const last = all.at(-1)!.receipt_seq
    expect((await page(`after=${last}`)).json).toEqual({ asset_id: asset.assetId, receipts: [], next_after: last })
    expect(((await page('')).json as AssetReceipts).receipts).toEqual(all) // fewer than the default page
  })

  it.each([['after=abc'], ['after=-1'], ['after=1.5'], ['limit=0'], ['limit=1001'], ['limit=x']])('answers 400 to %s', async (query) => {
    const answer = await page(query)
    expect([answer.status, answer.json?.code], answer.text).toEqual([400, 'error.request.malformed'])
  })

  it('the SDK walks every page (a small page size), asking after the last receipt it got', async () => {
    const asked: string[] = []
    const counting = new CofferClient({
      baseUrl: server.url,
      now: server.clock.now,
      tokens: bob.client.tokens,
      fetch: async (input, init) => {
        asked.push(new URL(String(input)).search)
        return fetch(input, init)
      },
    })
    const walked = await counting.assetReceipts(asset.assetId, { pageSize: 4 })
    expect(walked.receipts).toEqual(all)
    const seqs = all.map((r) => r.receipt_seq)
    expect(asked).toEqual([`?after=0&limit=4`, `?after=${seqs[3]}&limit=4`, `?after=${seqs[7]}&limit=4`, `?after=${seqs[11]}&limit=4`])
    expect(await verifyReceipts(walked.receipts, await bob.client.attestationKeys(), asset.assetId)).toEqual({ valid: true, problems: [] })
  })
})

describe('verifyReceipts (SDK)', () => {
  let asset: Applied
  let receipts: ReceiptView[]
  let document: AttestationKeys
  beforeAll(async () => {
    asset = await apply(alice, await album(alice), { bundle: { derivatives: 1 } })
    receipts = await receiptsOf(asset)
    document = await alice.client.attestationKeys()
  })

  it('passes the receipts as served', async () => {
    expect(await verifyReceipts(receipts, document, asset.assetId)).toEqual({ valid: true, problems: [] })
  })

  it('fails when a receipt stands in another’s place or the order is broken', async () => {
    const all = await chain()
    const at = all.findIndex((r) => r.receipt_seq === receipts[0]!.receipt_seq)
    const pair = [all[at]!, all[at + 1]!]
    expect(await verifyReceipts(pair, document)).toEqual({ valid: true, problems: [] })
    // Present the first with another (valid) receipt in its place: the link to the second breaks.
    const swapped = { ...all[at - 1]!, receipt_seq: pair[0]!.receipt_seq }
    expect((await verifyReceipts([swapped, pair[1]!], document)).valid).toBe(false)
    expect((await verifyReceipts([pair[1]!, pair[0]!], document)).valid).toBe(false)
  })

  it('fails on a fork: two valid receipts that do not link (another chain’s receipt in the line)', async () => {
    // A second server under the same origin stands for a fork of this one: its receipts are
    // validly signed, but its chain is not this one's.
    const fork = await startServer({ PUBLIC_ORIGIN: ORIGIN })
    try {
      const forker = await uploader(fork, 'forker')
      const albumId = await album(forker)
      const upload = await forker.client.uploadAsset({
        albumId,
        cryptoSuiteId: 1,
        original: ciphertext(100),
        sign: (hashes) => signedManifest(forker, hashes, { albumId }),
      })
      const forked = await forker.client.assetReceipts(upload.asset_id)
      const both: AttestationKeys = { server_id: ORIGIN, keys: [...document.keys, ...(await forker.client.attestationKeys()).keys] }
      const [forkFirst, forkSecond] = forked.receipts
      expect([forkFirst!.receipt_seq, forkSecond!.receipt_seq]).toEqual([1, 2])
      const ours = (await chain()).slice(0, 2)
      expect(await verifyReceipts(ours, both)).toEqual({ valid: true, problems: [] })
      expect(await verifyReceipts([forkFirst!, forkSecond!], both)).toEqual({ valid: true, problems: [] })
      // Each receipt is valid on its own; together they are not one chain.
      expect((await verifyReceipts([ours[0]!, forkSecond!], both)).problems).toEqual([expect.stringContaining('prior_receipt_hash does not link')])
      expect((await verifyReceipts([forkFirst!, ours[1]!], both)).valid).toBe(false)
    } finally {
      await fork.close()
    }
  })

  /** An attestation key of our own (independent of the server's code) and a keys document naming it. */
  function ownAttestationKey() {
    const ed = ed25519.keygen()
    const ml = ml_dsa65.keygen()
    const publicKey = Buffer.concat([ed.publicKey, ml.publicKey])
    const keyId = createHash('sha256').update(publicKey).digest('hex')
    const own: AttestationKeys = {
      server_id: ORIGIN,
      keys: [{ key_id: keyId, algorithm: 'ed25519+ml-dsa-65', public_key: publicKey.toString('base64'), status: 'active', not_before: iso(Date.now()) }],
    }
    const sign = (body: Uint8Array) => {
      const message = Buffer.concat([Buffer.from(CONTEXT, 'utf8'), Buffer.of(0), body])
      return Buffer.concat([ed25519.sign(message, ed.secretKey), ml_dsa65.sign(message, ml.secretKey)])
    }
    return { own, keyId, sign }
  }

  it('fails on a validly signed first receipt that names a predecessor, and a later one that names none', async () => {
    const { own, keyId, sign } = ownAttestationKey()
    const template = receipts.find((r) => r.blob_role === 'provenance')!
    const forged = (seq: number, prior: string | null) => {
      const fields = { ...decodeReceipt(template).fields, server_key_id: keyId, receipt_seq: seq, prior_receipt_hash: prior }
      const body = encode(fields, rfc8949EncodeOptions)
      const { prior_receipt_hash: _, ...view } = template
      return {
        ...view,
        server_key_id: keyId,
        receipt_seq: seq,
        ...(prior === null ? {} : { prior_receipt_hash: prior }),
        receipt_cbor: Buffer.from(encode({ body, sig: sign(body) }, rfc8949EncodeOptions)).toString('base64'),
      }
    }
    expect(await verifyReceipts([forged(1, null)], own)).toEqual({ valid: true, problems: [] })
    expect((await verifyReceipts([forged(1, 'ab'.repeat(32))], own)).problems).toEqual(['receipt 1: the first receipt names a predecessor'])
    expect((await verifyReceipts([forged(7, null)], own)).problems).toEqual(['receipt 7: only the first receipt may lack prior_receipt_hash'])
  })

  it('fails on a validly signed receipt whose CBOR is not the canonical encoding (the body’s or the outer map’s)', async () => {
    // Our own attestation key signs bodies that carry exactly the JSON reading; only the
    // encoding differs between the three.
    const { own, keyId, sign } = ownAttestationKey()
    const template = receipts.find((r) => r.blob_role === 'provenance')!
    const view = { ...template, server_key_id: keyId }
    const fields = { ...decodeReceipt(template).fields, server_key_id: keyId }
    const reversed = (a: unknown, b: unknown) => -1 * rfc8949EncodeOptions.mapSorter!(a as never, b as never)
    const canonicalBody = encode(fields, rfc8949EncodeOptions)
    const shuffledBody = encode(fields, { mapSorter: reversed })
    expect(Buffer.from(shuffledBody).equals(Buffer.from(canonicalBody))).toBe(false)
    const cbor = (outer: Record<string, unknown>, sorter = rfc8949EncodeOptions.mapSorter!) =>
      Buffer.from(encode(outer, { mapSorter: sorter })).toString('base64')

    const canonical = { ...view, receipt_cbor: cbor({ body: canonicalBody, sig: sign(canonicalBody) }) }
    expect(await verifyReceipts([canonical], own, asset.assetId)).toEqual({ valid: true, problems: [] })
    const bodyNotCanonical = { ...view, receipt_cbor: cbor({ body: shuffledBody, sig: sign(shuffledBody) }) }
    expect((await verifyReceipts([bodyNotCanonical], own, asset.assetId)).valid).toBe(false)
    const outerNotCanonical = { ...view, receipt_cbor: cbor({ body: canonicalBody, sig: sign(canonicalBody) }, reversed) }
    expect((await verifyReceipts([outerNotCanonical], own, asset.assetId)).valid).toBe(false)
  })

  it('fails when any field of the JSON reading differs from the signed body', async () => {
    const provenance = receipts.find((r) => r.blob_role === 'provenance')!
    const original = receipts.find((r) => r.blob_role === 'original')!
    const otherHash = sha256Hex(ciphertext(8))
    const changes: Array<[string, ReceiptView]> = [
      ['receipt_seq', { ...original, receipt_seq: original.receipt_seq + 1 }],
      ['server_id', { ...original, server_id: 'https://elsewhere.example' }],
      ['server_key_id', { ...original, server_key_id: otherHash }],
      ['prior_receipt_hash', { ...original, prior_receipt_hash: otherHash }],
      ['prior_receipt_hash removed', (({ prior_receipt_hash: _dropped, ...rest }) => rest)(original)],
      ['upload_id', { ...original, upload_id: randomUUID() }],
      ['blob_role', { ...original, blob_role: 'derivative' }],
      ['ciphertext_hash', { ...original, ciphertext_hash: otherHash }],
      ['size', { ...original, size: original.size + 1 }],
      ['envelope_hash added', { ...original, envelope_hash: provenance.envelope_hash! }],
      ['envelope_hash', { ...provenance, envelope_hash: otherHash }],
      ['envelope_hash removed', (({ envelope_hash: _dropped, ...rest }) => rest)(provenance)],
      ['received_at', { ...original, received_at: iso(Date.parse(original.received_at) + 1) }],
    ]
    for (const [name, changed] of changes) {
      const check = await verifyReceipts([changed], document, asset.assetId)
      expect(check.valid, name).toBe(false)
      expect(check.problems.length, name).toBeGreaterThan(0)
    }
    // Another asset's id, and a document of another server or without the key.
    expect((await verifyReceipts([original], document, randomUUID())).valid).toBe(false)
    expect((await verifyReceipts([original], { ...document, server_id: 'https://elsewhere.example' }, asset.assetId)).valid).toBe(false)
    expect((await verifyReceipts([original], { ...document, keys: [] }, asset.assetId)).valid).toBe(false)
  })
})

describe('the attestation-keys document', () => {
  it('lists the active key for anyone: key_id = SHA-256 of the 1984-byte hybrid public key', async () => {
    for (const headers of [{}, { authorization: 'Bearer whatever' }]) {
      const answer = await raw(server, 'GET', '/.well-known/service/attestation-keys', { headers })
      expect(answer.status).toBe(200)
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
      const document = answer.json as AttestationKeys
      expect(Object.keys(document).sort()).toEqual(['keys', 'server_id'])
      expect(document.server_id).toBe(ORIGIN)
      expect(document.keys).toHaveLength(1)
      const [key] = document.keys
      expect(Object.keys(key!).sort()).toEqual(['algorithm', 'key_id', 'not_before', 'public_key', 'status'])
      expect(key).toMatchObject({ algorithm: 'ed25519+ml-dsa-65', status: 'active' })
      const publicKey = Buffer.from(key!.public_key, 'base64')
      expect(publicKey.toString('base64')).toBe(key!.public_key)
      expect(publicKey).toHaveLength(1984)
      expect(key!.key_id).toBe(createHash('sha256').update(publicKey).digest('hex'))
      expect(new Date(key!.not_before).toISOString()).toBe(key!.not_before)
      expect(Date.parse(key!.not_before)).toBeLessThanOrEqual(Date.now())
    }
  })

  it('keeps each private key sealed at rest: the stored box holds neither seed', async () => {
    const stored = await server.deps.storage.listAttestationKeys()
    const document = await alice.client.attestationKeys()
    expect(stored.map((k) => k.keyId)).toEqual(document.keys.map((k) => k.key_id))
    for (const key of stored) {
      const opened = await server.deps.attestation.signingKey(server.deps.storage, key.keyId)
      const edSeed = opened.privateKey.ed25519.export({ format: 'raw-private' })
      const mlSeed = opened.privateKey.mlDsa65.export({ format: 'raw-seed' })
      expect([edSeed.length, mlSeed.length]).toEqual([32, 32])
      // The seeds are the right ones: they give the listed public key.
      const publicKey = Buffer.concat([
        createPublicKey(opened.privateKey.ed25519).export({ format: 'raw-public' }),
        createPublicKey(opened.privateKey.mlDsa65).export({ format: 'raw-public' }),
      ])
      expect(publicKey.toString('base64')).toBe(keyOf(document, key.keyId).public_key)
      for (const secret of [edSeed, mlSeed, edSeed.subarray(0, 16), mlSeed.subarray(16)]) {
        expect(key.privateBox.indexOf(secret), 'a seed in clear in private_box').toBe(-1)
        expect(key.privateBox.includes(secret.toString('hex'))).toBe(false)
        expect(key.privateBox.includes(secret.toString('base64'))).toBe(false)
      }
      expect(key.privateBox.length).toBeGreaterThan(64)
    }
  })
})

describe('key rotation', () => {
  it('retires the old key (still listed, with not_after), signs new receipts with the new one, and old receipts still verify', async () => {
    const before = await apply(alice, await album(alice))
    const oldReceipts = await receiptsOf(before)
    const oldDocument = await alice.client.attestationKeys()
    const oldKey = oldDocument.keys.find((k) => k.status === 'active')!
    expect(new Set(oldReceipts.map((r) => r.server_key_id))).toEqual(new Set([oldKey.key_id]))

    const rotatedAt = Math.floor(Date.now() / 1000) * 1000 + 60_321
    server.clock.set(rotatedAt)
    const rotation = await rotateAttestationKey(server.deps)
    expect(rotation.retired).toBe(oldKey.key_id)
    expect(rotation.active).not.toBe(oldKey.key_id)

    const document = await bob.client.attestationKeys()
    expect(document.server_id).toBe(ORIGIN)
    expect(document.keys).toHaveLength(2)
    expect(document.keys[0]).toEqual({ ...oldKey, status: 'retired', not_after: iso(rotatedAt) })
    const newKey = document.keys[1]!
    expect(newKey).toMatchObject({ key_id: rotation.active, algorithm: 'ed25519+ml-dsa-65', status: 'active', not_before: iso(rotatedAt) })
    expect(newKey).not.toHaveProperty('not_after')
    expect(newKey.key_id).toBe(createHash('sha256').update(Buffer.from(newKey.public_key, 'base64')).digest('hex'))

    // New receipts name and verify under the new key, and continue the same chain.
    const after = await apply(bob, await album(bob))
    const newReceipts = await receiptsOf(after)
    expect(new Set(newReceipts.map((r) => r.server_key_id))).toEqual(new Set([newKey.key_id]))
    for (const receipt of newReceipts) {
      const { body, sig } = decodeReceipt(receipt)
      expect(independentlyVerifies(newKey.public_key, body, sig)).toBe(true)
      expect(independentlyVerifies(oldKey.public_key, body, sig)).toBe(false)
    }
    // Old receipts still verify: the retired key is listed.
    for (const receipt of oldReceipts) {
      const { body, sig } = decodeReceipt(receipt)
      expect(independentlyVerifies(keyOf(document, receipt.server_key_id).public_key, body, sig)).toBe(true)
    }
    expect(await verifyReceipts(oldReceipts, document, before.assetId)).toEqual({ valid: true, problems: [] })
    expect(await verifyReceipts(newReceipts, document, after.assetId)).toEqual({ valid: true, problems: [] })
    // A document without the retired key cannot vouch for the old receipts.
    expect((await verifyReceipts(oldReceipts, { ...document, keys: [newKey] }, before.assetId)).valid).toBe(false)

    const all = await chain()
    expect(all.map((r) => r.receipt_seq)).toEqual(Array.from({ length: expectedReceipts }, (_, i) => i + 1))
    expect(await verifyReceipts(all, document)).toEqual({ valid: true, problems: [] })

    // A second rotation: two retired keys, each with its own interval, one active.
    server.clock.advance(60_000)
    const secondRotationAt = server.clock.now()
    const again = await rotateAttestationKey(server.deps)
    expect(again.retired).toBe(newKey.key_id)
    const third = await bob.client.attestationKeys()
    expect(third.keys.map((k) => [k.key_id, k.status])).toEqual([
      [oldKey.key_id, 'retired'],
      [newKey.key_id, 'retired'],
      [again.active, 'active'],
    ])
    expect(third.keys[1]!.not_after).toBe(iso(secondRotationAt))
    expect(third.keys[2]!.not_before).toBe(iso(secondRotationAt))
    server.clock.set(Date.now())
  })
})

describe('at the end of the file', () => {
  it('every receipt the server issued is accounted for: 1..N, linked, all valid, N = the blobs of every applied bundle', async () => {
    const all = await chain()
    expect(all.length).toBe(expectedReceipts)
    expect(all.map((r) => r.receipt_seq)).toEqual(Array.from({ length: expectedReceipts }, (_, i) => i + 1))
    expect(await verifyReceipts(all, await alice.client.attestationKeys())).toEqual({ valid: true, problems: [] })
    // A fresh write lands right after the last one.
    const next = await apply(bob, await album(bob), { protocolVersion: PROTOCOL_MAX })
    expect((await receiptsOf(next))[0]!.receipt_seq).toBe(all.length + 1)
  })
})
