// Storage verification answers, per declared blob and in request order, exactly what the server
// can vouch for (role in the live bundle, stored, indexed, retrievable, and with `deep` the
// re-hashed bytes within the per-account budget), calls an asset durable only when every
// declared blob is, and writes nothing but the deep-scan budget.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collectGarbage } from '../../src/features/maintenance/gc.service.ts'
import { sha256Hex, type StorageVerdicts, type StorageVerification } from '../../src/sdk/client.ts'
import { raw } from '../support/actors.ts'
import { album, ciphertext, uploader, type Uploader } from '../support/albums.ts'
import { bearer, openBundle, writeFor, type Bundle, type BundleOptions, type Write, type WriteOptions } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { deleteStored, flipStoredByte, storedHashes, storedVersion, writesInProgress } from '../support/blobs.ts'

/** Defaults (API.md section 7), except on `tight`. */
let server: TestServer
/** Small limits and a small deep-scan budget. */
let tight: TestServer
const TIGHT_MAX_ASSETS = 3
const TIGHT_MAX_HASHES = 7
const WINDOW_S = 120
/** Set once the sizes of a bundle are known (a signed manifest is about 4 KB). */
const TIGHT_BUDGET = 7000

beforeAll(async () => {
  ;[server, tight] = await Promise.all([
    startServer(),
    startServer({
      VERIFY_MAX_ASSETS: String(TIGHT_MAX_ASSETS),
      VERIFY_MAX_HASHES: String(TIGHT_MAX_HASHES),
      DEEP_SCAN_BUDGET_BYTES: String(TIGHT_BUDGET),
      DEEP_SCAN_WINDOW_S: String(WINDOW_S),
    }),
  ])
})
afterAll(() => Promise.all([server.close(), tight.close()]))

type BlobRole = 'original' | 'derivative' | 'metadata' | 'provenance'

interface Asset {
  readonly assetId: string
  readonly albumId: string
  readonly bundle: Bundle
  readonly write: Write
  /** Every blob of the live bundle, in bundle order, with its role and size. */
  readonly blobs: ReadonlyArray<{ hash: string; role: BlobRole; size: number }>
}

function blobsOf(bundle: Bundle, write: Write) {
  return [
    { hash: bundle.hashes.ciphertextHash, role: 'original' as const, size: bundle.original.length },
    ...bundle.derivatives.map((bytes) => ({ hash: sha256Hex(bytes), role: 'derivative' as const, size: bytes.length })),
    ...(bundle.metadata === null ? [] : [{ hash: sha256Hex(bundle.metadata), role: 'metadata' as const, size: bundle.metadata.length }]),
    { hash: write.manifestHash, role: 'provenance' as const, size: write.manifest.length },
  ]
}

/** Uploads a bundle and applies a create (or, with options, a replace) for it. */
async function apply(member: Uploader, albumId: string, options: WriteOptions & { bundle?: BundleOptions } = {}): Promise<Asset> {
  const { bundle: bundleOptions, ...writeOptions } = options
  const bundle = await openBundle(member, albumId, bundleOptions)
  const write = await writeFor(member, bundle, writeOptions)
  const result = await member.client.applyManifest(albumId, write.request)
  expect(result.replayed).toBe(false)
  return { assetId: result.asset_id, albumId, bundle, write, blobs: blobsOf(bundle, write) }
}

/** A create followed by a replace of the same asset: the first bundle is the replaced one. */
async function replaced(member: Uploader, albumId: string) {
  const first = await apply(member, albumId)
  const second = await apply(member, albumId, {
    fileId: first.assetId,
    action: 'replace',
    prior: first.write.manifestHash,
    originalBlobHash: first.bundle.hashes.ciphertextHash,
  })
  return { first, second }
}

const hashesOf = (asset: Asset) => asset.blobs.map((blob) => blob.hash)
const randomHash = () => sha256Hex(ciphertext(16))

