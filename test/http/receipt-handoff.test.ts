// Receipts handed to the chain's holder (decision 0073): a write on an instance that does not
// hold its chain's lease records its bundle in its transaction and waits; the holder appends the
// requests with its own writes; a request nobody takes is appended by its writer after
// RECEIPT_HANDOFF_WAIT_MS (the holder idle or gone) or, left by a killed instance, by maintenance.
// Every receipt lands once, on one continuous chain, and fsck counts a waiting request as
// pending, never as a missing receipt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ORPHANED_REQUEST_MS } from '../../src/features/custody/receipt-handoff.ts'
import { CHAIN_LEASE_MS } from '../../src/features/custody/receipts.ts'
import { NOTICE_BUNDLE_MAX } from '../../src/storage/kysely/receipt-notices.ts'
import { fsck } from '../../src/features/integrity/fsck.service.ts'
import { maintain } from '../../src/features/maintenance/sweep.service.ts'
import { CofferClient, type AttestationKeys } from '../../src/sdk/client.ts'
import { verifyReceipts, type ReceiptView } from '../../src/sdk/receipts.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { openBundle, writeFor } from '../support/bundles.ts'
import { readRows, testEngine, writeRows } from '../support/database.ts'
import { expectReceiptChains } from '../support/receipts.ts'
import { startInstances, startServer, type Instances, type TestServer } from '../support/server.ts'

/** Long enough that only the holder, or maintenance, can end a handed-off write's wait here. */
const LONG_WAIT = { RECEIPT_HANDOFF_WAIT_MS: '60000' }
const TAKEN_BACK = "the receipt chain's holder left this write's receipts untaken"

/** One create (4 receipts), its manifest sent through `via` (the member's own client unless named); settles once the write has answered. */
async function write(member: Uploader, albumId: string, via: CofferClient = member.client): Promise<string> {
  const bundle = await openBundle(member, albumId)
  return (await via.applyManifest(albumId, (await writeFor(member, bundle)).request)).asset_id
}

async function receiptsOf(member: Uploader, assets: readonly string[]): Promise<ReceiptView[]> {
  return (await Promise.all(assets.map(async (assetId) => (await member.client.assetReceipts(assetId)).receipts))).flat()
}

async function waitingRequests(server: TestServer): Promise<number> {
  return Number((await readRows(server.database, 'select count(*) as n from receipt_requests'))[0]?.n)
}

/** Another instance holds chain 1's lease from now on (its row written as that instance's claim would). */
async function holderElsewhere(server: TestServer): Promise<void> {
  await writeRows(server.database, 'update receipt_chain set holder = ?, lease_until = ? where id = 1', [
    'another-instance',
    server.clock.now() + 100 * CHAIN_LEASE_MS,
  ])
  // The server claims again (and is refused) at its first slot after half a lease.
  server.clock.advance(CHAIN_LEASE_MS / 2 + 1)
}

async function fsckReport(server: TestServer): Promise<{ problems: string[]; notes: string[] }> {
  const problems: string[] = []
  const notes: string[] = []
  await fsck(server.deps, { deep: false, reclaimUnowned: false, problem: (line) => problems.push(line), note: (line) => notes.push(line) })
  return { problems, notes }
}

/** Settles when `promise` has, or answers false after a few turns of the event loop. */
async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false
  const settle = () => (settled = true)
  promise.then(settle, settle)
  await new Promise((resolve) => setTimeout(resolve, 100))
  return settled
}

