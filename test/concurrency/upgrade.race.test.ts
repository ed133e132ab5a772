// An upgrade can never commit behind an upload session or a lifecycle write that raced its start:
// the album's lock orders them, so either the racer lands before the window (and the commit is
// refused as not quiescent) or inside it (and the racer is refused); and of racing starts with
// different intents exactly one opens the window.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/sdk/client.ts'
import { raw } from '../support/actors.ts'
import { album, ciphertext, uploader, type Uploader } from '../support/albums.ts'
import { PROTOCOL_CURRENT, bearer, intent, openBundle, opsRaw, tombstone, writeFor } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let member: Uploader
beforeAll(async () => {
  server = await startServer()
  member = await uploader(server, 'upgrade-race')
})
afterAll(() => server.close())

const ROUNDS = 8
const TARGET = '2026-09-01'

async function after<T>(ms: number, work: () => Promise<T>): Promise<T> {
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms))
  return work()
}

function openRaw(albumId: string) {
  const original = ciphertext(256)
  const hash = sha256Hex(original)
  return raw(server, 'POST', '/v1/upload', {
    headers: { ...bearer(member), 'content-type': 'application/json' },
    body: JSON.stringify({ album_id: albumId, crypto_suite_id: 1, ciphertext_hash: hash, blobs: [{ role: 'original', hash, size: original.length }] }),
  })
}

function startRaw(albumId: string, intentId: string) {
  return raw(server, 'POST', `/v1/albums/${albumId}/upgrade`, {
    headers: { ...bearer(member), 'content-type': 'application/cbor' },
    body: intent(intentId, TARGET),
  })
}

function commitRaw(albumId: string, intentId: string) {
  return raw(server, 'POST', `/v1/albums/${albumId}/upgrade/commit?intent_id=${intentId}`, {
    headers: { ...bearer(member), 'content-type': 'application/cbor' },
    body: tombstone(intentId),
  })
}

async function versionOf(albumId: string): Promise<string | undefined> {
  return (await member.client.listAlbums()).albums.find((a) => a.album_id === albumId)?.protocol_version
}

describe('an upload-session open racing an upgrade start, then the commit', () => {
  it('either the open is refused (409) and the commit pins the album, or the open lands first and the commit is not_quiescent', async () => {
    for (let round = 0; round < ROUNDS * 2; round++) {
      const albumId = await album(member)
      const intentId = randomUUID()
      const [opened, started] = await Promise.all([after(round % 2 === 0 ? 0 : round % 5, () => openRaw(albumId)), startRaw(albumId, intentId)])
      expect(started.status, started.text).toBe(200)
      expect([201, 409], opened.text).toContain(opened.status)
      const committed = await commitRaw(albumId, intentId)
      const phase = await member.client.readUpgrade(albumId)

      // The start's answer counts what was open when the window opened.
      expect(started.json?.in_flight).toBe(opened.status === 201 ? 1 : 0)
      if (opened.status === 409) {
        expect(opened.json?.code).toBe('error.upgrade.in_flight')
        expect(committed.status, committed.text).toBe(200)
        expect(committed.json).toEqual({ album_id: albumId, in_flight: 0 })
        expect(phase).toEqual({ album_id: albumId, in_flight: 0 })
        expect(await versionOf(albumId)).toBe(TARGET)
      } else {
        expect(committed.status, committed.text).toBe(409)
        expect(committed.json?.code).toBe('error.upgrade.not_quiescent')
        expect(phase).toMatchObject({ intent_id: intentId, in_flight: 1 })
        expect(await versionOf(albumId)).toBe(PROTOCOL_CURRENT)
      }
    }
  })
})

describe('an upload-session open racing the commit of a live ceremony', () => {
  it('never keeps the commit from succeeding: an open in the window is refused, one after the commit opens under the new version', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const albumId = await album(member)
      const intentId = randomUUID()
      await member.client.startUpgrade(albumId, intent(intentId, TARGET))
      const [opened, committed] = await Promise.all([after(round % 3, () => openRaw(albumId)), commitRaw(albumId, intentId)])
      expect(committed.status, committed.text).toBe(200)
      expect(committed.json).toEqual({ album_id: albumId, in_flight: 0 })
      expect(await versionOf(albumId)).toBe(TARGET)
      if (opened.status === 409) {
        expect(opened.json?.code).toBe('error.upgrade.in_flight')
        expect((await member.client.readUpgrade(albumId)).in_flight).toBe(0)
      } else {
        expect(opened.status, opened.text).toBe(201)
        expect(await member.client.readUpgrade(albumId)).toEqual({ album_id: albumId, in_flight: 1 })
      }
    }
  })
})

