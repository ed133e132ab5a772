// Several receipt chains (RECEIPT_CHAINS, decision 0072): the attestation-keys document says how
// many; chain c numbers its n-th receipt (n - 1) * chains + c; an instance appends to the chain
// it holds a lease on, and to another when a second instance holds that one. Each chain verifies
// on its own (SDK and fsck), rotation keeps every chain's old receipts verifiable, a lying
// server's broken link or false first receipt on any chain is found, and the number of chains
// cannot change once receipts exist.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDeps, startUp } from '../../src/deps.ts'
import { rotateAttestationKey } from '../../src/features/custody/attestation.ts'
import { CHAIN_LEASE_MS } from '../../src/features/custody/receipts.ts'
import { exportAccount } from '../../src/features/export/export.service.ts'
import { createLogger } from '../../src/http/logging.ts'
import { fsck } from '../../src/features/integrity/fsck.service.ts'
import { chainOfReceipt } from '../../src/contract/signing.ts'
import type { AccountExportDocument, AttestationKeys } from '../../src/sdk/client.ts'
import { verifyReceipts, type ReceiptView } from '../../src/sdk/receipts.ts'
import { callerOf } from '../support/actors.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { openBundle, writeFor } from '../support/bundles.ts'
import { writeRows } from '../support/database.ts'
import { expectReceiptChains } from '../support/receipts.ts'
import { capture, startServer, type TestServer } from '../support/server.ts'

const CHAINS = 3
const ORIGIN = 'https://chains.coffer.example'

let server: TestServer
let alice: Uploader
let albumId: string
/** Every asset written here. */
const written: string[] = []
beforeAll(async () => {
  server = await startServer({ PUBLIC_ORIGIN: ORIGIN, RECEIPT_CHAINS: String(CHAINS) })
  alice = await uploader(server, 'alice')
  albumId = await album(alice)
})
afterAll(() => server.close())

/** One create (4 receipts: original, derivative, metadata, provenance); answers its receipts. */
async function write(): Promise<ReceiptView[]> {
  const bundle = await openBundle(alice, albumId)
  const result = await alice.client.applyManifest(albumId, (await writeFor(alice, bundle)).request)
  written.push(result.asset_id)
  return (await alice.client.assetReceipts(result.asset_id)).receipts
}

async function everyReceipt(): Promise<ReceiptView[]> {
  const lists = await Promise.all(written.map(async (assetId) => (await alice.client.assetReceipts(assetId)).receipts))
  return lists.flat()
}

/** Another instance holds these chains' leases (as a second instance's row would say), from now on. */
async function heldElsewhere(chains: readonly number[]): Promise<void> {
  for (const chain of chains)
    await writeRows(server.database, 'update receipt_chain set holder = ?, lease_until = ? where id = ?', [
      'another-instance',
      server.clock.now() + 10 * CHAIN_LEASE_MS,
      chain,
    ])
  // The server claims again at its first slot after half a lease.
  server.clock.advance(CHAIN_LEASE_MS / 2 + 1)
}

async function fsckProblems(): Promise<{ problems: string[]; receipts: number }> {
  const problems: string[] = []
  const summary = await fsck(server.deps, { deep: false, reclaimUnowned: false, problem: (line) => problems.push(line), note: () => {} })
  return { problems, receipts: summary.receipts }
}

