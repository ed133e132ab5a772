// Copies of one photo in one backup (coffer-photos backup): each is an asset of its own on the
// one encrypted original, and none fails. The server finds a write's upload session by its
// original (SPEC, "lifecycle writes"): two copies' sessions open at once name the same original
// and could be taken for one another (a write closing the other's session, 422, and an asset
// receipted with the other copy's thumbnail), so the sync engine sends copies one after another.
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writePhoto } from '../support/photos.ts'
import { events, expectOk, photos } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

const COPIES = 8

let server: TestServer
let work: string
let home: string

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-copies-'))
  home = path.join(work, 'home')
  expectOk(await photos(home, ['login', server.url, '--register', '--email', uniqueEmail('copies'), '--password-stdin'], { stdin: `${PASSWORD}\n` }))
  expectOk(await photos(home, ['setup', '--yes', '--json']))
})
afterAll(async () => {
  await server.close()
  await rm(work, { recursive: true, force: true })
})

describe('copies of one photo in one backup', () => {
  it('are stored once each, sharing the original, all verified, with as many in flight as files', async () => {
    const folder = path.join(work, 'photos')
    await writePhoto(path.join(folder, 'photo.jpg'), { format: 'jpeg', width: 320, height: 240, seed: 5 })
    for (let i = 1; i < COPIES; i++) await cp(path.join(folder, 'photo.jpg'), path.join(folder, `photo (${i}).jpg`))
    await writePhoto(path.join(folder, 'other.jpg'), { format: 'jpeg', width: 320, height: 240, seed: 6 })

    const backup = await photos(home, ['backup', folder, '--album', 'Copies', '--concurrency', String(COPIES + 1), '--json'])
    expectOk(backup)
    expect(events(backup).find((event) => event.event === 'summary')).toMatchObject({
      files: COPIES + 1,
      stored: COPIES + 1,
      failed: 0,
      // Every copy after the first names the first one's original, not sent again.
      deduplicated: COPIES - 1,
    })
    const verify = await photos(home, ['verify', '--json'])
    expectOk(verify)
    expect(verify.stdout).not.toMatch(/NOT VERIFIED|not verified/)
  })
})
