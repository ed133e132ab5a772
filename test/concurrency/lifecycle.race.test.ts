// Racing lifecycle writes on one album are applied one at a time: identical requests give one
// application and replays of it, competing writes to one chain position give one winner and
// 409s naming its head, different assets take consecutive sync_seqs, and a loser leaves no file.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { albumState, blobFiles, openBundle, opsRaw, writeFor, type Bundle, type Write } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let member: Uploader
beforeAll(async () => {
  server = await startServer()
  member = await uploader(server, 'race')
})
afterAll(() => server.close())

const ROUNDS = 6

/** The files a successful write adds besides its uploaded ones: the metadata (the manifest is a row, not a file). */
function extrasOf(bundle: Bundle): string[] {
  return bundle.hashes.metadataBlobHash === null ? [] : [bundle.hashes.metadataBlobHash]
}

/** Sends the writes together; with `stagger`, the i-th leaves i * stagger ms after the first. */
function race(albumId: string, writes: readonly Write[], stagger = 0) {
  return Promise.all(
    writes.map(async (write, i) => {
      if (stagger > 0) await new Promise((resolve) => setTimeout(resolve, i * stagger))
      return opsRaw(server, member, albumId, write.request)
    }),
  )
}

describe.each([[2], [12]])('%i identical writes racing', (width) => {
  it('give exactly one application and replays of it, and one feed entry', async () => {
    // Some rounds spread the requests out a little, so that a later one also meets the first
    // one's transaction between its own checks (the session closing, the asset appearing).
    for (let round = 0; round < ROUNDS * 2; round++) {
      const albumId = await album(member)
      const bundle = await openBundle(member, albumId)
      const write = await writeFor(member, bundle)
      const before = await blobFiles(server)

      const answers = await race(
        albumId,
        Array.from({ length: width }, () => write),
        [0, 1, 2, 3, 4, 6][round % 6],
      )
      expect(
        answers.map((a) => a.status),
        answers.map((a) => a.text).join('\n'),
      ).toEqual(answers.map(() => 200))
      const applied = answers.filter((a) => a.json?.replayed === false)
      expect(applied).toHaveLength(1)
      for (const answer of answers) {
        expect(answer.json).toEqual({ asset_id: write.envelope.file_id, sync_seq: 1, action: 'create', replayed: answer !== applied[0] })
      }

      const after = await albumState(server, member, albumId)
      expect(after.feed.map((e) => [e.sync_seq, e.envelope_hash])).toEqual([[1, write.manifestHash]])
      expect(after.inFlight).toBe(0)
      expect(after.files).toEqual([...before, ...extrasOf(bundle)].sort())
    }
  })
})

describe('two different creates racing on one file_id', () => {
  it('give one 200 and one 409 stale_revival naming the winner’s manifest, and the loser leaves no file', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const albumId = await album(member)
      const fileId = randomUUID()
      const bundles = [await openBundle(member, albumId), await openBundle(member, albumId)]
      const writes = await Promise.all(bundles.map((bundle) => writeFor(member, bundle, { fileId })))
      const before = await blobFiles(server)

      const answers = await race(albumId, writes)
      const winner = answers.findIndex((a) => a.status === 200)
      expect(winner, answers.map((a) => a.text).join('\n')).not.toBe(-1)
      const loser = 1 - winner
      expect(answers[winner]!.json).toEqual({ asset_id: fileId, sync_seq: 1, action: 'create', replayed: false })
      expect(answers[loser]!.status).toBe(409)
      expect(answers[loser]!.json).toMatchObject({ code: 'error.op.stale_revival', chain_head: writes[winner]!.manifestHash })

      const after = await albumState(server, member, albumId)
      expect(after.feed.map((e) => e.envelope_hash)).toEqual([writes[winner]!.manifestHash])
      expect(after.files).toEqual([...before, ...extrasOf(bundles[winner]!)].sort())
      // The loser's session is still open; it can carry a create of another asset.
      expect(after.inFlight).toBe(1)
      const retry = await writeFor(member, bundles[loser]!)
      expect((await member.client.applyManifest(albumId, retry.request)).sync_seq).toBe(2)
    }
  })
})

