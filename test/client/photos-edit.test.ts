// `coffer-photos rm`, `trash` and `replace` (docs/photos.md, "Deleting and replacing photos"),
// the real binary against a real server, with two config folders as two devices of one account:
// a photo moved to Recently deleted leaves ls and restore on both, `trash ls` lists it, `trash
// restore` brings it back and `trash empty` deletes it for good; a photo deleted for good leaves
// ls, restore and verify on both; a replaced one restores byte-identical
// with its new bytes on the other device, and the next backup of the folder sends nothing; a
// retained photo is refused with its date; and a server that stops taking the album's protocol
// version (426) is carried through by the client, the album upgraded, nobody asked anything.
import { createHash, randomUUID } from 'node:crypto'
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findAlbum, type Library } from '../../src/client/albums.ts'
import { backupFile } from '../../src/client/upload.ts'
import { Home } from '../../src/cli/photos/home.ts'
import { fromBase64 } from '../../src/sdk/bytes.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { generateLibrary, writePhoto, type LibraryFile } from '../support/photos.ts'
import { errorLineOf, events, expectOk, onTerminal, photos } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string
let folder: string
let generated: LibraryFile[]
let first: string
let second: string
const email = uniqueEmail('edit')
const ALBUM = 'Trips'

/** Each test runs the binary several times, a few seconds each on a busy machine. */
const CLI_TIMEOUT = 180_000

let dests = 0
const newDest = (): string => path.join(work, `restored-${++dests}`)

/** The file the terminal test deleted (the later tests leave it out). */
let removedOnTerminal: string | null = null

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

async function filesUnder(root: string, relative = ''): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(path.join(root, relative), { withFileTypes: true })) {
    const child = relative === '' ? entry.name : `${relative}/${entry.name}`
    if (entry.isDirectory()) found.push(...(await filesUnder(root, child)))
    else found.push(child)
  }
  return found.sort()
}

async function listed(home: string): Promise<Map<string, Record<string, unknown>>> {
  const run = await photos(home, ['ls', ALBUM, '--json'])
  expectOk(run)
  return new Map(
    events(run)
      .filter((e) => e.event === 'file')
      .map((e) => [e.name as string, e]),
  )
}

/** The account as the tests read it: keys from the first config folder, a session of the test's own. */
async function library(): Promise<Library> {
  const keys = new Home(first).readKeys()!
  const client = server.client()
  await client.login(email, PASSWORD)
  const identity = IdentityKey.fromSeeds(fromBase64(keys.identity_seeds))
  const { user_id: userId } = await client.getProfile()
  return { client, identity, identityPublicKey: identity.publicKey, userId, deviceId: randomUUID(), masterKey: fromBase64(keys.master_key) }
}

/** Moves the server's protocol range, as an operator's new PROTOCOL_MIN / PROTOCOL_MAX would. */
function setProtocolRange(range: { min: string; current: string; max: string }): void {
  ;(server.deps.config as { protocol: typeof range }).protocol = range
}

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-edit-'))
  folder = path.join(work, ALBUM)
  generated = await generateLibrary(folder, { count: 8, seed: 1313, subfolders: 2 })
  first = path.join(work, 'first', 'coffer-photos')
  second = path.join(work, 'second', 'coffer-photos')
  expectOk(await photos(first, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD }))
  expectOk(await photos(first, ['setup', '--yes', '--device-name', 'Laptop']))
  expectOk(await photos(first, ['backup', folder, '--album', ALBUM]))
  // The second device: the account's keys (as joining leaves them), its own session.
  expectOk(await photos(second, ['login', server.url, '--email', email, '--password-stdin'], { stdin: PASSWORD }))
  await cp(path.join(first, 'keys.json'), path.join(second, 'keys.json'))
}, 300_000)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

