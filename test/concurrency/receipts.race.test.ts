// The custody-receipt chain stays one line under concurrent lifecycle writes (several accounts,
// albums and assets at once, creates, replaces and identical replays, on one instance or on two
// sharing a database): receipt_seq 1..N each exactly once, every prior_receipt_hash linking to
// the receipt before, every blob of every applied bundle receipted once. With two chains, each
// is such a line on its own (its numbers c, c + 2, c + 4...).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferClient, sha256Hex } from '../../src/sdk/client.ts'
import { verifyReceipts } from '../../src/sdk/receipts.ts'
import { expectReceiptChains } from '../support/receipts.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { openBundle, writeFor, type Bundle, type Write } from '../support/bundles.ts'
import type { TestClock } from '../support/clock.ts'
import { readRows, testEngine } from '../support/database.ts'
import { startInstances, startServer, type Instances, type TestServer } from '../support/server.ts'

const ROUNDS = 5

interface Asset {
  readonly assetId: string
  readonly owner: Uploader
  readonly albumId: string
  head: string
  original: string
  /** Every applied bundle's blobs, as (upload_id, hash) pairs. */
  readonly bundles: Array<{ uploadId: string; hashes: string[] }>
}

interface Planned {
  readonly owner: Uploader
  readonly albumId: string
  readonly bundle: Bundle
  readonly write: Write
  /** The asset it replaces, if any. */
  readonly replaces: Asset | null
}

function bundleHashes(bundle: Bundle, write: Write): string[] {
  return [
    bundle.hashes.ciphertextHash,
    ...bundle.derivatives.map(sha256Hex),
    ...(bundle.metadata === null ? [] : [sha256Hex(bundle.metadata)]),
    write.manifestHash,
  ]
}