describe('two creates of one file_id racing in albums of two accounts', () => {
  it('give one 200 and one 409 stale_revival without a chain_head (the winner’s asset is not the loser’s to see)', async () => {
    const other = await uploader(server, 'race-other')
    for (let round = 0; round < ROUNDS; round++) {
      const fileId = randomUUID()
      const sides = await Promise.all(
        [member, other].map(async (writer) => {
          const albumId = await album(writer)
          const write = await writeFor(writer, await openBundle(writer, albumId), { fileId })
          return { writer, albumId, write }
        }),
      )
      const answers = await Promise.all(sides.map(({ writer, albumId, write }) => opsRaw(server, writer, albumId, write.request)))
      expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text).join('\n')).toEqual([200, 409])
      const loser = answers.findIndex((a) => a.status === 409)
      expect(answers[loser]!.json).toMatchObject({ code: 'error.op.stale_revival' })
      expect(answers[loser]!.json).not.toHaveProperty('chain_head')
      // The loser's album gained nothing.
      const loserSide = sides[loser]!
      expect((await loserSide.writer.client.feed(loserSide.albumId)).entries).toEqual([])
    }
  })
})

describe('two replaces racing from the same head', () => {
  it('give one 200 and one 409 naming the winner’s manifest as the head', async () => {
    const albumId = await album(member)
    const fileId = randomUUID()
    const first = await openBundle(member, albumId)
    const create = await writeFor(member, first, { fileId })
    await member.client.applyManifest(albumId, create.request)
    let head = create.manifestHash
    let original = first.hashes.ciphertextHash
    for (let round = 0; round < ROUNDS; round++) {
      const bundles = [await openBundle(member, albumId), await openBundle(member, albumId)]
      const writes = await Promise.all(
        bundles.map((bundle) => writeFor(member, bundle, { fileId, action: 'replace', prior: head, originalBlobHash: original })),
      )
      const before = await albumState(server, member, albumId)

      const answers = await race(albumId, writes)
      const winner = answers.findIndex((a) => a.status === 200)
      expect(winner, answers.map((a) => a.text).join('\n')).not.toBe(-1)
      const loser = 1 - winner
      expect(answers[winner]!.json).toEqual({ asset_id: fileId, sync_seq: before.feed.length + 1, action: 'replace', replayed: false })
      expect(answers[loser]!.status).toBe(409)
      expect(answers[loser]!.json).toMatchObject({ code: 'error.op.stale_revival', chain_head: writes[winner]!.manifestHash })

      const after = await albumState(server, member, albumId)
      expect(after.feed.slice(0, -1)).toEqual(before.feed)
      expect(after.feed.at(-1)?.envelope_hash).toBe(writes[winner]!.manifestHash)
      expect(after.files).toEqual([...before.files, ...extrasOf(bundles[winner]!)].sort())
      expect(after.inFlight).toBe(before.inFlight - 1)
      // The loser gives up its session; the next round continues from the winner.
      await member.client.abortUploadSession(bundles[loser]!.uploadId)
      head = writes[winner]!.manifestHash
      original = bundles[winner]!.hashes.ciphertextHash
    }
  })
})

describe('many creates of different assets racing on one album', () => {
  it('take distinct, consecutive sync_seqs with no gap', async () => {
    const albumId = await album(member)
    const width = 8
    let applied = 0
    for (let round = 0; round < ROUNDS; round++) {
      const bundles = await Promise.all(Array.from({ length: width }, () => openBundle(member, albumId)))
      const writes = await Promise.all(bundles.map((bundle) => writeFor(member, bundle)))
      const before = await blobFiles(server)

      const answers = await race(albumId, writes)
      expect(
        answers.map((a) => a.status),
        answers.map((a) => a.text).join('\n'),
      ).toEqual(answers.map(() => 200))
      const seqs = answers.map((a) => a.json?.sync_seq as number).sort((x, y) => x - y)
      expect(seqs).toEqual(Array.from({ length: width }, (_, i) => applied + i + 1))
      for (const [i, answer] of answers.entries())
        expect(answer.json).toMatchObject({ asset_id: writes[i]!.envelope.file_id, action: 'create', replayed: false })
      applied += width

      const after = await albumState(server, member, albumId)
      expect(after.feed.map((e) => e.sync_seq)).toEqual(Array.from({ length: applied }, (_, i) => i + 1))
      // Each position holds the manifest that was answered with it.
      const byHash = new Map(after.feed.map((e) => [e.envelope_hash, e.sync_seq]))
      for (const [i, write] of writes.entries()) expect(byHash.get(write.manifestHash)).toBe(answers[i]!.json?.sync_seq)
      expect(after.inFlight).toBe(0)
      expect(after.files).toEqual([...before, ...bundles.flatMap((bundle) => extrasOf(bundle))].sort())
    }
  })
})