function verifyRaw(on: TestServer, member: Uploader, body: unknown, headers: Record<string, string> = {}) {
  return raw(on, 'POST', '/v1/storage/verify', { headers: { ...bearer(member), 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
}

/** Every blob of the store with its size and when it was written, and the writes in progress. */
async function storeState(on: TestServer): Promise<string[]> {
  const blobs = await Promise.all((await storedHashes(on)).map(async (hash) => `${hash}:${await storedVersion(on, hash)}`))
  return [...blobs, ...(await writesInProgress(on))]
}

const healthy = { stored: true, indexed: true, retrievable: true }
const nothing = { role: 'unknown', stored: false, indexed: false, retrievable: false }

describe('structural verdicts', () => {
  let member: Uploader
  let other: Uploader
  let asset: Asset
  beforeAll(async () => {
    member = await uploader(server, 'verify')
    other = await uploader(server, 'verify-other')
    asset = await apply(member, await album(member), { bundle: { derivatives: 2 } })
  })

  it('vouches for every blob of a healthy asset with its role from the live bundle, and calls the asset durable', async () => {
    server.clock.advance(1234)
    const answer = await member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: hashesOf(asset) }] })
    expect(asset.blobs.map((blob) => blob.role)).toEqual(['original', 'derivative', 'derivative', 'metadata', 'provenance'])
    expect(answer).toEqual({
      verdicts: [
        {
          asset_id: asset.assetId,
          durable: true,
          blobs: asset.blobs.map((blob) => ({ hash: blob.hash, role: blob.role, ...healthy })),
          checked_at: new Date(server.clock.now()).toISOString(),
        },
      ],
    })
    // No deep scan ran: `deep` is absent, not null.
    for (const blob of answer.verdicts[0]!.blobs) expect(blob).not.toHaveProperty('deep')
  })

  it('gives `deep: false` the structural answer only', async () => {
    const answer = await member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: hashesOf(asset) }], deep: false })
    expect(answer.verdicts[0]!.durable).toBe(true)
    for (const blob of answer.verdicts[0]!.blobs) expect(blob).not.toHaveProperty('deep')
  })

  it('answers in request order and in declaration order, never shortened: duplicates and unknown hashes included', async () => {
    const second = await apply(member, await album(member), { bundle: { derivatives: 0, metadata: false } })
    const unknown = randomHash()
    const [original, derivative, , metadata, provenance] = hashesOf(asset)
    const declared = [provenance!, unknown, original!, original!, metadata!, unknown, derivative!]
    const unknownAsset = randomUUID()
    const request: StorageVerification = {
      assets: [
        { asset_id: second.assetId, blob_hashes: [...hashesOf(second)].reverse() },
        { asset_id: asset.assetId, blob_hashes: declared },
        { asset_id: unknownAsset, blob_hashes: [original!] },
        { asset_id: asset.assetId, blob_hashes: [] },
        { asset_id: second.assetId, blob_hashes: hashesOf(second) },
      ],
    }
    const answer = await member.client.verifyStorage(request)
    expect(answer.verdicts.map((v) => v.asset_id)).toEqual(request.assets.map((a) => a.asset_id))
    for (const [i, verdict] of answer.verdicts.entries()) expect(verdict.blobs.map((b) => b.hash)).toEqual(request.assets[i]!.blob_hashes)

    const roleOf = new Map(asset.blobs.map((blob) => [blob.hash, blob.role]))
    expect(answer.verdicts[1]!.blobs).toEqual(declared.map((hash) => (hash === unknown ? { hash, ...nothing } : { hash, role: roleOf.get(hash), ...healthy })))
    // One unknown hash is enough to make the asset not durable.
    expect(answer.verdicts[1]!.durable).toBe(false)
    expect(answer.verdicts[0]!.durable).toBe(true)
    expect(answer.verdicts[4]!.durable).toBe(true)
    expect(answer.verdicts[0]!.blobs.map((b) => b.role)).toEqual(['provenance', 'original'])
    // An unknown asset: nothing can be said, even of bytes the caller holds elsewhere.
    expect(answer.verdicts[2]).toMatchObject({ asset_id: unknownAsset, durable: false, blobs: [{ hash: original, ...nothing }] })
    // An empty declaration vouches for nothing.
    expect(answer.verdicts[3]).toMatchObject({ asset_id: asset.assetId, durable: false, blobs: [] })
  })

  it('says nothing of another account’s asset: every blob unknown and false, not durable, whoever asks', async () => {
    const answer = await other.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: hashesOf(asset) }], deep: true })
    expect(answer.verdicts).toEqual([
      {
        asset_id: asset.assetId,
        durable: false,
        blobs: hashesOf(asset).map((hash) => ({ hash, ...nothing })),
        checked_at: expect.any(String),
      },
    ])
  })

  it.each([
    ['an unknown UUID', () => randomUUID()],
    ['a long id', () => 'x'.repeat(300)],
    ['an empty id', () => ''],
    ['the asset’s id in uppercase', () => asset.assetId.toUpperCase()],
  ])('says nothing of %s either: every blob unknown and false', async (_name, idOf) => {
    const assetId = idOf()
    const answer = await member.client.verifyStorage({ assets: [{ asset_id: assetId, blob_hashes: hashesOf(asset) }] })
    expect(answer.verdicts).toEqual([
      { asset_id: assetId, durable: false, blobs: hashesOf(asset).map((hash) => ({ hash, ...nothing })), checked_at: expect.any(String) },
    ])
  })

  it('does not count another account’s copy of the same bytes as the caller’s', async () => {
    // `other` holds an asset; `member` declares one of its hashes under its own asset.
    const theirs = await apply(other, await album(other))
    const foreign = theirs.bundle.hashes.ciphertextHash
    const answer = await member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: [foreign] }] })
    expect(answer.verdicts[0]).toMatchObject({ durable: false, blobs: [{ hash: foreign, ...nothing }] })
  })

  it('reads `indexed` as any live asset of the caller referencing the hash (a hash of another of its assets: role unknown, indexed)', async () => {
    const elsewhere = await apply(member, asset.albumId)
    const hash = elsewhere.bundle.hashes.ciphertextHash
    const answer = await member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: [hash] }] })
    expect(answer.verdicts[0]!.blobs).toEqual([{ hash, role: 'unknown', ...healthy }])
    // API.md section 7: durable = every declared blob stored, indexed and retrievable.
    expect(answer.verdicts[0]!.durable).toBe(true)
  })

  it('after a replace, the replaced bundle’s blobs are stored but no longer indexed nor in a role, so not durable; the new bundle is', async () => {
    const { first, second } = await replaced(member, await album(member))
    expect(second.assetId).toBe(first.assetId)
    const answer = await member.client.verifyStorage({
      assets: [
        { asset_id: first.assetId, blob_hashes: hashesOf(first) },
        { asset_id: first.assetId, blob_hashes: hashesOf(second) },
      ],
    })
    // Stored: the bytes are still there and still the caller's until garbage collection;
    // retrievable: nothing withholds them (API.md: stored and not taken down).
    expect(answer.verdicts[0]).toMatchObject({
      durable: false,
      blobs: hashesOf(first).map((hash) => ({ hash, role: 'unknown', stored: true, indexed: false, retrievable: true })),
    })
    expect(answer.verdicts[1]).toMatchObject({ durable: true, blobs: second.blobs.map((blob) => ({ hash: blob.hash, role: blob.role, ...healthy })) })

    // Once collected, the replaced blobs are not stored any more.
    await collectGarbage(server.deps)
    const after = await member.client.verifyStorage({ assets: [{ asset_id: first.assetId, blob_hashes: hashesOf(first) }] })
    expect(after.verdicts[0]).toMatchObject({ durable: false, blobs: hashesOf(first).map((hash) => ({ hash, ...nothing })) })
  })

  it('needs the bytes in the blob store: a blob file gone reads stored and retrievable false (still indexed), not durable', async () => {
    const victim = await apply(member, await album(member))
    const derivative = victim.blobs.find((blob) => blob.role === 'derivative')!.hash
    await deleteStored(server, derivative)
    const answer = await member.client.verifyStorage({ assets: [{ asset_id: victim.assetId, blob_hashes: hashesOf(victim) }], deep: true })
    expect(answer.verdicts[0]!.durable).toBe(false)
    expect(answer.verdicts[0]!.blobs).toEqual(
      victim.blobs.map((blob) =>
        blob.hash === derivative
          ? { hash: blob.hash, role: 'derivative', stored: false, indexed: true, retrievable: false }
          : { hash: blob.hash, role: blob.role, ...healthy, deep: 'intact' },
      ),
    )
  })
})