describe('a lifecycle write racing an upgrade start, then the commit', () => {
  it('is applied before the window (the commit then succeeds) or refused in it with its session kept (the commit is then not_quiescent)', async () => {
    for (let round = 0; round < ROUNDS * 2; round++) {
      const albumId = await album(member)
      const bundle = await openBundle(member, albumId)
      const write = await writeFor(member, bundle)
      const intentId = randomUUID()
      // Odd rounds hold the start back a little: the write has more to do before its transaction.
      const [applied, started] = await Promise.all([
        opsRaw(server, member, albumId, write.request),
        after(round % 2 === 0 ? 0 : 2 * (round % 7), () => startRaw(albumId, intentId)),
      ])
      expect(started.status, started.text).toBe(200)
      const committed = await commitRaw(albumId, intentId)
      const feed = (await member.client.feed(albumId)).entries

      // The write's session was still open when the window opened exactly when the write was refused.
      expect(started.json?.in_flight).toBe(applied.status === 200 ? 0 : 1)
      if (applied.status === 200) {
        expect(applied.json).toEqual({ asset_id: write.envelope.file_id, sync_seq: 1, action: 'create', replayed: false })
        expect(feed.map((e) => e.envelope_hash)).toEqual([write.manifestHash])
        expect(committed.status, committed.text).toBe(200)
        expect(await versionOf(albumId)).toBe(TARGET)
      } else {
        expect([applied.status, applied.json?.code], applied.text).toEqual([409, 'error.upgrade.in_flight'])
        expect(feed).toEqual([])
        expect([committed.status, committed.json?.code]).toEqual([409, 'error.upgrade.not_quiescent'])
        expect(await member.client.readUpgrade(albumId)).toMatchObject({ intent_id: intentId, in_flight: 1 })
        expect(await versionOf(albumId)).toBe(PROTOCOL_CURRENT)
      }
    }
  })
})

describe('racing starts', () => {
  it.each([[2], [6]])('with %i different intents: exactly one 200, the others 409 in_flight, and the winner is the live intent', async (width) => {
    for (let round = 0; round < ROUNDS; round++) {
      const albumId = await album(member)
      const intents = Array.from({ length: width }, () => randomUUID())
      const answers = await Promise.all(intents.map((intentId) => startRaw(albumId, intentId)))
      const winners = answers.flatMap((answer, i) => (answer.status === 200 ? [i] : []))
      expect(winners, answers.map((a) => a.text).join('\n')).toHaveLength(1)
      const winner = intents[winners[0]!]!
      for (const [i, answer] of answers.entries()) {
        if (i !== winners[0]) expect([answer.status, answer.json?.code]).toEqual([409, 'error.upgrade.in_flight'])
      }
      expect(answers[winners[0]!]!.json).toMatchObject({ album_id: albumId, intent_id: winner, to_protocol_version: TARGET })
      expect(await member.client.readUpgrade(albumId)).toEqual(answers[winners[0]!]!.json)
      // Only the winner's intent commits.
      for (const loser of intents.filter((id) => id !== winner)) expect((await commitRaw(albumId, loser)).json?.code).toBe('error.upgrade.in_flight')
      expect((await commitRaw(albumId, winner)).status).toBe(200)
    }
  })

  it('with one intent repeated: every answer is the same window', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const albumId = await album(member)
      const intentId = randomUUID()
      const answers = await Promise.all(Array.from({ length: 4 }, () => startRaw(albumId, intentId)))
      expect(
        answers.map((a) => a.status),
        answers.map((a) => a.text).join('\n'),
      ).toEqual([200, 200, 200, 200])
      for (const answer of answers) expect(answer.json).toEqual(answers[0]!.json)
      expect(answers[0]!.json).toMatchObject({ intent_id: intentId, to_protocol_version: TARGET })
    }
  })
})
