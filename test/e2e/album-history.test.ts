// A server whose database was rewritten behind the clients' backs (issue 38; decision 0065), on
// each engine: the feed's rows (album_ops) deleted, renumbered or changed with SQL, as a
// compromised operator would. coffer-photos (in-process, the real server) says so on its next
// `verify`, exit 7 with the kind: an entry gone ("omitted", on the device that saw it and on a
// device that never saw the album), two entries renumbered ("reordered"), the last ones gone
// ("rolled_back"), also on a device joined by pairing after them (the record handed over), an
// entry's action changed ("forged"), and a row changed or gone between a check and the reads of
// the same command after it. Two devices writing into one album at
// once, on the engine's own concurrency, raise no alarm. test/client/photos-history.test.ts plays
// the same server as a proxy, with every command.
import { randomUUID } from 'node:crypto'
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { planAlbum } from '../../src/client/albums.ts'
import { TAMPERING, type TamperingKind } from '../../src/client/tampering.ts'
import { openAccount } from '../../src/cli/photos/account.ts'
import { Home } from '../../src/cli/photos/home.ts'
import { libraryOf } from '../../src/cli/photos/library.ts'
import { EXIT } from '../../src/cli/photos/command.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { readRows, writeRows } from '../support/database.ts'
import { writePhoto } from '../support/photos.ts'
import { events, expectOk, pairedDevice, photos } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

const CLI_TIMEOUT = 180_000

let server: TestServer
let work: string
let first: string
let second: string
const email = uniqueEmail('album-history')

let folders = 0
async function photoFolder(count: number): Promise<string> {
  const folder = path.join(work, `photos-${++folders}`)
  await mkdir(folder, { recursive: true })
  for (let n = 0; n < count; n++)
    await writePhoto(path.join(folder, `IMG_${folders}_${n}.jpg`), { format: 'jpeg', width: 48, height: 32, seed: folders * 100 + n })
  return folder
}

async function backup(home: string, folder: string, album: string): Promise<string> {
  const run = await photos(home, ['backup', folder, '--album', album, '--json'])
  expectOk(run)
  return events(run).find((e) => e.event === 'start')!.album_id as string
}

/** The album's feed rows as stored, in order. */
async function rows(albumId: string): Promise<{ sync_seq: number; action: string }[]> {
  const found = await readRows(server.database, `SELECT sync_seq, action FROM album_ops WHERE album_id = '${albumId}' ORDER BY sync_seq`)
  return found.map((row) => ({ sync_seq: Number(row.sync_seq), action: String(row.action) }))
}

/** `verify <album> --json` on a config folder: exit 7 and the kind, or ok. */
async function verified(home: string, album: string): Promise<{ code: number | null; kind: unknown; text: string }> {
  const run = await photos(home, ['verify', album, '--json'])
  return { code: run.code, kind: events(run).find((e) => e.event === 'history')?.kind, text: run.stderr }
}

function expectCaught(result: Awaited<ReturnType<typeof verified>>, kind: TamperingKind): void {
  expect(result.code, result.text).toBe(EXIT.untrusted)
  expect(result.kind).toBe(kind)
  expect(result.text).toContain(TAMPERING[kind])
}

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-album-history-'))
  first = path.join(work, 'first')
  second = path.join(work, 'second')
  expectOk(await photos(first, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD }))
  expectOk(await photos(first, ['setup', '--yes', '--device-name', 'First']))
  expectOk(await photos(second, ['login', server.url, '--email', email, '--password-stdin'], { stdin: PASSWORD }))
  await cp(path.join(first, 'keys.json'), path.join(second, 'keys.json'))
}, 120_000)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

