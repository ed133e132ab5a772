// The receipt sequencer (decision 0023) signs each write's receipts ahead of its transaction,
// over a guess of the chain's head that the database checks. What it must guarantee: a write
// whose transaction fails after its receipts were signed leaves none, and the writes signed over
// them sign again (one line still, every signature valid); a key rotated meanwhile is not signed
// with again; on SQLite no other request waits on the connection while a receipt is signed; a
// write appends once the earlier write has appended, without waiting in the process for that
// one's commit (SQLite: not for its fdatasync; PostgreSQL: the chain row's lock waits for it); and
// the signer's thread dying (decision 0035) fails at most the writes it was signing.
import { randomUUID } from 'node:crypto'
import { open, stat, type FileHandle } from 'node:fs/promises'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { rotateAttestationKey } from '../../src/features/custody/attestation.ts'
import { receiptSigner } from '../../src/features/custody/receipt-signer.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { openBundle, opsRaw, writeFor, type Bundle, type Write } from '../support/bundles.ts'
import { readRows, testEngine } from '../support/database.ts'
import { expectOneReceiptLine } from '../support/receipts.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let member: Uploader
let albums: string[]
/** Another account, with an album: its writes share no row with the member's but the chain's. */
let other: { readonly member: Uploader; readonly albums: string[] }
/** Every applied write: its asset, how many receipts it issued, and its account. */
const applied = new Map<string, { readonly receipts: number; readonly member: Uploader }>()

beforeAll(async () => {
  server = await startServer()
  member = await uploader(server, 'sequenced')
  albums = await Promise.all(Array.from({ length: 4 }, () => album(member)))
  const otherMember = await uploader(server, 'sequenced-other')
  other = { member: otherMember, albums: [await album(otherMember)] }
})
afterAll(() => server.close())
afterEach(() => vi.restoreAllMocks())

interface Prepared {
  readonly member: Uploader
  readonly albumId: string
  readonly bundle: Bundle
  readonly write: Write
}

async function prepare(count: number, by: { readonly member: Uploader; readonly albums: readonly string[] } = { member, albums }): Promise<Prepared[]> {
  return Promise.all(Array.from({ length: count }, async (_, i) => {
    const albumId = by.albums[i % by.albums.length]!
    const bundle = await openBundle(by.member, albumId, { derivatives: 1 + (i % 2) })
    return { member: by.member, albumId, bundle, write: await writeFor(by.member, bundle) }
  }))
}

const receiptCount = ({ bundle }: Prepared) => 1 + bundle.derivatives.length + (bundle.metadata === null ? 0 : 1) + 1

/** Sends the writes at once; records the applied ones; answers the statuses. */
async function sendAll(writes: readonly Prepared[]): Promise<number[]> {
  const answers = await Promise.all(writes.map((w) => opsRaw(server, w.member, w.albumId, w.write.request)))
  for (const [i, answer] of answers.entries()) if (answer.status === 200) applied.set(writes[i]!.write.envelope.file_id, { receipts: receiptCount(writes[i]!), member: writes[i]!.member })
  return answers.map((answer) => answer.status)
}

/** The whole chain is one line over every applied write's receipts, all signatures valid. */
async function expectWholeLine() {
  const lists = await Promise.all([...applied].map(async ([assetId, write]) => (await write.member.client.assetReceipts(assetId)).receipts))
  const expected = [...applied.values()].reduce((sum, write) => sum + write.receipts, 0)
  return expectOneReceiptLine(lists.flat(), expected, await member.client.attestationKeys())
}

/** Holds the next `signingKey` call (made just before a slot's receipts are signed) until released. */
function holdNextSigning() {
  const keyring = server.deps.attestation
  const original = keyring.signingKey.bind(keyring)
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  let reached = () => {}
  const reachedSigning = new Promise<void>((resolve) => (reached = resolve))
  let held = false
  vi.spyOn(keyring, 'signingKey').mockImplementation(async (store, keyId) => {
    if (!held) {
      held = true
      reached()
      await released
    }
    return original(store, keyId)
  })
  return { reachedSigning, release }
}