async function postOps(baseUrl: string, member: Uploader, albumId: string, body: unknown) {
  const response = await fetch(`${baseUrl}/v1/albums/${albumId}/ops`, {
    method: 'POST',
    headers: { authorization: `Bearer ${member.client.tokens!.access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, text, json: JSON.parse(text) as { asset_id: string; replayed: boolean } }
}

/**
 * Runs ROUNDS rounds of concurrent writes from `members` (each with its albums), sending each
 * request to one of `urls` in turn, then checks the whole chain.
 */
async function raceAndCheck(members: Array<{ member: Uploader; albums: string[] }>, urls: readonly string[], clock: TestClock, tickMs = 3) {
  const assets: Asset[] = []
  let expected = 0
  let turn = 0
  for (let round = 0; round < ROUNDS; round++) {
    const planned: Planned[] = []
    for (const { member, albums } of members) {
      for (const albumId of albums) {
        // A create of a new asset, with a varying bundle shape.
        const bundle = await openBundle(member, albumId, { derivatives: (round + albums.indexOf(albumId)) % 3, metadata: round % 2 === 0 })
        planned.push({ owner: member, albumId, bundle, write: await writeFor(member, bundle), replaces: null })
        // A replace of every asset of the album so far (each continues its own chain).
        for (const asset of assets.filter((a) => a.albumId === albumId)) {
          const next = await openBundle(member, albumId, { derivatives: 1 })
          const write = await writeFor(member, next, { fileId: asset.assetId, action: 'replace', prior: asset.head, originalBlobHash: asset.original })
          planned.push({ owner: member, albumId, bundle: next, write, replaces: asset })
        }
      }
    }
    // Every planned write is sent once, and a third of them twice more (identical requests).
    const sends = planned.flatMap((plan, i) => (i % 3 === 0 ? [plan, plan, plan] : [plan]))
    // The server clock moves while the writes race, as a real one does.
    const ticking = setInterval(() => clock.advance(tickMs), 1)
    const answers = await Promise.all(sends.map((plan) => postOps(urls[turn++ % urls.length]!, plan.owner, plan.albumId, plan.write.request))).finally(() =>
      clearInterval(ticking),
    )
    expect(
      answers.map((a) => a.status),
      answers.map((a) => a.text).join('\n'),
    ).toEqual(answers.map(() => 200))
    for (const plan of planned) {
      const own = answers.filter((_, i) => sends[i] === plan)
      expect(
        own.filter((a) => !a.json.replayed),
        'one application per manifest',
      ).toHaveLength(1)
      const hashes = bundleHashes(plan.bundle, plan.write)
      expected += hashes.length
      if (plan.replaces === null) {
        assets.push({
          assetId: plan.write.envelope.file_id,
          owner: plan.owner,
          albumId: plan.albumId,
          head: plan.write.manifestHash,
          original: plan.bundle.hashes.ciphertextHash,
          bundles: [{ uploadId: plan.bundle.uploadId, hashes }],
        })
      } else {
        plan.replaces.head = plan.write.manifestHash
        plan.replaces.original = plan.bundle.hashes.ciphertextHash
        plan.replaces.bundles.push({ uploadId: plan.bundle.uploadId, hashes })
      }
    }
  }

  const lists = await Promise.all(assets.map(async (asset) => ({ asset, receipts: (await asset.owner.client.assetReceipts(asset.assetId)).receipts })))
  // Each asset holds exactly one receipt per blob of each of its bundles, in chain order.
  for (const { asset, receipts } of lists) {
    expect(receipts.map((r) => `${r.upload_id}:${r.ciphertext_hash}`).sort()).toEqual(
      asset.bundles.flatMap((b) => b.hashes.map((h) => `${b.uploadId}:${h}`)).sort(),
    )
    const seqs = receipts.map((r) => r.receipt_seq)
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
  }
  // No gap and no fork on any chain, hash-linked, received_at at the finalization commit never going backwards.
  const keys = await members[0]!.member.client.attestationKeys()
  const lines = await expectReceiptChains(
    lists.flatMap((l) => l.receipts),
    expected,
    keys,
  )
  return { receipts: expected, lines, keys }
}

async function membersOf(server: TestServer, count: number, albumsEach: number) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const member = await uploader(server, `racer-${i}`)
      const albums = []
      for (let j = 0; j < albumsEach; j++) albums.push(await album(member))
      return { member, albums }
    }),
  )
}

describe('concurrent lifecycle writes on one instance', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it('leave one gapless, unforked, hash-linked receipt chain', async () => {
    const members = await membersOf(server, 3, 2)
    const { receipts, lines, keys } = await raceAndCheck(members, [server.url], server.clock)
    expect(receipts).toBeGreaterThan(100)
    expect(lines).toHaveLength(1)
    expect(keys.keys).toHaveLength(1)
  }, 120_000)
})

// SQLite is for one instance (README, "PostgreSQL and several instances"): two instances in one
// process would share nothing but a file lock, so this half exists in the PostgreSQL run only.
if (testEngine === 'postgres')
  describe('concurrent lifecycle writes on two instances sharing one database', () => {
    let pair: Instances
    beforeAll(async () => {
      pair = await startInstances(2)
    })
    afterAll(() => pair.close())

    it('agree on one attestation key when they start at once', async () => {
      const [a, b] = pair.instances
      const [keysA, keysB] = await Promise.all([a!.client().attestationKeys(), b!.client().attestationKeys()])
      expect(keysA).toEqual(keysB)
      expect(keysA.keys).toHaveLength(1)
    })

    it('leave one gapless, unforked, hash-linked receipt chain', async () => {
      const [a, b] = pair.instances
      const members = await membersOf(a!, 3, 2)
      const { receipts, lines } = await raceAndCheck(members, [a!.url, b!.url], a!.clock)
      expect(receipts).toBeGreaterThan(100)
      expect(lines).toHaveLength(1)
      // Both instances read the same line.
      const viaB = new CofferClient({ baseUrl: b!.url, tokens: members[0]!.member.client.tokens })
      const first = members[0]!.member
      const someAsset = (await first.client.feed(members[0]!.albums[0]!)).entries[0]!.asset_id
      expect(await viaB.assetReceipts(someAsset)).toEqual(await first.client.assetReceipts(someAsset))
    }, 120_000)
  })

// Two instances and two chains (decision 0072): each instance appends to the chain it holds a
// lease on, so neither waits for the other's head; neither chain forks or leaves a gap.
if (testEngine === 'postgres')
  describe('concurrent lifecycle writes on two instances with two receipt chains', () => {
    let pair: Instances
    beforeAll(async () => {
      pair = await startInstances(2, { RECEIPT_CHAINS: '2' })
    })
    afterAll(() => pair.close())

    it('take a chain each as they start at once', async () => {
      const rows = await readRows(pair.instances[0]!.database, 'select id, holder from receipt_chain order by id')
      expect(rows.map((row) => row.id)).toEqual([1, 2])
      expect(new Set(rows.map((row) => row.holder)).size).toBe(2)
      expect(rows.every((row) => typeof row.holder === 'string')).toBe(true)
    })

    it('leave two gapless, unforked, hash-linked chains, one per instance, each verifiable on its own, while leases run out, renew and change hands under the writes', async () => {
      const [a, b] = pair.instances
      const members = await membersOf(a!, 3, 2)
      // A clock 300 times fast: a lease lasts 100 ms of real time here, renewed every few writes, lost between bursts, taken over.
      const { receipts, lines, keys } = await raceAndCheck(members, [a!.url, b!.url], a!.clock, 300)
      expect(receipts).toBeGreaterThan(100)
      expect(keys.receipt_chains).toBe(2)
      // Each instance took a chain of its own at its start: both chains grew.
      expect(lines.map((line) => line.length > 0)).toEqual([true, true])
      for (const line of lines) expect(await verifyReceipts(line, keys)).toEqual({ valid: true, problems: [] })
    }, 120_000)
  })