describe('deep scans', () => {
  let member: Uploader
  beforeAll(async () => {
    member = await uploader(server, 'deep')
  })

  it('re-reads the bytes: intact for a healthy asset', async () => {
    const asset = await apply(member, await album(member))
    const answer = await member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: hashesOf(asset) }], deep: true })
    expect(answer.verdicts[0]).toMatchObject({
      durable: true,
      blobs: asset.blobs.map((blob) => ({ hash: blob.hash, role: blob.role, ...healthy, deep: 'intact' })),
    })
  })

  it('finds a flipped byte on disk: corrupt, not durable, while the structural fields stay true', async () => {
    const asset = await apply(member, await album(member), { bundle: { derivatives: 2 } })
    const victim = asset.blobs[2]!
    expect(victim.role).toBe('derivative')
    await flipStoredByte(server, victim.hash, Math.floor(victim.size / 2))

    const deep = await member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: hashesOf(asset) }], deep: true })
    expect(deep.verdicts[0]!.durable).toBe(false)
    expect(deep.verdicts[0]!.blobs).toEqual(
      asset.blobs.map((blob) => ({ hash: blob.hash, role: blob.role, ...healthy, deep: blob.hash === victim.hash ? 'corrupt' : 'intact' })),
    )
    // A declaration without the corrupt blob is durable; a structural check cannot see it.
    const without = hashesOf(asset).filter((hash) => hash !== victim.hash)
    expect((await member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: without }], deep: true })).verdicts[0]!.durable).toBe(true)
    expect((await member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: hashesOf(asset) }] })).verdicts[0]!.durable).toBe(true)
    // Every copy of a declared corrupt hash reads corrupt.
    const twice = await member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: [victim.hash, victim.hash] }], deep: true })
    expect(twice.verdicts[0]!.blobs.map((b) => b.deep)).toEqual(['corrupt', 'corrupt'])

    // Flipped back, the bytes are intact again.
    await flipStoredByte(server, victim.hash, Math.floor(victim.size / 2))
    const healed = await member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: hashesOf(asset) }], deep: true })
    expect(healed.verdicts[0]!.durable).toBe(true)
    expect(healed.verdicts[0]!.blobs.map((b) => b.deep)).toEqual(asset.blobs.map(() => 'intact'))
  })

  it('finds the first and the last byte flipped too', async () => {
    const asset = await apply(member, await album(member), { bundle: { derivatives: 0, metadata: false } })
    const original = asset.blobs[0]!
    for (const position of [0, original.size - 1]) {
      await flipStoredByte(server, original.hash, position)
      const answer = await member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: [original.hash] }], deep: true })
      expect(answer.verdicts[0]).toMatchObject({ durable: false, blobs: [{ hash: original.hash, role: 'original', ...healthy, deep: 'corrupt' }] })
      await flipStoredByte(server, original.hash, position)
    }
  })
})