describe('the receipt sequencer', () => {
  it('drops the receipts of a transaction that fails after signing them, and the writes signed over them sign again', async () => {
    await sendAll(await prepare(2))
    const writes = await prepare(12)
    const storage = server.deps.storage
    const transaction = storage.transaction.bind(storage)
    let failures = 1
    // The first lifecycle write to reach its commit rolls back instead, its receipts appended.
    vi.spyOn(storage, 'transaction').mockImplementation((work) => transaction(async (tx) => {
      const result = await work(tx)
      const outcome = result as { action?: string; replayed?: boolean }
      if (failures > 0 && outcome.action === 'create' && outcome.replayed === false) {
        failures -= 1
        throw new Error('injected: the transaction fails after its receipts were appended')
      }
      return result
    }))
    const statuses = await sendAll(writes)
    expect(statuses.filter((status) => status === 500)).toHaveLength(1)
    expect(statuses.filter((status) => status === 200)).toHaveLength(11)
    vi.restoreAllMocks()
    // The chain continues after the failure, on the sequencer's next guesses.
    expect((await sendAll(await prepare(6))).every((status) => status === 200)).toBe(true)
    await expectWholeLine()
  }, 120_000)

  it('signs again with the new key when the key is rotated between signing and appending', async () => {
    const hold = holdNextSigning()
    const [write] = await prepare(1)
    const sent = sendAll([write!])
    await hold.reachedSigning
    const { retired, active } = await rotateAttestationKey(server.deps)
    hold.release()
    expect(await sent).toEqual([200])
    const receipts = (await member.client.assetReceipts(write!.write.envelope.file_id)).receipts
    expect(receipts.map((receipt) => receipt.server_key_id)).toEqual(receipts.map(() => active))
    expect(active).not.toBe(retired)
    expect((await sendAll(await prepare(4))).every((status) => status === 200)).toBe(true)
    await expectWholeLine()
  }, 120_000)

  it('signs over the head the database holds when the signer’s thread was restarted between writes (it holds no tip)', async () => {
    expect((await sendAll(await prepare(3))).every((status) => status === 200)).toBe(true)
    await receiptSigner().stop()
    // The sequencer's guess continues; the new thread has nothing to continue it from.
    expect(await sendAll(await prepare(4))).toEqual([200, 200, 200, 200])
    await expectWholeLine()
  }, 120_000)

  it('fails at most the writes being signed when the signer’s thread dies under them, and the next writes sign on', async () => {
    const writes = await prepare(10)
    const signer = receiptSigner()
    const sign = signer.sign.bind(signer)
    let handed = 0
    // The thread ends right after the fourth slot is handed to it: that slot's signing, at least, is lost.
    vi.spyOn(signer, 'sign').mockImplementation((slot) => {
      const answer = sign(slot)
      if (++handed === 4) void signer.stop()
      return answer
    })
    const statuses = await sendAll(writes)
    expect(statuses.filter((status) => status !== 200 && status !== 500)).toEqual([])
    expect(statuses.filter((status) => status === 500).length).toBeGreaterThan(0)
    vi.restoreAllMocks()
    expect((await sendAll(await prepare(6))).every((status) => status === 200)).toBe(true)
    await expectWholeLine()
  }, 120_000)

  it('keeps the database answering other requests while a receipt is being signed', async () => {
    const hold = holdNextSigning()
    const [write] = await prepare(1)
    const sent = sendAll([write!])
    await hold.reachedSigning
    // On SQLite one connection serves every request: a transaction holding it while signing would hold this read too.
    const read = server.deps.storage.findAsset(randomUUID())
    const waited = await Promise.race([read.then(() => 'answered'), new Promise((resolve) => setTimeout(() => resolve('held'), 2000))])
    hold.release()
    expect(waited).toBe('answered')
    expect(await sent).toEqual([200])
    await expectWholeLine()
  }, 120_000)

  if (testEngine === 'sqlite') it('on SQLite, runs a write’s transaction once the earlier write has committed, while that commit still waits for its fdatasync', async () => {
    const writes = await prepare(2)
    const wal = `${(server.database as { file: string }).file}-wal`
    const walInode = (await stat(wal)).ino
    let gated = false
    let openGate = () => {}
    const gate = new Promise<void>((resolve) => (openGate = resolve))
    const handle = await open(wal, 'r')
    const prototype = Object.getPrototypeOf(handle) as FileHandle
    await handle.close()
    const datasync = prototype.datasync
    // Once armed, every fdatasync of the WAL waits for the gate: the first write's commit is not answered meanwhile.
    vi.spyOn(prototype, 'datasync').mockImplementation(async function (this: FileHandle) {
      if (gated && (await this.stat()).ino === walInode) await gate
      return datasync.call(this)
    })
    const chain = server.deps.receiptChain
    const reserve = chain.reserve.bind(chain)
    let reserved = 0
    vi.spyOn(chain, 'reserve').mockImplementation((...args) => {
      reserved += 1
      return reserve(...args)
    })
    const storage = server.deps.storage
    const transaction = storage.transaction.bind(storage)
    let committing = 0
    vi.spyOn(storage, 'transaction').mockImplementation((work) => transaction(async (tx) => {
      const result = await work(tx)
      // The first write commits once the second has taken its slot (its own writes before the transaction are done).
      if (committing === 0) {
        await expect.poll(() => reserved).toBe(2)
        gated = true
      }
      committing += 1
      return result
    }))
    const sent = sendAll(writes)
    // Both writes' transactions reach their commits while no fdatasync of the WAL after the first's has returned.
    await expect.poll(() => committing).toBe(2)
    openGate()
    expect(await sent).toEqual([200, 200])
    await expectWholeLine()
  }, 120_000)

  if (testEngine === 'postgres') it('on PostgreSQL, sends a write’s append while the earlier write’s transaction is still open: the chain row’s lock holds it', async () => {
    // Two accounts: one account's writes also queue on its storage row, before they take a slot.
    const writes = [...(await prepare(1)), ...(await prepare(1, other))]
    const storage = server.deps.storage
    const transaction = storage.transaction.bind(storage)
    let committing = 0
    // Sessions of this server's schema waiting for a lock while holding the chain row's table.
    const appendsWaiting = async () =>
      Number((await readRows(server.database, "select count(*) as n from pg_stat_activity a where a.wait_event_type = 'Lock' and exists (select 1 from pg_locks l where l.pid = a.pid and l.relation = 'receipt_chain'::regclass and l.granted)"))[0]?.n)
    vi.spyOn(storage, 'transaction').mockImplementation((work) => transaction(async (tx) => {
      const result = await work(tx)
      // The first write commits only once the second's append waits on the chain row.
      if (committing++ === 0) await expect.poll(appendsWaiting).toBe(1)
      return result
    }))
    expect(await sendAll(writes)).toEqual([200, 200])
    expect(committing).toBe(2)
    await expectWholeLine()
  }, 120_000)
})
