// Custody holds when the process is killed: concurrent clients upload bundles and make lifecycle
// writes while the server is killed with SIGKILL at random moments and restarted on the same
// data, CRASH_KILLS times (10 in CI). Afterwards every acknowledged write is in its album's feed
// with its sync_seq and envelope hash, feeds have no gap or duplicate, every acknowledged blob
// downloads byte-identical and every asset is durable, each of the two receipt chains is one verified line,
// a fresh write works, and one maintenance pass leaves no file that no row owns.
import { randomBytes, randomUUID } from 'node:crypto'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CofferClient, sha256Hex } from '../../src/sdk/client.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { encode } from 'cborg'
import { signedManifest, type Uploader } from '../support/albums.ts'
import { testEngine } from '../support/database.ts'
import { blobFilesUnder, unownedBlobs } from '../support/files.ts'
import { ROOT, serveProcess, startProcess, workspace, type Started, type Workspace } from '../support/process.ts'
import { expectReceiptChains } from '../support/receipts.ts'

const KILLS = Number(process.env.CRASH_KILLS ?? 10)
const WRITERS = 4
/** After each round's first acknowledged write, the kill comes at a random moment within this. */
const KILL_WITHIN_MS = 400

interface Acknowledged {
  readonly member: number
  readonly albumId: string
  readonly assetId: string
  readonly syncSeq: number
  readonly envelopeHash: string
  readonly blobs: ReadonlyMap<string, Buffer>
}

let work: Workspace
const running: Started[] = []
afterAll(async () => {
  for (const server of running) await server.kill()
  await work?.remove()
})