describe('the deep-scan budget', () => {
  /** What the budget rule predicts: each blob in order is scanned only while its size fits in what is left. */
  function predict(sizes: readonly number[], left: number): { deep: Array<'intact' | 'rate_limited'>; left: number } {
    const deep: Array<'intact' | 'rate_limited'> = []
    for (const size of sizes) {
      if (size <= left) {
        deep.push('intact')
        left -= size
      } else {
        deep.push('rate_limited')
      }
    }
    return { deep, left }
  }

  it('runs out into rate_limited per blob whose size no longer fits, keeps the structural verdict and durability, and comes back when the window passes', async () => {
    const member = await uploader(tight, 'budget')
    const asset = await apply(member, await album(member))
    const sizes = asset.blobs.map((blob) => blob.size)
    const total = sizes.reduce((a, b) => a + b, 0)
    // The budget holds one full scan of the asset and then a part of another.
    expect(total).toBeLessThanOrEqual(TIGHT_BUDGET)
    expect(2 * total).toBeGreaterThan(TIGHT_BUDGET)
    const ask = (hashes: string[]) => member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: hashes }], deep: true })

    let left = TIGHT_BUDGET
    const first = await ask(hashesOf(asset))
    let plan = predict(sizes, left)
    expect(plan.deep.every((d) => d === 'intact')).toBe(true)
    expect(first.verdicts[0]!.blobs.map((b) => b.deep)).toEqual(plan.deep)
    left = plan.left

    // Largest first, so that a small blob later in the declaration still fits after a big one did not.
    const bySize = [...asset.blobs].sort((a, b) => b.size - a.size)
    const second = await ask(bySize.map((blob) => blob.hash))
    plan = predict(
      bySize.map((blob) => blob.size),
      left,
    )
    expect(plan.deep).toContain('rate_limited')
    expect(plan.deep).toContain('intact')
    expect(second.verdicts[0]!.blobs).toEqual(bySize.map((blob, i) => ({ hash: blob.hash, role: blob.role, ...healthy, deep: plan.deep[i] })))
    // rate_limited says nothing against the bytes: the asset stays durable.
    expect(second.verdicts[0]!.durable).toBe(true)
    left = plan.left

    // Spent down to less than the smallest blob: every blob is rate_limited, the structural verdict still given.
    const smallest = Math.min(...sizes)
    while (left >= smallest) {
      const next = await ask(hashesOf(asset))
      plan = predict(sizes, left)
      expect(next.verdicts[0]!.blobs.map((b) => b.deep)).toEqual(plan.deep)
      left = plan.left
    }
    const spent = await ask(hashesOf(asset))
    expect(spent.verdicts[0]).toMatchObject({
      durable: true,
      blobs: asset.blobs.map((blob) => ({ hash: blob.hash, role: blob.role, ...healthy, deep: 'rate_limited' })),
    })

    // The budget is per account: another account scans meanwhile.
    const bystander = await uploader(tight, 'bystander')
    const theirs = await apply(bystander, await album(bystander))
    const theirAnswer = await bystander.client.verifyStorage({ assets: [{ asset_id: theirs.assetId, blob_hashes: hashesOf(theirs) }], deep: true })
    expect(theirAnswer.verdicts[0]!.blobs.map((b) => b.deep)).toEqual(theirs.blobs.map(() => 'intact'))

    // Just before the window ends nothing changes; once it has passed the budget is whole again.
    tight.clock.advance(WINDOW_S * 1000 - 1000)
    expect((await ask(hashesOf(asset))).verdicts[0]!.blobs.map((b) => b.deep)).toEqual(asset.blobs.map(() => 'rate_limited'))
    tight.clock.advance(1000)
    const restored = await ask(hashesOf(asset))
    expect(restored.verdicts[0]).toMatchObject({ durable: true, blobs: asset.blobs.map((blob) => ({ hash: blob.hash, ...healthy, deep: 'intact' })) })
  })

  it('is never overspent by deep scans racing each other', async () => {
    const member = await uploader(tight, 'racing-scans')
    const asset = await apply(member, await album(member))
    const sizeOf = new Map(asset.blobs.map((blob) => [blob.hash, blob.size]))
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => member.client.verifyStorage({ assets: [{ asset_id: asset.assetId, blob_hashes: hashesOf(asset) }], deep: true })),
    )
    const scanned = answers
      .flatMap((answer) => answer.verdicts[0]!.blobs)
      .filter((blob) => blob.deep === 'intact')
      .reduce((sum, blob) => sum + sizeOf.get(blob.hash)!, 0)
    expect(scanned).toBeLessThanOrEqual(TIGHT_BUDGET)
    // Nothing left that any blob of the asset would fit in.
    expect(scanned).toBeGreaterThan(TIGHT_BUDGET - Math.min(...sizeOf.values()))
    for (const answer of answers) expect(answer.verdicts[0]!.durable).toBe(true)
  })

  it('never scans a blob larger than the whole budget, and still vouches for it structurally', async () => {
    const member = await uploader(tight, 'huge')
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId, { derivatives: 0, metadata: false })
    // A second session whose original is bigger than the budget.
    const big = ciphertext(TIGHT_BUDGET + 1)
    const session = await member.client.openUploadSession({
      album_id: albumId,
      crypto_suite_id: 1,
      ciphertext_hash: sha256Hex(big),
      blobs: [{ role: 'original', hash: sha256Hex(big), size: big.length }],
    })
    await member.client.putBlob(session.upload_id, sha256Hex(big), big)
    const bigBundle: Bundle = { ...bundle, uploadId: session.upload_id, original: big, hashes: { ...bundle.hashes, ciphertextHash: sha256Hex(big) } }
    const write = await writeFor(member, bigBundle)
    const result = await member.client.applyManifest(albumId, write.request)
    const answer = await member.client.verifyStorage({ assets: [{ asset_id: result.asset_id, blob_hashes: [sha256Hex(big), write.manifestHash] }], deep: true })
    expect(answer.verdicts[0]).toMatchObject({
      durable: true,
      blobs: [
        { hash: sha256Hex(big), role: 'original', ...healthy, deep: 'rate_limited' },
        { hash: write.manifestHash, role: 'provenance', ...healthy, deep: 'intact' },
      ],
    })
  })
})

