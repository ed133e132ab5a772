// The receipt sequencer (decision 0023) signs each write's receipts ahead of its transaction,
// over a guess of the chain's head that the database checks. What it must guarantee: a write
// whose transaction fails after its receipts were signed leaves none, and the writes signed over
// them sign again (one line still, every signature valid); a key rotated meanwhile is not signed
// with again; on SQLite no other request waits on the connection while a receipt is signed; and
// the signer's thread dying (decision 0035) fails at most the writes it was signing.
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { rotateAttestationKey } from '../../src/features/custody/attestation.ts'
import { receiptSigner } from '../../src/features/custody/receipt-signer.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { openBundle, opsRaw, writeFor, type Bundle, type Write } from '../support/bundles.ts'
import { expectOneReceiptLine } from '../support/receipts.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let member: Uploader
let albums: string[]
/** Every applied write: its asset and how many receipts it issued. */
const applied = new Map<string, number>()

beforeAll(async () => {
  server = await startServer()
  member = await uploader(server, 'sequenced')
  albums = await Promise.all(Array.from({ length: 4 }, () => album(member)))
})
afterAll(() => server.close())
afterEach(() => vi.restoreAllMocks())

interface Prepared {
  readonly albumId: string
  readonly bundle: Bundle
  readonly write: Write
}

async function prepare(count: number): Promise<Prepared[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const albumId = albums[i % albums.length]!
      const bundle = await openBundle(member, albumId, { derivatives: 1 + (i % 2) })
      return { albumId, bundle, write: await writeFor(member, bundle) }
    }),
  )
}

const receiptCount = ({ bundle }: Prepared) => 1 + bundle.derivatives.length + (bundle.metadata === null ? 0 : 1) + 1

/** Sends the writes at once; records the applied ones; answers the statuses. */
async function sendAll(writes: readonly Prepared[]): Promise<number[]> {
  const answers = await Promise.all(writes.map((w) => opsRaw(server, member, w.albumId, w.write.request)))
  for (const [i, answer] of answers.entries()) if (answer.status === 200) applied.set(writes[i]!.write.envelope.file_id, receiptCount(writes[i]!))
  return answers.map((answer) => answer.status)
}

/** The whole chain is one line over every applied write's receipts, all signatures valid. */
async function expectWholeLine() {
  const lists = await Promise.all([...applied.keys()].map(async (assetId) => (await member.client.assetReceipts(assetId)).receipts))
  const expected = [...applied.values()].reduce((a, b) => a + b, 0)
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
    vi.spyOn(storage, 'transaction').mockImplementation((work) =>
      transaction(async (tx) => {
        const result = await work(tx)
        const outcome = result as { action?: string; replayed?: boolean }
        if (failures > 0 && outcome.action === 'create' && outcome.replayed === false) {
          failures -= 1
          throw new Error('injected: the transaction fails after its receipts were appended')
        }
        return result
      }),
    )
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
})