describe(`${CHAINS} receipt chains`, () => {
  let keys: AttestationKeys
  it('the attestation-keys document says how many, and the first chain numbers its receipts 1, 1 + chains...', async () => {
    keys = await alice.client.attestationKeys()
    expect(keys.receipt_chains).toBe(CHAINS)
    const receipts = await write()
    expect(receipts.map((r) => r.receipt_seq)).toEqual([1, 4, 7, 10])
    expect(receipts[0]!.prior_receipt_hash).toBeUndefined()
    expect(await verifyReceipts(receipts, keys, written[0])).toEqual({ valid: true, problems: [] })
  })

  it('a chain held by another instance is left to it: the next free one takes the writes, and starts at its own number', async () => {
    await heldElsewhere([1])
    // The write that finds its lease due claims again beside it; the writes after it go to the next free chain.
    await write()
    const moved = await write()
    expect(moved.map((r) => r.receipt_seq)).toEqual([2, 5, 8, 11])
    expect(moved[0]!.prior_receipt_hash).toBeUndefined()
    const next = await write()
    expect(next.map((r) => r.receipt_seq)).toEqual([14, 17, 20, 23])
    await expectReceiptChains(await everyReceipt(), 16, keys)
  })

  it('with every chain held elsewhere, writes still land, each on one chain that stays continuous', async () => {
    await heldElsewhere([1, 2, 3])
    for (let i = 0; i < 3; i++) await write()
    await expectReceiptChains(await everyReceipt(), 28, keys)
    expect(await fsckProblems()).toEqual({ problems: [], receipts: 28 })
  })

  it('rotation gives every chain the new key; the old receipts of each still verify', async () => {
    const rotation = await rotateAttestationKey(server.deps)
    await heldElsewhere([])
    const after = await write()
    expect(new Set(after.map((r) => r.server_key_id))).toEqual(new Set([rotation.active]))
    keys = await alice.client.attestationKeys()
    expect(keys.keys.map((k) => k.status)).toEqual(['retired', 'active'])
    const all = await everyReceipt()
    expect(new Set(all.map((r) => r.server_key_id)).size).toBe(2)
    await expectReceiptChains(all, 32, keys)
  })

  it('the SDK finds a lying server: a fork on one chain, the number of chains misstated or hidden', async () => {
    const all = (await everyReceipt()).sort((a, b) => a.receipt_seq - b.receipt_seq)
    // A second server under the same origin and layout stands for a fork of this one: its
    // receipts are validly signed, but its chain 1 is not this one's.
    const fork = await startServer({ PUBLIC_ORIGIN: ORIGIN, RECEIPT_CHAINS: String(CHAINS) })
    try {
      const forker = await uploader(fork, 'forker')
      const forkAlbum = await album(forker)
      const forked = await forker.client.applyManifest(forkAlbum, (await writeFor(forker, await openBundle(forker, forkAlbum))).request)
      const [, forkSecond] = (await forker.client.assetReceipts(forked.asset_id)).receipts
      expect(forkSecond!.receipt_seq).toBe(4)
      const both: AttestationKeys = { ...keys, keys: [...keys.keys, ...(await forker.client.attestationKeys()).keys] }
      expect((await verifyReceipts([all[0]!, forkSecond!], both)).problems).toEqual(['receipt 4: prior_receipt_hash does not link to receipt 1'])
    } finally {
      await fork.close()
    }
    // Told there are fewer chains, or (the field left out) one: the links and first receipts no longer add up.
    expect((await verifyReceipts(all, { ...keys, receipt_chains: CHAINS - 1 })).valid).toBe(false)
    const { receipt_chains: _, ...oneChain } = keys
    expect((await verifyReceipts(all, oneChain)).problems).toContain('receipt 2: only the first receipt may lack prior_receipt_hash')
    expect(await verifyReceipts(all, keys)).toEqual({ valid: true, problems: [] })
  })

  it('the account export holds the receipts of every chain, each chain cut at its own head when the export began', async () => {
    const before = (await everyReceipt()).sort((a, b) => a.receipt_seq - b.receipt_seq)
    const chunks = (await exportAccount(server.deps, await callerOf(server, alice.client)))[Symbol.asyncIterator]()
    let text = (await chunks.next()).value ?? ''
    // Committed after the export began, on whichever chain: left out.
    await write()
    for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) text += next.value
    const document = JSON.parse(text) as AccountExportDocument
    const exported = Object.values(document.albums.find((a) => a.album_id === albumId)!.receipts)
      .flat()
      .sort((a, b) => a.receipt_seq - b.receipt_seq)
    expect(exported).toEqual(before)
    expect(new Set(exported.map((r) => chainOfReceipt(r.receipt_seq, CHAINS))).size).toBeGreaterThan(1)
  })

  it('fsck checks every chain: a receipt gone from chain 2 and a head that disagrees are each reported', async () => {
    expect((await fsckProblems()).problems).toEqual([])
    await writeRows(server.database, 'delete from receipts where receipt_seq = 5')
    await writeRows(server.database, 'update receipt_chain set last_receipt_hash = ? where id = 1', ['0'.repeat(64)])
    const { problems } = await fsckProblems()
    expect(problems).toEqual([
      'receipt chain 2: receipts 5..5 are missing',
      expect.stringMatching(/^receipt chain 1: the head's hash does not name receipt \d+$/),
      expect.stringMatching(/^asset \S+: blob \S+ \(derivative, upload \S+\) has no custody receipt$/),
    ])
  })

  it('warns at a start under another PUBLIC_ORIGIN than the newest receipt names (clients would refuse what it issues), and not under the same', async () => {
    const warnings = async (publicOrigin: string) => {
      const logs: string[] = []
      const deps = await createDeps({ ...server.deps.config, publicOrigin }, { database: server.database, log: createLogger('warn', capture(logs)) })
      try {
        await startUp(deps)
      } finally {
        await deps.storage.close()
      }
      return logs.map((line) => JSON.parse(line) as Record<string, unknown>)
    }
    expect(await warnings(ORIGIN)).toEqual([])
    expect(await warnings('https://elsewhere.example')).toEqual([
      expect.objectContaining({
        level: 40,
        public_origin: 'https://elsewhere.example',
        newest_receipt_issued_by: ORIGIN,
        msg: expect.stringMatching(/^PUBLIC_ORIGIN is not the issuer the newest receipt names/),
      }),
    ])
  })

  it('the number of chains is fixed by the first receipt: a start with another is refused, naming the one to use', async () => {
    const deps = await createDeps({ ...server.deps.config, receiptChains: 2 }, { database: server.database })
    try {
      await expect(startUp(deps)).rejects.toThrow(
        `RECEIPT_CHAINS=2, but this database has issued receipts on ${CHAINS} chains: start every instance with RECEIPT_CHAINS=${CHAINS}`,
      )
    } finally {
      await deps.storage.close()
    }
  })
})
