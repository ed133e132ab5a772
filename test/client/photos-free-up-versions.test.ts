// `coffer-photos free-up` and a file backed up as a new version of its photo (edited, backed up
// again: the asset keeps the id of its first content): it is recognised as backed up and freed;
// once the album holds yet another version of the photo (replaced elsewhere), it is kept, with
// that reason (docs/photos.md, "Freeing space").
import { mkdtemp, rm, utimes } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writePhoto } from '../support/photos.ts'
import { events, expectOk, photos, type PhotosRun } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-free-up-versions-'))
}, 60_000)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

const reasons = (run: PhotosRun): Record<string, unknown> =>
  Object.fromEntries(
    events(run)
      .filter((e) => e.event === 'file')
      .map((e) => [e.path, e.reason]),
  )

describe('coffer-photos free-up and new versions', { timeout: 120_000 }, () => {
  it('frees a file backed up as a new version of its photo; keeps it once the album holds another version', async () => {
    const home = path.join(work, 'home')
    expectOk(await photos(home, ['login', server.url, '--register', '--email', uniqueEmail('versions'), '--password-stdin'], { stdin: `${PASSWORD}\n` }))
    expectOk(await photos(home, ['setup', '--yes', '--json']))
    const folder = path.join(work, 'Edits')
    const photo = (name: string, seed: number) => writePhoto(path.join(folder, name), { format: 'jpeg', width: 64, height: 48, seed })
    await photo('a.jpg', 1)
    await photo('b.jpg', 2)
    expectOk(await photos(home, ['backup', folder]))

    await photo('a.jpg', 3) // edited
    // A time that the file system stores a hair under its millisecond (utimes takes seconds as a
    // double): its whole millisecond must be read the same by the backup and by free-up.
    const edited = new Date(1_764_000_000_001)
    await utimes(path.join(folder, 'a.jpg'), edited, edited)
    const again = await photos(home, ['backup', folder, '--json'])
    expectOk(again)
    expect(events(again).find((e) => e.event === 'file' && e.path === 'a.jpg')).toMatchObject({ outcome: 'replaced' })
    const dry = await photos(home, ['free-up', folder, '--json'])
    expectOk(dry)
    expect(reasons(dry)).toEqual({ 'a.jpg': null, 'b.jpg': null })

    // Another version stored elsewhere (from another file): the local one is no longer the album's.
    await writePhoto(path.join(work, 'elsewhere.jpg'), { format: 'jpeg', width: 64, height: 48, seed: 4 })
    expectOk(await photos(home, ['replace', 'Edits', 'a.jpg', path.join(work, 'elsewhere.jpg')]))
    const kept = await photos(home, ['free-up', folder, '--json'])
    expectOk(kept)
    expect(reasons(kept)).toEqual({ 'a.jpg': 'newer_in_album', 'b.jpg': null })
    expect(events(kept).find((e) => e.event === 'file' && e.path === 'a.jpg')).toMatchObject({
      reason_text: 'backed up from here as a version of a photo the album now holds in another version',
      details: ["the album's current version of the photo is other content (replaced elsewhere since)"],
    })
  })
})