async function serve(): Promise<{ url: string; readyMs: number }> {
  const started = Date.now()
  const server = await serveProcess(work.env)
  running.push(server)
  for (;;) {
    if (
      (await fetch(`${server.url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      return { url: server.url, readyMs: Date.now() - started }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A member as a client app sees it, pointed at `url` with the tokens it already holds. */
function at(member: Uploader, url: string): Uploader {
  return { ...member, client: new CofferClient({ baseUrl: url, tokens: member.client.tokens }) }
}

/**
 * One create as a client app makes it: open an upload session for an original and a derivative,
 * send them, sign the manifest, apply it with its metadata. `opened` learns the session first, so
 * that an unacknowledged write can be given up (aborted) as an app gives it up.
 */
async function create(member: Uploader, albumId: string, opened: (uploadId: string) => void): Promise<Omit<Acknowledged, 'member'>> {
  const original = randomBytes(2_000 + Math.floor(Math.random() * 20_000))
  const derivative = randomBytes(500)
  const metadata = randomBytes(100)
  const hashes = { ciphertextHash: sha256Hex(original), derivativeHashes: [sha256Hex(derivative)], metadataBlobHash: sha256Hex(metadata) }
  const session = await member.client.openUploadSession({
    album_id: albumId,
    crypto_suite_id: 1,
    ciphertext_hash: hashes.ciphertextHash,
    blobs: [
      { role: 'original', hash: hashes.ciphertextHash, size: original.length },
      { role: 'derivative', hash: hashes.derivativeHashes[0]!, size: derivative.length },
    ],
  })
  opened(session.upload_id)
  await member.client.putBlob(session.upload_id, hashes.ciphertextHash, original)
  await member.client.putBlob(session.upload_id, hashes.derivativeHashes[0]!, derivative)
  const { envelope, manifestCbor } = await signedManifest(member, hashes, { albumId })
  const result = await member.client.applyManifest(albumId, {
    manifest_envelope: envelope,
    manifest_cbor: Buffer.from(manifestCbor).toString('base64'),
    metadata_blob: metadata.toString('base64'),
  })
  const bytes = [original, derivative, metadata, Buffer.from(manifestCbor)]
  return {
    albumId,
    assetId: result.asset_id,
    syncSeq: result.sync_seq,
    envelopeHash: sha256Hex(manifestCbor),
    blobs: new Map(bytes.map((b) => [sha256Hex(b), b])),
  }
}

describe(`SIGKILL during writes, ${KILLS} times, on ${testEngine}`, () => {
  it(
    'loses no acknowledged write and leaves nothing behind',
    async () => {
      // Two receipt chains (decision 0072): a restarted server takes the chain the killed one
      // did not hold (its lease outlives it), so kills land during appends to either chain.
      const space = await workspace('crash')
      work = { ...space, env: { ...space.env, RECEIPT_CHAINS: '2' } }
      let { url } = await serve()
      const members: Uploader[] = []
      const albums: string[][] = []
      for (let i = 0; i < 2; i++) {
        const client = new CofferClient({ baseUrl: url })
        await client.register(`crash-${i}-${randomUUID()}@example.test`, 'a passphrase')
        const identity = IdentityKey.generate()
        await client.publishDirectory(encode({ directory_version: 1 }), identity)
        const member: Uploader = { email: '', password: '', client, userId: (await client.getProfile()).user_id, identity, deviceId: randomUUID() }
        members.push(member)
        albums.push([])
        for (let j = 0; j < 2; j++) {
          const albumId = randomUUID()
          await client.provisionAlbum(albumId)
          albums[i]!.push(albumId)
        }
      }

      const acknowledged: Acknowledged[] = []
      /** Upload sessions of writes never acknowledged, with their member: the app gives them up. */
      const givenUp: Array<{ member: number; uploadId: string }> = []
      const readyAfterCrashMs: number[] = []
      for (let kill = 0; kill < KILLS; kill++) {
        let stop = false
        const writers = Array.from({ length: WRITERS }, async (_, w) => {
          const m = w % members.length
          const member = at(members[m]!, url)
          while (!stop) {
            const albumId = albums[m]![Math.floor(Math.random() * albums[m]!.length)]!
            let uploadId: string | null = null
            try {
              acknowledged.push({ member: m, ...(await create(member, albumId, (id) => (uploadId = id))) })
            } catch {
              // Cut by the kill (or refused while it happened): not acknowledged, nothing to hold.
              if (uploadId !== null) givenUp.push({ member: m, uploadId })
            }
          }
        })
        // However slow the machine, each round lands writes, and the kill finds others in flight.
        const before = acknowledged.length
        while (acknowledged.length === before) await new Promise((resolve) => setTimeout(resolve, 10))
        await new Promise((resolve) => setTimeout(resolve, Math.random() * KILL_WITHIN_MS))
        await running.at(-1)!.kill()
        stop = true
        await Promise.all(writers)
        const restarted = await serve()
        url = restarted.url
        readyAfterCrashMs.push(restarted.readyMs)
        // What the files of a write cut short become is up to the server once the app gives up
        // (a write that committed before the kill has closed its session already: 404).
        for (const { member, uploadId } of givenUp.splice(0))
          await at(members[member]!, url)
            .client.abortUploadSession(uploadId)
            .catch(() => {})
      }
      expect(acknowledged.length, 'writes were acknowledged between the kills').toBeGreaterThan(KILLS)

      const clients = members.map((member) => at(member, url))
      // Every acknowledged write is in its feed at its place; feeds run 1..n without gap or duplicate.
      const assets = new Map<string, { member: number; albumId: string }>()
      for (const [m, member] of clients.entries()) {
        for (const albumId of albums[m]!) {
          const entries = (await member.client.feed(albumId, 0, 1000)).entries
          expect(entries.map((e) => e.sync_seq)).toEqual(entries.map((_, i) => i + 1))
          for (const entry of entries) assets.set(entry.asset_id, { member: m, albumId })
          for (const write of acknowledged.filter((a) => a.albumId === albumId)) {
            expect(entries.find((e) => e.sync_seq === write.syncSeq)).toMatchObject({ asset_id: write.assetId, envelope_hash: write.envelopeHash })
          }
        }
      }
      // Every acknowledged blob downloads byte-identical, and every acknowledged asset is durable.
      for (const write of acknowledged) {
        const member = clients[write.member]!
        for (const [hash, bytes] of write.blobs) expect(Buffer.from(await member.client.downloadBlob(hash)).equals(bytes), hash).toBe(true)
        const [verdict] = (await member.client.verifyStorage({ assets: [{ asset_id: write.assetId, blob_hashes: [...write.blobs.keys()] }] })).verdicts
        expect(verdict?.durable).toBe(true)
      }
      // Two verified receipt lines over every asset the feeds hold, both used: 4 receipts per bundle.
      const receipts = []
      for (const [assetId, { member }] of assets) receipts.push(...(await clients[member]!.client.assetReceipts(assetId)).receipts)
      const lines = await expectReceiptChains(receipts, assets.size * 4, await clients[0]!.client.attestationKeys())
      expect(lines.map((line) => line.length > 0)).toEqual([true, true])

      // A fresh write works.
      const fresh = await create(clients[0]!, albums[0]![0]!, () => {})
      expect(fresh.syncSeq).toBeGreaterThan(0)

      // One maintenance pass, as an operator runs it beside the server, leaves no unowned file.
      const maintain = startProcess(work.env, path.join(ROOT, 'src/cli/main.ts'), ['maintain'])
      expect(await maintain.exited, maintain.lines.join('\n')).toBe(0)
      expect(await unownedBlobs(await blobFilesUnder(path.join(work.directory, 'blobs')), work.database.target, Date.now())).toEqual([])

      const sorted = [...readyAfterCrashMs].sort((a, b) => a - b)
      console.log(
        `crash harness (${testEngine}): ${KILLS} kills, ${acknowledged.length} acknowledged writes, ${assets.size} assets; ` +
          `ready after a crash in ${sorted[Math.floor(sorted.length / 2)]} ms median, ${sorted.at(-1)} ms max`,
      )
    },
    60_000 + KILLS * 15_000,
  )
})