describe("an album's feed rewritten in the database", { timeout: CLI_TIMEOUT }, () => {
  it('two devices writing into one album at once: no alarm on either', async () => {
    const album = `Together ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(1), album)
    expectOk(await photos(second, ['verify', album]))
    const [a, b] = [await photoFolder(3), await photoFolder(3)]
    for (const run of await Promise.all([photos(first, ['backup', a, '--album', album]), photos(second, ['backup', b, '--album', album])])) expectOk(run)
    for (const home of [first, second]) expect((await verified(home, album)).code).toBe(EXIT.ok)
    expect(await rows(albumId)).toHaveLength(8)
  })

  it('a row deleted: "omitted", on the device that saw it and on one that never did', async () => {
    const album = `Deleted row ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(3), album)
    await backup(first, await photoFolder(1), album)
    expectOk(await photos(first, ['verify', album]))
    const [, , gone] = await rows(albumId)
    await writeRows(server.database, 'DELETE FROM album_ops WHERE album_id = ? AND sync_seq = ?', [albumId, gone!.sync_seq])
    expectCaught(await verified(first, album), 'omitted')
    expectCaught(await verified(second, album), 'omitted')
  })

  it('two rows renumbered: "reordered"', async () => {
    const album = `Renumbered ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(3), album)
    expectOk(await photos(first, ['verify', album]))
    const [, x, y] = await rows(albumId)
    const swap = 'UPDATE album_ops SET sync_seq = ? WHERE album_id = ? AND sync_seq = ?'
    await writeRows(server.database, swap, [1_000_000, albumId, x!.sync_seq])
    await writeRows(server.database, swap, [x!.sync_seq, albumId, y!.sync_seq])
    await writeRows(server.database, swap, [y!.sync_seq, albumId, 1_000_000])
    expectCaught(await verified(first, album), 'reordered')
  })

  it('the last rows deleted: "rolled_back"', async () => {
    const album = `Rolled back ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(2), album)
    await backup(first, await photoFolder(2), album)
    expectOk(await photos(first, ['verify', album]))
    const last = (await rows(albumId)).slice(-2)
    for (const row of last) await writeRows(server.database, 'DELETE FROM album_ops WHERE album_id = ? AND sync_seq = ?', [albumId, row.sync_seq])
    expectCaught(await verified(first, album), 'rolled_back')
  })

  it('the last rows, which no later entry commits to, deleted: "rolled_back" on a device joined after them, from the record the adding device handed over', async () => {
    const album = `Joined after ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(2), album)
    await backup(first, await photoFolder(2), album)
    const joined = path.join(work, `joined-${randomUUID().slice(0, 8)}`)
    const { added } = await pairedDevice(first, joined, server.url, email, PASSWORD)
    expect(events(added).find((e) => e.event === 'device_added')).toMatchObject({ history: 'kept' })
    const last = (await rows(albumId)).slice(-2)
    for (const row of last) await writeRows(server.database, 'DELETE FROM album_ops WHERE album_id = ? AND sync_seq = ?', [albumId, row.sync_seq])
    expectCaught(await verified(joined, album), 'rolled_back')
    expect((await verified(second, album)).code).toBe(EXIT.ok) // never saw the album and was handed nothing: a consistent prefix passes
  })

  it('rewritten between the check and the reads after it (the plan of a restore): "omitted" for a row gone, "forked" for a row served otherwise', async () => {
    const album = `After the check ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(3), album)
    const library = libraryOf(await openAccount(new Home(first)))
    await library.history.check(albumId)
    expect((await planAlbum(library, albumId)).files).toBe(3) // the same history again: read as it was checked
    const [, one, two] = await rows(albumId)
    await writeRows(
      server.database,
      'UPDATE album_ops SET manifest_cbor = (SELECT manifest_cbor FROM album_ops WHERE album_id = ? AND sync_seq = ?) WHERE album_id = ? AND sync_seq = ?',
      [albumId, one!.sync_seq, albumId, two!.sync_seq],
    )
    await expect(planAlbum(library, albumId)).rejects.toMatchObject({ kind: 'forked', seq: two!.sync_seq })
    await writeRows(server.database, 'DELETE FROM album_ops WHERE album_id = ? AND sync_seq = ?', [albumId, two!.sync_seq])
    await expect(planAlbum(library, albumId)).rejects.toMatchObject({ kind: 'omitted' })
  })

  it('a row\'s action changed: "forged"', async () => {
    const album = `Changed row ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(2), album)
    const [, photo] = await rows(albumId)
    await writeRows(server.database, "UPDATE album_ops SET action = 'delete' WHERE album_id = ? AND sync_seq = ?", [albumId, photo!.sync_seq])
    expectCaught(await verified(second, album), 'forged')
  })
})