describe('a pure read', () => {
  it('writes nothing but the budget: feed, upload sessions, receipts, keys and the blob folder are unchanged', async () => {
    const member = await uploader(server, 'pure')
    const albumId = await album(member)
    const { first, second } = await replaced(member, albumId)
    const open = await openBundle(member, albumId)
    const snapshot = async () => ({
      feed: await member.client.feed(albumId, 0, 1000),
      receipts: await member.client.assetReceipts(first.assetId),
      keys: await member.client.attestationKeys(),
      session: await member.client.uploadSessionStatus(open.uploadId),
      upgrade: await member.client.readUpgrade(albumId),
      record: await member.client.moderationRecord(),
      store: await storeState(server),
    })
    const before = await snapshot()
    const request: StorageVerification = {
      assets: [{ asset_id: first.assetId, blob_hashes: [...hashesOf(first), ...hashesOf(second), open.hashes.ciphertextHash] }],
    }
    const structural = await member.client.verifyStorage(request)
    const deep = await member.client.verifyStorage({ ...request, deep: true })
    expect(structural.verdicts[0]!.blobs).toHaveLength(request.assets[0]!.blob_hashes.length)
    expect(deep.verdicts[0]!.blobs.filter((b) => b.deep === 'intact')).toHaveLength(request.assets[0]!.blob_hashes.length)
    expect(await snapshot()).toEqual(before)
  })
})