describe("the commands' usage", { timeout: CLI_TIMEOUT }, () => {
  it.each(['rm', 'replace'])('%s --help prints its usage and the overview lists it', async (name) => {
    const run = await photos(first, [name, '--help'])
    expectOk(run)
    expect(run.stdout).toMatch(new RegExp(`^usage: coffer-photos ${name}\\b`))
    expect((await photos(first, ['--help'])).stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'))
  })

  it.each([
    [['rm'], /rm takes an album name and at least one file name or asset id/],
    [['rm', ALBUM], /rm takes an album name and at least one file name or asset id/],
    [['replace', ALBUM, 'a.jpg'], /replace takes an album name, the file's name in the album, and the new file/],
    [['replace', ALBUM, 'a.jpg', '/nonexistent/b.jpg'], /\/nonexistent\/b.jpg is not a file/],
    [['rm', ALBUM, 'no-such.jpg', '--yes'], /album "Trips" has no file "no-such.jpg" \(`coffer-photos ls Trips` lists them\)/],
    [['rm', 'No album', 'x.jpg', '--yes'], /there is no album "No album"/],
  ])('%j: exit 2 with the reason', async (args, reason) => {
    const run = await photos(first, args)
    expect(run.code, run.stderr).toBe(2)
    expect(run.stderr).toMatch(reason)
  })

  // util-linux's `script` runs the command on a pseudo-terminal (Debian: bsdutils, essential).
  it('rm --for-good on a terminal asks first: no (the default) deletes nothing (exit 130), yes deletes', async () => {
    const names = [...(await listed(first)).keys()]
    const [one, two] = [names[names.length - 1]!, names[names.length - 2]!]
    const declined = onTerminal(first, ['rm', ALBUM, one, two, '--for-good'])
    await declined.waitFor(/Delete 2 files \([^)]+\) from album "Trips" for good\?/)
    declined.type('\r')
    expect(await declined.done).toBe(130)
    expect(declined.text()).toMatch(/nothing was deleted/)
    expect((await listed(first)).has(one)).toBe(true)
    const accepted = onTerminal(first, ['rm', ALBUM, one, '--for-good'])
    await accepted.waitFor(/Delete "[^"]+" from album "Trips" for good\?/)
    accepted.type('y\r')
    expect(await accepted.done).toBe(0)
    removedOnTerminal = one
    expect(accepted.text()).toContain(`deleted ${one}`)
    expect((await listed(first)).has(one)).toBe(false)
    // The file is still in the folder: a backup does not store it again (the album keeps it deleted).
    const backup = await photos(first, ['backup', folder, '--album', ALBUM, '--json'])
    expectOk(backup)
    expect(events(backup).find((e) => e.event === 'summary')).toMatchObject({ stored: 0, deleted: 1, failed: 0, sent_bytes: 0 })
    expect(events(backup).find((e) => e.event === 'file' && e.path === one)).toMatchObject({ outcome: 'deleted', sent_bytes: 0 })
    expect((await listed(first)).has(one)).toBe(false)
    // Run again: its record says which asset it is, so it is not even read.
    const again = await photos(first, ['backup', folder, '--album', ALBUM, '--json'])
    expect(events(again).find((e) => e.event === 'file' && e.path === one)).toMatchObject({ outcome: 'deleted' })
  })

  it('rm --for-good without a terminal and without --yes deletes nothing: exit 2 naming --yes', async () => {
    const name = generated[0]!.path
    const run = await photos(first, ['rm', ALBUM, name, '--for-good'])
    expect(run.code).toBe(2)
    expect(errorLineOf(run)).toMatch(/--yes is needed: there is no terminal to confirm on/)
    expect((await listed(first)).has(name)).toBe(true)
  })
})

describe('rm and replace, seen from both devices', { timeout: CLI_TIMEOUT }, () => {
  let deleted: LibraryFile
  let replaced: LibraryFile
  let edited: Buffer

  it('rm --for-good deletes a photo: ls no longer shows it, restore does not bring it back, verify finds nothing wrong', async () => {
    deleted = generated.find((f) => f.type === 'image/jpeg' && f.path.includes('/') && f.path !== removedOnTerminal)!
    const before = await listed(first)
    const run = await photos(first, ['rm', ALBUM, deleted.path, '--for-good', '--yes', '--json'])
    expectOk(run)
    expect(events(run).filter((e) => e.event === 'deleted')).toEqual([
      expect.objectContaining({ name: deleted.path, asset_id: before.get(deleted.path)!.asset_id }),
    ])
    expect(events(run).find((e) => e.event === 'summary')).toMatchObject({ deleted: 1, failed: 0, files: 1 })
    const after = await listed(first)
    expect([...after.keys()].sort()).toEqual([...before.keys()].filter((n) => n !== deleted.path).sort())
    const dest = newDest()
    expectOk(await photos(first, ['restore', ALBUM, dest]))
    expect(await filesUnder(dest)).toEqual([...after.keys()].sort())
    const verify = await photos(first, ['verify', ALBUM])
    expectOk(verify)
    expect(verify.stderr).toBe('')
    // Gone for good: rm of it again is a usage error (it is not in the album).
    expect((await photos(first, ['rm', ALBUM, deleted.path])).code).toBe(2)
  })

  it('replace stores the edited photo under the same asset; the next backup of the folder sends nothing', async () => {
    replaced = generated.find((f) => f.type === 'image/jpeg' && f !== deleted && f.path !== removedOnTerminal)!
    const assetId = (await listed(first)).get(replaced.path)!.asset_id
    // The photo edited in place, in the backed-up folder.
    const at = path.join(folder, replaced.path)
    await writePhoto(at, { format: 'jpeg', width: 300, height: 200, seed: 99 })
    edited = await readFile(at)
    const run = await photos(first, ['replace', ALBUM, replaced.path, at, '--json'])
    expectOk(run)
    expect(events(run)).toEqual([expect.objectContaining({ event: 'replaced', name: replaced.path, asset_id: assetId, size: edited.length })])
    const now = (await listed(first)).get(replaced.path)!
    expect(now).toMatchObject({ asset_id: assetId, size: edited.length, width: 300, height: 200, derivatives: ['thumbnail'] })
    const backup = await photos(first, ['backup', folder, '--album', ALBUM, '--json'])
    expectOk(backup)
    const summary = events(backup).find((e) => e.event === 'summary')!
    expect(summary).toMatchObject({ stored: 0, sent_bytes: 0, failed: 0 })
    expect(events(backup).find((e) => e.event === 'file' && e.path === replaced.path)).toMatchObject({ outcome: 'unchanged', asset_id: assetId })
    expect((await listed(first)).size).toBe(generated.length - 2)
  })

  it('the other device, at its next ls and restore, lists and restores the new version byte-identical and not the deleted photo', async () => {
    const seen = await listed(second)
    expect(seen.has(deleted.path)).toBe(false)
    expect(seen.get(replaced.path)).toMatchObject({ size: edited.length })
    const dest = newDest()
    expectOk(await photos(second, ['restore', ALBUM, dest]))
    const restored = await filesUnder(dest)
    expect(restored).toEqual(
      generated
        .map((f) => f.path)
        .filter((p) => p !== deleted.path && p !== removedOnTerminal)
        .sort(),
    )
    expect(sha256(await readFile(path.join(dest, replaced.path)))).toBe(sha256(edited))
    for (const file of generated.filter((f) => f !== deleted && f !== replaced && f.path !== removedOnTerminal)) {
      expect(sha256(await readFile(path.join(dest, file.path))), file.path).toBe(sha256(await readFile(path.join(folder, file.path))))
    }
    expectOk(await photos(second, ['verify', ALBUM]))
  })

  it('the other device replaces and deletes too; the first sees it', async () => {
    const target = generated.find((f) => f !== deleted && f !== replaced && f.type === 'image/jpeg' && f.path !== removedOnTerminal)!
    const other = path.join(work, 'other-edit.jpg')
    await writePhoto(other, { format: 'jpeg', width: 120, height: 90, seed: 7 })
    expectOk(await photos(second, ['replace', ALBUM, target.path, other]))
    const gone = generated.find((f) => f !== deleted && f !== replaced && f !== target && f.path !== removedOnTerminal)!
    const assetId = (await listed(second)).get(gone.path)!.asset_id as string
    expectOk(await photos(second, ['rm', ALBUM, assetId, '--yes'])) // by asset id
    const seen = await listed(first)
    expect(seen.has(gone.path)).toBe(false)
    expect(seen.get(target.path)).toMatchObject({ width: 120, height: 90 })
    const dest = newDest()
    expectOk(await photos(first, ['restore', ALBUM, dest]))
    expect(sha256(await readFile(path.join(dest, target.path)))).toBe(sha256(await readFile(other)))
    expect(await filesUnder(dest)).not.toContain(gone.path)
  })

  it('rm moves a photo to Recently deleted: ls and restore leave it out on both devices, trash ls lists it, trash restore brings it back, trash empty deletes it for good', async () => {
    // The photo the other device's rm moved there goes first.
    const before = await photos(first, ['trash', 'empty', '--yes', '--json'])
    expect(events(before).find((e) => e.event === 'summary')).toEqual({ event: 'summary', deleted: 1, failed: 0, files: 1 })
    const [name, listing] = [...(await listed(first))][0]!
    const binned = { path: name, size: listing.size as number }
    const assetId = listing.asset_id
    const run = await photos(first, ['rm', ALBUM, binned.path])
    expectOk(run)
    expect(run.stdout).toMatch(new RegExp(`moved ${binned.path} to Recently deleted; kept until \\d{4}-\\d{2}-\\d{2}`))
    expect(run.stdout).toContain(`\`coffer-photos trash restore ${ALBUM} <name>...\` brings it back until then`)
    expect((await listed(second)).has(binned.path)).toBe(false)
    const dest = newDest()
    expectOk(await photos(second, ['restore', ALBUM, dest]))
    expect(await filesUnder(dest)).not.toContain(binned.path)

    const ls = await photos(second, ['trash', 'ls', '--json'])
    expectOk(ls)
    expect(events(ls)).toEqual([
      expect.objectContaining({ event: 'trashed', album: ALBUM, name: binned.path, asset_id: assetId, size: binned.size, purge_at: expect.any(String) }),
    ])
    const table = await photos(second, ['trash', 'ls'])
    expect(table.stdout.split('\n')[0]).toMatch(/^ALBUM +NAME +SIZE +DELETED +GOES ON +DAYS LEFT$/)
    expect(table.stdout).toMatch(new RegExp(`${ALBUM} +${binned.path} .* \\d+$`, 'm'))

    expectOk(await photos(second, ['trash', 'restore', ALBUM, binned.path]))
    expect((await listed(first)).get(binned.path)).toMatchObject({ asset_id: assetId })
    expect((await photos(first, ['trash', 'ls'])).stdout).toBe('Recently deleted is empty\n')

    expectOk(await photos(first, ['rm', ALBUM, assetId as string]))
    const refused = await photos(first, ['trash', 'empty'])
    expect(errorLineOf(refused)).toMatch(/--yes is needed/)
    const emptied = await photos(first, ['trash', 'empty', '--yes', '--json'])
    expectOk(emptied)
    expect(events(emptied).find((e) => e.event === 'summary')).toEqual({ event: 'summary', deleted: 1, failed: 0, files: 1 })
    expect((await photos(first, ['trash', 'ls'])).stdout).toBe('Recently deleted is empty\n')
    expect((await listed(second)).has(binned.path)).toBe(false)
  })
})

describe('what the server refuses or asks for', { timeout: CLI_TIMEOUT }, () => {
  it('rm of a photo under a retention date: the clear message with the date, exit 4, the photo stays', async () => {
    const lib = await library()
    const album = (await findAlbum(lib, ALBUM))!
    const until = new Date(server.clock.now() + 90 * 86_400_000).toISOString()
    const bytes = Buffer.from(await readFile(path.join(folder, generated.find((f) => f.type === 'image/jpeg')!.path))).subarray(0, 4000)
    await backupFile(
      { ...lib, albumId: album.albumId },
      { name: 'kept/contract.jpg', size: bytes.length, type: 'image/jpeg', modified: null, open: () => [bytes] },
      { retentionUntil: until },
    )
    const run = await photos(first, ['rm', ALBUM, 'kept/contract.jpg', '--yes', '--json'])
    expect(run.code, run.stderr).toBe(4)
    expect(errorLineOf(run)).toBe(
      `coffer-photos: "kept/contract.jpg" is kept by the server until ${until} (a retention date): it cannot be deleted before then`,
    )
    expect(events(run).find((e) => e.event === 'failed')).toMatchObject({ name: 'kept/contract.jpg', retained_until: until })
    expect((await listed(first)).has('kept/contract.jpg')).toBe(true)
  })

  it("a server that stops taking the album's protocol version (426): backup, replace and rm go on, the album is upgraded, nothing is asked", async () => {
    const lib = await library()
    const album = (await findAlbum(lib, ALBUM))!
    expect(album.protocolVersion).toBe('2026-06-01')
    setProtocolRange({ min: '2026-09-01', current: '2026-09-01', max: '2026-11-01' })
    try {
      await mkdir(path.join(folder, 'new'), { recursive: true })
      for (let i = 0; i < 5; i++) await writePhoto(path.join(folder, 'new', `IMG_${i}.jpg`), { format: 'jpeg', width: 160, height: 120, seed: 500 + i })
      const backup = await photos(first, ['backup', folder, '--album', ALBUM, '--concurrency', '4', '--json'])
      expectOk(backup)
      expect(events(backup).find((e) => e.event === 'summary')).toMatchObject({ stored: 5, failed: 0 })
      expect(backup.stderr).not.toMatch(/fail|error|retry|trying again/i)
      expect((await lib.client.listAlbums()).albums.find((a) => a.album_id === album.albumId)!.protocol_version).toBe('2026-11-01')
      const edited = path.join(work, 'edited-426.jpg')
      await writePhoto(edited, { format: 'jpeg', width: 64, height: 64, seed: 4242 })
      expectOk(await photos(first, ['replace', ALBUM, 'new/IMG_0.jpg', edited]))
      expectOk(await photos(first, ['rm', ALBUM, 'new/IMG_1.jpg', '--yes']))
      const seen = await listed(second)
      expect(seen.has('new/IMG_1.jpg')).toBe(false)
      expect(seen.get('new/IMG_0.jpg')).toMatchObject({ width: 64, height: 64 })
      expect((await lib.client.readUpgrade(album.albumId)).intent_id).toBeUndefined()
    } finally {
      setProtocolRange({ min: '2025-01-01', current: '2026-06-01', max: '2026-11-01' })
    }
  })
})

describe('a backup after a version written elsewhere (decision 0047)', { timeout: CLI_TIMEOUT }, () => {
  const FAMILY = 'Family'
  let family: string
  const restoredBytes = async (name: string): Promise<string> => {
    const dest = newDest()
    expectOk(await photos(first, ['restore', FAMILY, dest]))
    return sha256(await readFile(path.join(dest, name)))
  }
  const backupFamily = () => photos(first, ['backup', family, '--album', FAMILY, '--json'])
  const fileEvent = (run: { stdout: string }, name: string) => events(run).find((e) => e.event === 'file' && e.path === name)

  beforeAll(async () => {
    family = path.join(work, 'lib')
    for (let i = 0; i < 3; i++) await writePhoto(path.join(family, 'Family 2023', `IMG_001${i}.jpg`), { format: 'jpeg', width: 96, height: 64, seed: 700 + i })
    expectOk(await photos(first, ['backup', family, '--album', FAMILY]))
  })

  it('replace, then a routine backup: the album keeps the replaced version, and the backup says why', async () => {
    const edit = path.join(work, 'edits', 'x.jpg')
    await writePhoto(edit, { format: 'jpeg', width: 80, height: 80, seed: 7010 })
    expectOk(await photos(first, ['replace', FAMILY, 'Family 2023/IMG_0010.jpg', edit]))
    // The other device replaces another photo.
    const theirs = path.join(work, 'edits', 'theirs.jpg')
    await writePhoto(theirs, { format: 'jpeg', width: 72, height: 72, seed: 7011 })
    expectOk(await photos(second, ['replace', FAMILY, 'Family 2023/IMG_0011.jpg', theirs]))
    for (let run = 0; run < 2; run++) {
      const backup = await backupFamily()
      expectOk(backup)
      expect(events(backup).find((e) => e.event === 'summary')).toMatchObject({ stored: 0, replaced: 0, kept: 2, conflict: 0, sent_bytes: 0 })
      for (const name of ['Family 2023/IMG_0010.jpg', 'Family 2023/IMG_0011.jpg'])
        expect(fileEvent(backup, name)).toMatchObject({ outcome: 'kept', reason: expect.stringMatching(/newer version/) })
    }
    const said = await photos(first, ['backup', family, '--album', FAMILY])
    expectOk(said)
    expect(said.stdout).toMatch(/2 kept as the album has them \(a newer version written elsewhere\)/)
    expect(await restoredBytes('Family 2023/IMG_0010.jpg')).toBe(sha256(await readFile(edit)))
    expect(await restoredBytes('Family 2023/IMG_0011.jpg')).toBe(sha256(await readFile(theirs)))
  })

  it('changed here and in the album: a conflict by name, nothing sent, exit 1; the album keeps its version', async () => {
    const name = 'Family 2023/IMG_0010.jpg'
    const inAlbum = await restoredBytes(name)
    await writePhoto(path.join(family, name), { format: 'jpeg', width: 90, height: 60, seed: 7020 })
    const backup = await backupFamily()
    expect(backup.code).toBe(1)
    const summary = events(backup).find((e) => e.event === 'summary')!
    expect(summary).toMatchObject({ stored: 0, replaced: 0, conflict: 1, failed: 0, sent_bytes: 0 })
    expect(summary.conflicts).toEqual([{ path: name, reason: expect.stringMatching(/changed here and in the album/) }])
    expect(fileEvent(backup, name)).toMatchObject({ outcome: 'conflict' })
    expect(backup.stderr).toContain(`conflict: ${name}: changed here and in the album`)
    expect(await restoredBytes(name)).toBe(inAlbum)
  })
})