async function untilRequested(server: TestServer, count: number): Promise<void> {
  for (let i = 0; i < 200 && (await waitingRequests(server)) < count; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  expect(await waitingRequests(server)).toBe(count)
}

describe('a write on an instance that does not hold its chain', () => {
  let server: TestServer
  let alice: Uploader
  let albumId: string
  let keys: AttestationKeys
  const written: string[] = []
  beforeAll(async () => {
    server = await startServer(LONG_WAIT)
    alice = await uploader(server, 'alice')
    albumId = await album(alice)
    keys = await alice.client.attestationKeys()
    // The first write claims nothing new: this server holds chain 1 from its start.
    written.push(await write(alice, albumId))
    await holderElsewhere(server)
    // The write that finds its lease due claims beside it and appends; the claim's refusal moves the next ones to the holder.
    written.push(await write(alice, albumId))
  })
  afterAll(() => server.close())

  let handedOff: Promise<string>
  it("records the bundle in the write's transaction and waits for the holder; fsck counts it pending, not missing", async () => {
    handedOff = write(alice, albumId)
    await untilRequested(server, 1)
    expect(await settledSoon(handedOff)).toBe(false)
    // Committed: the asset is there, its receipts are not yet.
    const [row] = await readRows(server.database, 'select asset_id from receipt_requests')
    expect((await alice.client.assetReceipts(String(row?.asset_id))).receipts).toEqual([])
    const report = await fsckReport(server)
    expect(report.problems).toEqual([])
    expect(report.notes).toEqual([expect.stringMatching(/^1 bundles' receipts are requested from their chain's holder, not yet appended/)])
  })

  it('maintenance appends a request older than ORPHANED_REQUEST_MS (its instance killed while it waited), and the write answers', async () => {
    expect(await maintain(server.deps)).toMatchObject({ orphanedReceiptRequests: 0 })
    server.clock.advance(ORPHANED_REQUEST_MS + 1)
    // A `coffer maintain` run without the servers' PUBLIC_ORIGIN would issue receipts clients refuse: it leaves the request.
    const elsewhere = { ...server.deps, config: { ...server.deps.config, publicOrigin: 'https://elsewhere.example' } }
    expect(await maintain(elsewhere)).toMatchObject({ orphanedReceiptRequests: 0 })
    expect(await waitingRequests(server)).toBe(1)
    expect(await maintain(server.deps)).toMatchObject({ orphanedReceiptRequests: 1 })
    written.push(await handedOff)
    expect(await waitingRequests(server)).toBe(0)
    await expectReceiptChains(await receiptsOf(alice, written), 12, keys)
    expect(await fsckReport(server)).toEqual({ problems: [], notes: [] })
  })

  it("a server's start appends the requests whose writers' wait is over (a kill left them), and the write answers", async () => {
    const left = write(alice, albumId)
    await untilRequested(server, 1)
    // Younger than RECEIPT_HANDOFF_WAIT_MS: its writer may still take it back; left alone.
    await server.deps.receiptChain.start(server.deps)
    expect(await waitingRequests(server)).toBe(1)
    server.clock.advance(Number(LONG_WAIT.RECEIPT_HANDOFF_WAIT_MS) + 1)
    await server.deps.receiptChain.start(server.deps)
    written.push(await left)
    expect(await waitingRequests(server)).toBe(0)
    expect(server.logs.filter((line) => line.includes('appended the receipts of requests an earlier instance left waiting'))).toHaveLength(1)
    await expectReceiptChains(await receiptsOf(alice, written), 16, keys)
  })

  it('the holder appends the requests handed to it with its own writes, after its own receipts, and the waiting writes answer', async () => {
    const waiting = [write(alice, albumId), write(alice, albumId)]
    await untilRequested(server, 2)
    // The other instance's lease ends; this one takes the chain and becomes its holder.
    await writeRows(server.database, 'update receipt_chain set holder = null, lease_until = 0 where id = 1')
    await server.deps.receiptChain.start(server.deps)
    let own = 0
    const answered = Promise.all(waiting)
    while (!(await settledSoon(answered)) && own < 10) {
      written.push(await write(alice, albumId))
      own++
    }
    written.push(...(await answered))
    // A holder's write reads the requests beside it; one of the next carries them.
    expect(own).toBeLessThanOrEqual(3)
    expect(await waitingRequests(server)).toBe(0)
    await expectReceiptChains(await receiptsOf(alice, written), written.length * 4, keys)
    expect(await fsckReport(server)).toEqual({ problems: [], notes: [] })
    expect(server.logs.filter((line) => line.includes(TAKEN_BACK))).toEqual([])
  })
})

describe('a holder that leaves a request untaken (idle, or killed with its lease running)', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ RECEIPT_HANDOFF_WAIT_MS: '50' })
  })
  afterAll(() => server.close())

  it('has the write take it back after RECEIPT_HANDOFF_WAIT_MS and append it itself, then append directly without waiting again', async () => {
    const bob = await uploader(server, 'bob')
    const albumId = await album(bob)
    const keys = await bob.client.attestationKeys()
    const written = [await write(bob, albumId)]
    await holderElsewhere(server)
    for (let i = 0; i < 4; i++) written.push(await write(bob, albumId))
    expect(await waitingRequests(server)).toBe(0)
    await expectReceiptChains(await receiptsOf(bob, written), 20, keys)
    // Once: the writes after it append directly, as long as nothing else appends to the chain.
    expect(server.logs.filter((line) => line.includes(TAKEN_BACK))).toHaveLength(1)
    expect(await fsckReport(server)).toEqual({ problems: [], notes: [] })
  })
})