describe('request limits and shape', () => {
  let member: Uploader
  let tightMember: Uploader
  beforeAll(async () => {
    member = await uploader(server, 'limits')
    tightMember = await uploader(tight, 'limits')
  })

  const assets = (count: number, hashesEach: number) =>
    Array.from({ length: count }, () => ({ asset_id: randomUUID(), blob_hashes: Array.from({ length: hashesEach }, randomHash) }))

  async function expectInvalid(on: TestServer, who: Uploader, body: unknown) {
    const answer = await verifyRaw(on, who, body)
    expect(answer.status, answer.text).toBe(422)
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(answer.json?.code).toBe('error.request.invalid')
  }

  it('takes up to VERIFY_MAX_ASSETS assets and VERIFY_MAX_HASHES hashes and refuses one more (422)', async () => {
    const ok = (body: unknown) =>
      verifyRaw(tight, tightMember, body).then((answer) => {
        expect(answer.status, answer.text).toBe(200)
        return answer.json as StorageVerdicts
      })
    expect((await ok({ assets: assets(TIGHT_MAX_ASSETS, 1) })).verdicts).toHaveLength(TIGHT_MAX_ASSETS)
    await expectInvalid(tight, tightMember, { assets: assets(TIGHT_MAX_ASSETS + 1, 1) })
    await expectInvalid(tight, tightMember, { assets: assets(TIGHT_MAX_ASSETS + 1, 0) })
    // Hashes count across the assets of one request.
    expect((await ok({ assets: [...assets(1, TIGHT_MAX_HASHES - 2), ...assets(1, 2)] })).verdicts.flatMap((v) => v.blobs)).toHaveLength(TIGHT_MAX_HASHES)
    await expectInvalid(tight, tightMember, { assets: [...assets(1, TIGHT_MAX_HASHES - 2), ...assets(1, 3)] })
    await expectInvalid(tight, tightMember, { assets: assets(1, TIGHT_MAX_HASHES + 1) })
  })

  it('defaults to 256 assets and 4096 hashes', async () => {
    const answer = await verifyRaw(server, member, { assets: assets(256, 16) })
    expect(answer.status, answer.text).toBe(200)
    expect((answer.json as StorageVerdicts).verdicts).toHaveLength(256)
    await expectInvalid(server, member, { assets: assets(257, 0) })
    await expectInvalid(server, member, { assets: [...assets(255, 16), ...assets(1, 17)] })
  })

  it.each([
    ['uppercase hex', 'A'.repeat(64)],
    ['63 characters', 'a'.repeat(63)],
    ['65 characters', 'a'.repeat(65)],
    ['a non-hex character', `${'a'.repeat(63)}g`],
    ['empty', ''],
  ])('refuses a hash that is not hex256 (%s) with 422', async (_name, hash) => {
    await expectInvalid(server, member, { assets: [{ asset_id: randomUUID(), blob_hashes: [randomHash(), hash] }] })
  })

  it.each([
    ['an unknown top-level key', { assets: [], extra: true }],
    ['an unknown key on an asset', { assets: [{ asset_id: randomUUID(), blob_hashes: [], role: 'original' }] }],
    ['no assets', { deep: true }],
    ['no blob_hashes', { assets: [{ asset_id: randomUUID() }] }],
    ['no asset_id', { assets: [{ blob_hashes: [] }] }],
    ['a deep that is not a boolean', { assets: [], deep: 'yes' }],
    ['a hash that is not a string', { assets: [{ asset_id: randomUUID(), blob_hashes: [42] }] }],
    ['assets that is not an array', { assets: {} }],
  ])('refuses %s with 422 (strict objects)', async (_name, body) => {
    await expectInvalid(server, member, body)
  })

  it('answers an empty list of assets with no verdicts', async () => {
    expect(await member.client.verifyStorage({ assets: [] })).toEqual({ verdicts: [] })
  })

  it('refuses malformed JSON (400) and another media type (415)', async () => {
    const malformed = await raw(server, 'POST', '/v1/storage/verify', {
      headers: { ...bearer(member), 'content-type': 'application/json' },
      body: '{"assets": [',
    })
    expect(malformed.status).toBe(400)
    expect(malformed.json?.code).toBe('error.request.malformed')
    const text = await raw(server, 'POST', '/v1/storage/verify', { headers: { ...bearer(member), 'content-type': 'text/plain' }, body: '{"assets": []}' })
    expect(text.status).toBe(415)
    expect(text.json?.code).toBe('error.request.unsupported_media_type')
  })

  it('needs a bearer token', async () => {
    const body = JSON.stringify({ assets: [] })
    const none = await raw(server, 'POST', '/v1/storage/verify', { headers: { 'content-type': 'application/json' }, body })
    expect(none.status).toBe(401)
    expect(none.json?.code).toBe('error.auth.unauthenticated')
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm="coffer"/)
    const bad = await raw(server, 'POST', '/v1/storage/verify', { headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-token' }, body })
    expect(bad.status).toBe(401)
    expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"')
    // A token that was valid once stops working with its session.
    const signedOut = await uploader(server, 'signed-out')
    const headers = bearer(signedOut)
    await signedOut.client.logout()
    const dead = await raw(server, 'POST', '/v1/storage/verify', { headers: { ...headers, 'content-type': 'application/json' }, body })
    expect(dead.status).toBe(401)
    expect(dead.json?.code).toBe('error.auth.unauthenticated')
  })
})
