// A server that rewrites an album's history, caught by coffer-photos (issue 38; decision 0065;
// docs/client-format.md, "The album chain"). The real CLI, in-process, against a real server
// through a lying proxy per device (test/support/lying-proxy.ts) that rewrites the feed as the
// test says: an entry left out, entries moved, an older version served again, the album rolled
// back, two devices shown two histories, an entry changed. Each is caught by a device that saw
// the album (what it remembers of its last check, and its own writes) and, where a later write
// covers it, by a device that never saw the album (the digest each write commits to); `verify`,
// `backup`, `restore` and `free-up` exit 7 naming the album and the kind, and free-up frees
// nothing. Two devices writing at once raise no alarm. A device joined through pairing starts from
// the adding device's record (decision 0066) and catches that device's last writes cut off.
import { randomUUID } from 'node:crypto'
import { cp, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { committedHead } from '../../src/client/format/album-chain.ts'
import { TAMPERING, type TamperingKind } from '../../src/client/tampering.ts'
import { EXIT } from '../../src/cli/photos/command.ts'
import { decodeCanonical } from '../../src/codec/cbor.ts'
import { fromBase64 } from '../../src/sdk/bytes.ts'
import type { CofferClient } from '../../src/sdk/client.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { startLyingProxy, type FeedEntry, type LyingProxy } from '../support/lying-proxy.ts'
import { writePhoto } from '../support/photos.ts'
import { events, expectOk, pairedDevice, photos, type PhotosRun } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

/** Each test runs the CLI a handful of times. */
const CLI_TIMEOUT = 180_000

let server: TestServer
let work: string
let sdk: CofferClient
const email = uniqueEmail('history')

/** A device: its config folder, logged in through a proxy of its own. */
interface Device {
  readonly home: string
  readonly proxy: LyingProxy
}
const devices: Device[] = []

async function newDevice(register: boolean): Promise<Device> {
  const proxy = await startLyingProxy(server.url)
  const home = path.join(work, `device-${devices.length + 1}`)
  const device = { home, proxy }
  devices.push(device)
  const login = ['login', proxy.url, ...(register ? ['--register'] : []), '--email', email, '--password-stdin']
  expectOk(await photos(home, login, { stdin: PASSWORD }))
  if (register) expectOk(await photos(home, ['setup', '--yes', '--device-name', 'First']))
  else await cp(path.join(devices[0]!.home, 'keys.json'), path.join(home, 'keys.json')) // the account's keys, as joining leaves them
  return device
}

/** A device joined through pairing with `from` (`device add` there, `join` here), through a proxy of its own: it and both runs. */
async function joinedDevice(from: Device): Promise<{ device: Device; added: PhotosRun; joined: PhotosRun }> {
  const proxy = await startLyingProxy(server.url)
  const device = { home: path.join(work, `device-${devices.length + 1}`), proxy }
  devices.push(device)
  return { device, ...(await pairedDevice(from.home, device.home, proxy.url, email, PASSWORD)) }
}

let folders = 0
/** A folder of `count` small JPEGs of its own. */
async function photoFolder(count: number): Promise<string> {
  const folder = path.join(work, `photos-${++folders}`)
  await mkdir(folder, { recursive: true })
  for (let n = 0; n < count; n++)
    await writePhoto(path.join(folder, `IMG_${folders}_${n}.jpg`), {
      format: 'jpeg',
      width: 64,
      height: 48,
      seed: folders * 100 + n,
      captured: new Date(Date.UTC(2024, 0, n + 1)),
    })
  return folder
}

/** Backs `folder` up into `album` on `device`; answers the album's id. */
async function backup(device: Device, folder: string, album: string): Promise<string> {
  const run = await photos(device.home, ['backup', folder, '--album', album, '--json'])
  expectOk(run)
  return events(run).find((e) => e.event === 'start')!.album_id as string
}

/** The album's feed as the server stores it (read with the SDK, not through a proxy). */
async function feedOf(albumId: string): Promise<FeedEntry[]> {
  return (await sdk.feed(albumId, 0, 1000)).entries
}

/** What a feed entry's signed manifest commits to (format/album-chain.ts), or null. */
function commitmentOf(entry: FeedEntry): ReturnType<typeof committedHead> {
  const outer = decodeCanonical(fromBase64(entry.manifest_cbor)) as { body: Uint8Array }
  return committedHead((decodeCanonical(outer.body) as { content?: unknown }).content)
}

/** A run that stopped because the server is not trustworthy: exit 7, the album and the kind named. */
function expectUntrusted(run: PhotosRun, album: string, kind: TamperingKind): void {
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(EXIT.untrusted)
  expect(`${run.stdout}\n${run.stderr}`).toContain(TAMPERING[kind])
  expect(`${run.stdout}\n${run.stderr}`).toContain(album)
}

/** `verify <album> --json` on the device: its history event. */
async function verifyHistory(device: Device, album: string): Promise<{ run: PhotosRun; history: Record<string, unknown> }> {
  const run = await photos(device.home, ['verify', album, '--json'])
  return { run, history: events(run).find((e) => e.event === 'history')! }
}

const without =
  (...seqs: number[]) =>
  (_album: string, entries: FeedEntry[]): FeedEntry[] =>
    entries.filter((entry) => !seqs.includes(entry.sync_seq))

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-history-'))
  await newDevice(true)
  await newDevice(false)
  sdk = server.client()
  await sdk.login(email, PASSWORD)
}, 120_000)
afterAll(async () => {
  for (const device of devices) await device.proxy.close()
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

describe('an album whose history the server rewrites', { timeout: CLI_TIMEOUT }, () => {
  it('two devices backing up into one album at once raise no alarm, and each write commits to the history its device checked', async () => {
    const [first, second] = devices as [Device, Device]
    const album = `Together ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(2), album)
    const [a, b] = [await photoFolder(3), await photoFolder(3)]
    const runs = await Promise.all([photos(first.home, ['backup', a, '--album', album]), photos(second.home, ['backup', b, '--album', album])])
    for (const run of runs) expectOk(run)
    for (const device of devices) {
      const { run, history } = await verifyHistory(device, album)
      expectOk(run)
      expect(history).toMatchObject({ ok: true, entries: 9 })
    }
    const feed = await feedOf(albumId)
    expect(feed).toHaveLength(9)
    // The record and the first two photos: written before any check (the album was new), or committing to the record.
    const committed = feed.map(commitmentOf)
    expect(committed.slice(3).every((head) => head !== null && head.count >= 3)).toBe(true)
    // Written at once: the two devices' photos commit to prefixes that do not hold each other's.
    expect(Math.max(...committed.slice(3).map((head) => head!.count))).toBeLessThan(9)
  })

  it('an entry left out: the device that saw it, and a device that never saw the album, say so; nothing is freed or restored', async () => {
    const [first] = devices as [Device]
    const album = `Left out ${randomUUID().slice(0, 8)}`
    const folder = await photoFolder(3)
    const albumId = await backup(first, folder, album)
    await backup(first, await photoFolder(1), album) // a write that commits to the first backup's entries
    const hidden = (await feedOf(albumId))[2]!.sync_seq
    const fresh = await newDevice(false)
    fresh.proxy.rewrite = without(hidden)
    const seen = await verifyHistory(fresh, album)
    expectUntrusted(seen.run, album, 'omitted')
    expect(seen.history).toMatchObject({ ok: false, kind: 'omitted' })

    first.proxy.rewrite = without(hidden)
    try {
      expectUntrusted((await verifyHistory(first, album)).run, album, 'omitted')
      const freeUp = await photos(first.home, ['free-up', folder, '--album', album, '--yes'])
      expectUntrusted(freeUp, album, 'omitted')
      expect(await readdir(folder)).toHaveLength(3)
      const dest = path.join(work, `restored-${randomUUID()}`)
      expectUntrusted(await photos(first.home, ['restore', album, dest]), album, 'omitted')
      expect(await readdir(dest).catch(() => [])).toEqual([])
    } finally {
      first.proxy.rewrite = null
    }
    // Served as written again, the album is trusted again.
    expectOk((await verifyHistory(first, album)).run)
  })

  it('entries moved: served out of order, or two positions swapped, are "reordered"', async () => {
    const [first] = devices as [Device]
    const album = `Moved ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(3), album)
    expectOk((await verifyHistory(first, album)).run)
    first.proxy.rewrite = (_album, entries) => [...entries].reverse()
    try {
      expectUntrusted((await verifyHistory(first, album)).run, album, 'reordered')
      const [, x, y] = await feedOf(albumId)
      // Each entry keeps its place in the list but takes the other's sync_seq.
      first.proxy.rewrite = (_album, entries) =>
        entries.map((entry) =>
          entry.sync_seq === x!.sync_seq ? { ...y!, sync_seq: x!.sync_seq } : entry.sync_seq === y!.sync_seq ? { ...x!, sync_seq: y!.sync_seq } : entry,
        )
      const { run, history } = await verifyHistory(first, album)
      expectUntrusted(run, album, 'reordered')
      expect(history).toMatchObject({ kind: 'reordered' })
    } finally {
      first.proxy.rewrite = null
    }
  })

  it('a replaced photo\'s older version: the replace hidden is "omitted", the old version served again "replayed"', async () => {
    const [first] = devices as [Device]
    const album = `Replaced ${randomUUID().slice(0, 8)}`
    const folder = await photoFolder(2)
    const albumId = await backup(first, folder, album)
    const [name] = (await readdir(folder)).sort()
    const newer = path.join(work, `newer-${randomUUID()}.jpg`)
    await writePhoto(newer, { format: 'jpeg', width: 80, height: 60, seed: 4242 })
    expectOk(await photos(first.home, ['replace', album, name!, newer]))
    await backup(first, await photoFolder(1), album) // a later write: the replace is inside the history, not its end
    const feed = await feedOf(albumId)
    const replace = feed.at(-2)!
    expect(replace.action).toBe('replace')
    const older = feed.find((entry) => entry.asset_id === replace.asset_id && entry.action === 'create')!
    first.proxy.rewrite = without(replace.sync_seq)
    try {
      expectUntrusted((await verifyHistory(first, album)).run, album, 'omitted')
      first.proxy.rewrite = (_album, entries) => [...entries, { ...older, sync_seq: feed.at(-1)!.sync_seq + 1 }]
      expectUntrusted((await verifyHistory(first, album)).run, album, 'replayed')
    } finally {
      first.proxy.rewrite = null
    }
  })

  it('a deleted photo served as live: the delete hidden is "omitted", on the deleting device and on another that saw it', async () => {
    const [first, second] = devices as [Device, Device]
    const album = `Deleted ${randomUUID().slice(0, 8)}`
    const folder = await photoFolder(3)
    const albumId = await backup(first, folder, album)
    const [name] = (await readdir(folder)).sort()
    expectOk(await photos(first.home, ['rm', album, name!, '--for-good', '--yes']))
    const deletion = (await feedOf(albumId)).at(-1)!
    expect(deletion.action).toBe('delete')
    await backup(first, await photoFolder(1), album) // a later write: the delete is inside the history, not its end
    expectOk((await verifyHistory(second, album)).run) // the second device saw the delete
    for (const device of [first, second]) device.proxy.rewrite = without(deletion.sync_seq)
    try {
      for (const device of [first, second]) {
        const restored = await photos(device.home, ['restore', album, path.join(work, `restored-${randomUUID()}`)])
        expectUntrusted(restored, album, 'omitted')
      }
    } finally {
      for (const device of [first, second]) device.proxy.rewrite = null
    }
  })

  it('the album rolled back to an earlier state is "rolled_back"; backup sends nothing', async () => {
    const [first] = devices as [Device]
    const album = `Rolled back ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(2), album)
    await backup(first, await photoFolder(2), album)
    expectOk((await verifyHistory(first, album)).run)
    const feed = await feedOf(albumId)
    first.proxy.rewrite = without(...feed.slice(3).map((entry) => entry.sync_seq))
    try {
      expectUntrusted((await verifyHistory(first, album)).run, album, 'rolled_back')
      const more = await photoFolder(1)
      expectUntrusted(await photos(first.home, ['backup', more, '--album', album]), album, 'rolled_back')
    } finally {
      first.proxy.rewrite = null
    }
    expect(await feedOf(albumId)).toHaveLength(feed.length)
  })

  it("a device joined through pairing takes the adding device's record: the adding device's last writes cut off are caught at its first check", async () => {
    const [first] = devices as [Device]
    const album = `Handed over ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(2), album)
    await backup(first, await photoFolder(2), album) // its writes: committed to by no later entry, known to the first device only
    const feed = await feedOf(albumId)
    const { device: joined, added, joined: joinRun } = await joinedDevice(first)
    expect(events(added).find((e) => e.event === 'device_added')).toMatchObject({ history: 'kept' })
    const heldBefore = events(joinRun).find((e) => e.event === 'joined')!
    expect(heldBefore).toMatchObject({ history: 'kept' })
    expect(heldBefore.history_albums).toBeGreaterThanOrEqual(1)
    // A consistent prefix, the second backup cut off: a device without the record cannot tell it from a slow network.
    const cut = without(...feed.slice(-2).map((entry) => entry.sync_seq))
    const unaware = await newDevice(false)
    unaware.proxy.rewrite = cut
    joined.proxy.rewrite = cut
    try {
      expectOk((await verifyHistory(unaware, album)).run)
      const { run, history } = await verifyHistory(joined, album)
      expectUntrusted(run, album, 'rolled_back')
      expect(history).toMatchObject({ kind: 'rolled_back' })
      expectUntrusted(await photos(joined.home, ['restore', album, path.join(work, 'restore-joined')]), album, 'rolled_back')
    } finally {
      unaware.proxy.rewrite = null
      joined.proxy.rewrite = null
    }
    // Served whole, the album checks on the joined device, which then remembers it as its own.
    expectOk((await verifyHistory(joined, album)).run)
  })

  it('a fork: a device shown a history without another device\'s write is caught when its own next write is read ("forked")', async () => {
    const [first, second] = devices as [Device, Device]
    const album = `Forked ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(2), album)
    expectOk((await verifyHistory(second, album)).run)
    await backup(first, await photoFolder(1), album) // the write the server hides from the second device
    const hidden = (await feedOf(albumId)).at(-1)!.sync_seq
    second.proxy.rewrite = without(hidden)
    try {
      await backup(second, await photoFolder(1), album) // concurrent with the hidden one: consistent, no alarm
      await backup(second, await photoFolder(1), album) // commits to the second device's view, without the hidden write
      expectOk((await verifyHistory(second, album)).run) // its own view is consistent: a fork shows from the other side
    } finally {
      second.proxy.rewrite = null
    }
    const { run, history } = await verifyHistory(first, album)
    expectUntrusted(run, album, 'forked')
    expect(history).toMatchObject({ kind: 'forked' })
  })

  it('an entry changed: another action, another asset, or a manifest not signed by the account (under the hash the device checked) is "forged"', async () => {
    const [first] = devices as [Device]
    const album = `Forged ${randomUUID().slice(0, 8)}`
    const albumId = await backup(first, await photoFolder(2), album)
    // Checked once: the device then skips the signatures of entries at their places with their
    // hashes, and the bytes served must still hash to the name the feed gives them.
    expectOk((await verifyHistory(first, album)).run)
    const target = (await feedOf(albumId))[1]!
    const changes: ((entry: FeedEntry) => FeedEntry)[] = [
      (entry) => ({ ...entry, action: 'delete' }),
      (entry) => ({ ...entry, asset_id: randomUUID() }),
      (entry) => {
        const bytes = fromBase64(entry.manifest_cbor)
        bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1 // the last byte of the signature
        return { ...entry, manifest_cbor: Buffer.from(bytes).toString('base64') }
      },
    ]
    try {
      for (const change of changes) {
        first.proxy.rewrite = (_album, entries) => entries.map((entry) => (entry.sync_seq === target.sync_seq ? change(entry) : entry))
        expectUntrusted((await verifyHistory(first, album)).run, album, 'forged')
      }
    } finally {
      first.proxy.rewrite = null
    }
  })
})