// SQLite is for one instance (README): two instances in one process would share a file lock only.
if (testEngine === 'postgres')
  describe('two instances on one chain', () => {
    let pair: Instances
    beforeAll(async () => {
      pair = await startInstances(2, LONG_WAIT)
      const [a, b] = pair.instances
      // Which instance took chain 1 at the start is their race: make it a, and have b's claim refused.
      await b!.deps.receiptChain.release(b!.deps.storage)
      await a!.deps.receiptChain.start(a!.deps)
      await b!.deps.receiptChain.start(b!.deps)
      const rows = await readRows(a!.database, 'select holder from receipt_chain')
      expect(rows.filter((row) => typeof row.holder === 'string')).toEqual([{ holder: expect.any(String) }])
    })
    afterAll(() => pair.close())

    it("the instance without the lease hands every write's receipts to the holder, which hears of them and appends them, idle or between its own writes; one continuous chain", async () => {
      const [a, b] = pair.instances
      const carol = await uploader(a!, 'carol')
      const albumId = await album(carol)
      const keys = await carol.client.attestationKeys()
      const viaB = new CofferClient({ baseUrl: b!.url, tokens: carol.client.tokens })
      // The holder writes nothing: the notice of each request has it append them in slots of their own.
      const whileIdle = await Promise.all(Array.from({ length: 3 }, () => write(carol, albumId, viaB)))
      // The holder writes too: the requests go between its own writes.
      const handedOff = Promise.all(Array.from({ length: 6 }, () => write(carol, albumId, viaB)))
      const own: string[] = []
      while (!(await settledSoon(handedOff)) && own.length < 40) own.push(await write(carol, albumId))
      const written = [...whileIdle, ...own, ...(await handedOff)]
      expect(await waitingRequests(a!)).toBe(0)
      await expectReceiptChains(await receiptsOf(carol, written), written.length * 4, keys)
      for (const instance of pair.instances) expect(instance.logs.filter((line) => line.includes(TAKEN_BACK))).toEqual([])
    }, 120_000)

    it('an idle holder told of a bundle too long for a notice reads it and appends it', async () => {
      const [a, b] = pair.instances
      const dave = await uploader(a!, 'dave')
      const albumId = await album(dave)
      const keys = await dave.client.attestationKeys()
      // The derivatives' part of the bundle alone is longer than a notice carries: the notice names the request only.
      const derivatives = 62
      const bundle = await openBundle(dave, albumId, { derivatives })
      const refs = bundle.hashes.derivativeHashes.map((hash, i) => ({ hash, role: 'derivative', size: bundle.derivatives[i]!.length }))
      expect(JSON.stringify(refs).length).toBeGreaterThan(NOTICE_BUNDLE_MAX)
      const viaB = new CofferClient({ baseUrl: b!.url, tokens: dave.client.tokens })
      const assetId = (await viaB.applyManifest(albumId, (await writeFor(dave, bundle)).request)).asset_id
      expect(await waitingRequests(a!)).toBe(0)
      // Original, derivatives, metadata and manifest: one run of the chain, each linked to the one before.
      const receipts = [...(await dave.client.assetReceipts(assetId)).receipts].sort((x, y) => x.receipt_seq - y.receipt_seq)
      expect(receipts.map((receipt) => receipt.receipt_seq)).toEqual(receipts.map((_, n) => receipts[0]!.receipt_seq + n))
      expect(receipts).toHaveLength(derivatives + 3)
      expect(await verifyReceipts(receipts, keys)).toEqual({ valid: true, problems: [] })
      for (const instance of pair.instances) expect(instance.logs.filter((line) => line.includes(TAKEN_BACK))).toEqual([])
    }, 120_000)
  })
