// Racing deletes are applied one at a time under the album lock, like every lifecycle write:
// identical deletes give one application and replays of it, two different deletes of one asset
// give one winner and a 409 naming its manifest, and a delete racing a replace from the same head
// gives exactly one winner, the loser leaving nothing (no feed entry, no file, its session open).
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { albumState, deleteRaw, deletionFor, downloaded, openBundle, opsRaw, writeFor, type DeletionTarget } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let member: Uploader
beforeAll(async () => {
  server = await startServer()
  member = await uploader(server, 'delete-race')
})
afterAll(() => server.close())

const ROUNDS = 6

/** A fresh asset in a fresh album. */
async function asset(): Promise<DeletionTarget> {
  const albumId = await album(member)
  const bundle = await openBundle(member, albumId)
  const create = await writeFor(member, bundle, { fileId: randomUUID() })
  await member.client.applyManifest(albumId, create.request)
  return { albumId, fileId: create.envelope.file_id, head: create.manifestHash, original: bundle.hashes.ciphertextHash }
}

/** Sends the requests together; the i-th leaves i * stagger ms after the first. */
function together<T>(sends: readonly (() => Promise<T>)[], stagger = 0): Promise<T[]> {
  return Promise.all(
    sends.map(async (send, i) => {
      if (stagger > 0) await new Promise((resolve) => setTimeout(resolve, i * stagger))
      return send()
    }),
  )
}

describe.each([[2], [12]])('%i identical deletes racing', (width) => {
  it('give exactly one application and replays of it, and one feed entry', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const target = await asset()
      const deletion = await deletionFor(member, target)
      const answers = await together(
        Array.from({ length: width }, () => () => deleteRaw(server, member, target.albumId, target.fileId, deletion.request)),
        [0, 1, 3][round % 3],
      )
      expect(
        answers.map((a) => a.status),
        answers.map((a) => a.text).join('\n'),
      ).toEqual(answers.map(() => 200))
      const applied = answers.filter((a) => a.json?.replayed === false)
      expect(applied).toHaveLength(1)
      for (const answer of answers) expect(answer.json).toEqual({ asset_id: target.fileId, sync_seq: 2, action: 'delete', replayed: answer !== applied[0] })
      expect((await albumState(server, member, target.albumId)).feed.map((e) => [e.sync_seq, e.action, e.envelope_hash])).toEqual([
        [1, 'create', target.head],
        [2, 'delete', deletion.manifestHash],
      ])
    }
  })
})

describe('two different deletes of one asset racing', () => {
  it('give one 200 and one 409 stale_revival naming the winner’s manifest', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const target = await asset()
      const deletions = await Promise.all([deletionFor(member, target), deletionFor(member, target)])
      const answers = await together(deletions.map((deletion) => () => deleteRaw(server, member, target.albumId, target.fileId, deletion.request)))
      const winner = answers.findIndex((a) => a.status === 200)
      expect(winner, answers.map((a) => a.text).join('\n')).not.toBe(-1)
      const loser = 1 - winner
      expect(answers[winner]!.json).toEqual({ asset_id: target.fileId, sync_seq: 2, action: 'delete', replayed: false })
      expect(answers[loser]!.status).toBe(409)
      expect(answers[loser]!.json).toMatchObject({ code: 'error.op.stale_revival', chain_head: deletions[winner]!.manifestHash })
      expect((await albumState(server, member, target.albumId)).feed.map((e) => e.envelope_hash)).toEqual([target.head, deletions[winner]!.manifestHash])
    }
  })
})

describe('a delete and a replace racing from the same head', () => {
  it('give exactly one winner; the loser gets 409 naming the winner’s manifest and leaves nothing', async () => {
    for (let round = 0; round < ROUNDS * 2; round++) {
      const target = await asset()
      const bundle = await openBundle(member, target.albumId)
      const replace = await writeFor(member, bundle, { fileId: target.fileId, action: 'replace', prior: target.head, originalBlobHash: target.original })
      const deletion = await deletionFor(member, target)
      const before = await albumState(server, member, target.albumId)

      // The replace has more to do before its transaction (its bundle, its files): the delete
      // leaves a little later from round to round, so that each side wins some rounds.
      const [replaced, deleted] = await together(
        [() => opsRaw(server, member, target.albumId, replace.request), () => deleteRaw(server, member, target.albumId, target.fileId, deletion.request)],
        round * 4,
      )
      expect([replaced!.status, deleted!.status].sort(), `${replaced!.text}\n${deleted!.text}`).toEqual([200, 409])
      const after = await albumState(server, member, target.albumId)
      expect(after.feed.slice(0, -1)).toEqual(before.feed)
      if (deleted!.status === 200) {
        expect(replaced!.json).toMatchObject({ code: 'error.op.stale_revival', chain_head: deletion.manifestHash })
        expect(after.feed.at(-1)).toMatchObject({ action: 'delete', envelope_hash: deletion.manifestHash })
        // The replace stored nothing that stays (its metadata went again) and its session is still open.
        expect(after.files).toEqual(before.files)
        expect(after.inFlight).toBe(before.inFlight)
        for (const hash of [target.original, bundle.hashes.ciphertextHash]) expect(await downloaded(member, hash), hash).toBe(404)
      } else {
        expect(deleted!.json).toMatchObject({ code: 'error.op.stale_revival', chain_head: replace.manifestHash })
        expect(after.feed.at(-1)).toMatchObject({ action: 'replace', envelope_hash: replace.manifestHash })
        expect(after.files).toEqual([...before.files, bundle.hashes.metadataBlobHash!].sort())
        expect(await downloaded(member, replace.manifestHash)).toEqual(replace.manifest)
        expect(after.inFlight).toBe(before.inFlight - 1)
        expect(await downloaded(member, bundle.hashes.ciphertextHash)).toEqual(bundle.original)
      }
    }
  })
})
