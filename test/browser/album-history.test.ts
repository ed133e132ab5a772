// The web app catching a server that rewrites an album's history (issue 38; decision 0065), in
// Chromium through a lying proxy (test/support/lying-proxy.ts) in front of a real server: the
// album opens without a word while the server tells the truth, and its check is remembered in
// the browser (sealed, 'coffer-history'); with an entry left out, the same browser warns that
// the server changed the album's history ("omitted"), at desktop and phone sizes; a new browser
// that never saw the album catches an entry left out that a later write had read, and an entry
// whose action was changed ("forged"); the same browser names each other rewriting (entries
// reversed, an older one served again, a delete left out, the album cut back, and a fork: another
// device shown the album without the browser's upload); a photo uploaded from the web app commits
// to the history it checked. A browser joined with a pairing code from a Node device takes that
// device's record (decision 0066) and catches its last write cut off, which a browser without the
// record cannot; and hands its own record on to a device it adds.
import { randomUUID } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Library } from '../../src/client/albums.ts'
import { committedHead, type AlbumHandOver } from '../../src/client/format/album-chain.ts'
import { AlbumHistoryKeeper } from '../../src/client/history.ts'
import { albumMemoryFile } from '../../src/client/node/album-memory.ts'
import { deleteFile } from '../../src/client/edits.ts'
import type { BackupTarget } from '../../src/client/files.ts'
import { addDeviceByPairing, joinByPairing, openPairing } from '../../src/client/pairing.ts'
import { backupFile } from '../../src/client/upload.ts'
import { decodeCanonical } from '../../src/codec/cbor.ts'
import { fromBase64 } from '../../src/sdk/bytes.ts'
import { CofferClient } from '../../src/sdk/client.ts'
import { checkScreen, launchChromium, openDevice } from '../support/browser.ts'
import { picker, seedAlbum } from '../support/gallery.ts'
import { startLyingProxy, type FeedEntry, type LyingProxy } from '../support/lying-proxy.ts'
import { writePhoto } from '../support/photos.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { openAs, webAccount, type WebAccount } from '../support/web-account.ts'

let server: TestServer
let browser: Browser
let proxy: LyingProxy
let account: WebAccount
let work: string
/** The account's library in Node with a history of its own (a second device): its later writes commit to what it checked. */
let node: Library & { history: AlbumHistoryKeeper }

beforeAll(async () => {
  ;[server, browser] = await Promise.all([startServer(), launchChromium()])
  proxy = await startLyingProxy(server.url)
  account = await webAccount(server, 'history')
  work = await mkdtemp(path.join(tmpdir(), 'coffer-web-history-'))
  node = { ...account.library, history: new AlbumHistoryKeeper(account.library, albumMemoryFile(nodeState())) }
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await proxy?.close()
  await server?.close()
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

/** Where the Node device remembers the albums' histories. */
const nodeState = (): string => path.join(work, 'node-state.sqlite')

const feedOf = async (albumId: string): Promise<FeedEntry[]> => (await account.client.feed(albumId, 0, 1000)).entries

/** The albums this page remembers having checked (the keys of 'coffer-history'). */
function rememberedAlbums(page: Page): Promise<string[]> {
  // A string: the page's IndexedDB, which Node's typings do not know. Opened only once the app
  // made it: an open would make it first, without the app's store.
  return page.evaluate(`indexedDB.databases().then((listed) => listed.some((db) => db.name === 'coffer-history') ? new Promise((resolve, reject) => {
    const open = indexedDB.open('coffer-history')
    open.onerror = () => reject(open.error)
    open.onsuccess = () => {
      const database = open.result
      if (!database.objectStoreNames.contains('albums')) return resolve([])
      const keys = database.transaction('albums').objectStore('albums').getAllKeys()
      keys.onsuccess = () => resolve(keys.result.map(String))
      keys.onerror = () => reject(keys.error)
    }
  }) : [])`)
}

const warning = (page: Page) => page.getByRole('alert').filter({ hasText: "The server changed this album's history" })

describe("an album's history in the web app", () => {
  it('opens without a word while the server tells the truth, remembers it, and warns when an entry goes missing, at both sizes', async () => {
    const { album } = await seedAlbum(node, 'Seaside', 6, 2)
    const desktop = await openDevice(browser, proxy.url)
    await openAs(desktop.page, server, account, `/#/albums/${album.albumId}`)
    await desktop.page.getByRole('heading', { name: 'Seaside' }).waitFor()
    await expect.poll(() => historyState(desktop.page), { timeout: 20_000 }).toBe('trusted')
    expect(await rememberedAlbums(desktop.page)).toContain(album.albumId)
    expect(await warning(desktop.page).count()).toBe(0)

    const hidden = (await feedOf(album.albumId))[3]!.sync_seq
    proxy.rewrite = (_album, entries) => entries.filter((entry) => entry.sync_seq !== hidden)
    try {
      await desktop.page.reload()
      await warning(desktop.page).waitFor({ timeout: 20_000 })
      expect(await warning(desktop.page).getAttribute('data-kind')).toBe('omitted')
      expect(await warning(desktop.page).textContent()).toContain('The server left out an entry a device of this account wrote. This is not a network problem')
      await checkScreen(desktop, 'album-history-tampered')
    } finally {
      proxy.rewrite = null
    }
    await desktop.context.close()
  })

  it('a browser that never saw the album: an entry left out that a later write had read, and an entry changed', async () => {
    const { album } = await seedAlbum(node, 'Mountains', 3, 1)
    await node.history.check(album.albumId)
    // Commits to the four entries before: the record and three photos.
    await storeFile({ ...node, albumId: album.albumId, protocolVersion: album.protocolVersion }, 'later.jpg', 5)
    const feed = await feedOf(album.albumId)
    expect(committedHead(contentOf(feed.at(-1)!))?.count).toBe(4)
    const cases: [string, (entries: FeedEntry[]) => FeedEntry[]][] = [
      ['omitted', (entries) => entries.filter((entry) => entry.sync_seq !== feed[2]!.sync_seq)],
      ['forged', (entries) => entries.map((entry) => (entry.sync_seq === feed[1]!.sync_seq ? { ...entry, action: 'delete' } : entry))],
    ]
    for (const [kind, rewrite] of cases) {
      const fresh = await openDevice(browser, proxy.url, { phone: true })
      proxy.rewrite = (_album, entries) => rewrite(entries)
      try {
        await openAs(fresh.page, server, account, `/#/albums/${album.albumId}`)
        await warning(fresh.page).waitFor({ timeout: 20_000 })
        expect(await warning(fresh.page).getAttribute('data-kind')).toBe(kind)
      } finally {
        proxy.rewrite = null
      }
      await fresh.context.close()
    }
  })

  it('each other rewriting of an album the browser saw is named: reordered, replayed, a delete left out, rolled back, forked', async () => {
    const { album, assetIds } = await seedAlbum(node, 'Lakes', 4, 1)
    const target = { ...node, albumId: album.albumId, protocolVersion: album.protocolVersion }
    await deleteFile(node, album.albumId, assetIds[0]!)
    await node.history.check(album.albumId)
    await storeFile(target, 'after-delete.jpg', 11) // the delete is inside the history, not its end
    const feed = await feedOf(album.albumId)
    const deletion = feed.find((entry) => entry.action === 'delete')!
    const device = await openDevice(browser, proxy.url)
    await openAs(device.page, server, account, `/#/albums/${album.albumId}`)
    await expect.poll(() => rememberedAlbums(device.page), { timeout: 20_000 }).toContain(album.albumId)
    const cases: [string, (entries: FeedEntry[], after: number) => FeedEntry[]][] = [
      ['reordered', (entries) => [...entries].reverse()],
      ['replayed', (entries, after) => (after === 0 ? [...entries, { ...feed[1]!, sync_seq: feed.at(-1)!.sync_seq + 1 }] : entries)],
      ['omitted', (entries) => entries.filter((entry) => entry.sync_seq !== deletion.sync_seq)],
      ['rolled_back', (entries) => entries.filter((entry) => entry.sync_seq < feed.at(-2)!.sync_seq)],
    ]
    for (const [kind, rewrite] of cases) {
      proxy.rewrite = (_album, entries, after) => rewrite(entries, after)
      try {
        await device.page.reload()
        await warning(device.page).waitFor({ timeout: 20_000 })
        expect(await warning(device.page).getAttribute('data-kind'), kind).toBe(kind)
      } finally {
        proxy.rewrite = null
      }
    }
    await device.page.reload()
    await expect.poll(() => historyState(device.page), { timeout: 20_000 }).toBe('trusted')

    // A fork: the other device is shown the album without the browser's upload, and writes twice after it.
    const otherProxy = await startLyingProxy(server.url)
    try {
      await picker(device.page).setInputFiles(await writtenPhoto('from-browser.jpg', 12))
      await expect.poll(async () => (await feedOf(album.albumId)).length, { timeout: 30_000 }).toBe(feed.length + 1)
      const uploaded = (await feedOf(album.albumId)).at(-1)!.sync_seq
      otherProxy.rewrite = (_album, entries) => entries.filter((entry) => entry.sync_seq !== uploaded)
      const other = new CofferClient({ baseUrl: otherProxy.url })
      await other.login(account.email, account.password)
      const forked = { ...node, client: other, history: new AlbumHistoryKeeper({ ...node, client: other }, albumMemoryFile(path.join(work, 'other.sqlite'))) }
      for (const n of [13, 14]) {
        await forked.history.check(album.albumId)
        await storeFile({ ...forked, albumId: album.albumId, protocolVersion: album.protocolVersion }, `forked-${n}.jpg`, n)
      }
      await device.page.reload()
      await warning(device.page).waitFor({ timeout: 20_000 })
      expect(await warning(device.page).getAttribute('data-kind')).toBe('forked')
    } finally {
      await otherProxy.close()
    }
    await device.context.close()
  })

  it("a browser joined with a pairing code takes the adding device's record: that device's last write cut off is caught at the album's first opening", async () => {
    const { album } = await seedAlbum(node, 'Harbour', 3, 1)
    await node.history.check(album.albumId)
    await storeFile({ ...node, albumId: album.albumId, protocolVersion: album.protocolVersion }, 'harbour-last.jpg', 21) // no later entry commits to it
    const last = (await feedOf(album.albumId)).at(-1)!.sync_seq

    const joining = await openDevice(browser, proxy.url)
    await joining.page.goto('/')
    await joining.page.getByLabel('Email').fill(account.email)
    await joining.page.getByLabel('Password').fill(account.password)
    await joining.page.getByRole('button', { name: 'Sign in' }).click()
    await joining.page.getByRole('link', { name: 'Add this browser with a code from another device' }).click()
    const pairing = await openPairing(node.client, async () => account.password)
    await joining.page.getByLabel('Pairing code').fill(pairing.pairingCode)
    await joining.page.getByRole('button', { name: 'Connect' }).click()
    const added = addDeviceByPairing({
      client: node.client,
      userId: account.userId,
      keys: account.keys,
      pairing,
      confirmSas: async () => true, // the test sees both ends
      history: () => albumMemoryFile(nodeState()).handOver(),
    })
    await joining.page.getByRole('button', { name: 'Yes, the same' }).click()
    expect((await added).history).toBe('kept')
    await joining.page.getByRole('heading', { name: 'Photos', exact: true }).waitFor({ timeout: 20_000 })

    // A consistent prefix: a browser with the keys and no record shows it without a word; the joined one, which has the record, warns.
    proxy.rewrite = (_album, entries) => entries.filter((entry) => entry.sync_seq !== last)
    const unaware = await openDevice(browser, proxy.url)
    try {
      await openAs(unaware.page, server, account, `/#/albums/${album.albumId}`)
      await expect.poll(() => historyState(unaware.page), { timeout: 20_000 }).toBe('trusted')
      await joining.page.goto(`/#/albums/${album.albumId}`)
      await warning(joining.page).waitFor({ timeout: 20_000 })
      expect(await warning(joining.page).getAttribute('data-kind')).toBe('rolled_back')
    } finally {
      proxy.rewrite = null
    }
    await joining.page.reload()
    await expect.poll(() => historyState(joining.page), { timeout: 20_000 }).toBe('trusted')

    // And the browser hands its record on: a device it adds takes the album's head as the browser checked it.
    await joining.page.goto('/#/devices/add')
    await joining.page.getByRole('button', { name: 'Show a pairing code' }).click()
    const code = joining.page.getByTestId('pairing-code')
    await code.waitFor()
    const newcomer = new CofferClient({ baseUrl: server.url })
    await newcomer.login(account.email, account.password)
    const adopted: AlbumHandOver[] = []
    const joined = joinByPairing({
      client: newcomer,
      userId: account.userId,
      deviceId: randomUUID(),
      deviceName: 'Tablet',
      pairingCode: (await code.textContent())!.trim(),
      confirmSas: async () => true,
      keep: () => {},
      keepHistory: async (albums) => void adopted.push(albums),
    })
    await joining.page.getByRole('button', { name: 'Yes, the same' }).click()
    expect((await joined).history).toMatchObject({ status: 'kept' })
    expect(adopted[0]?.get(album.albumId)?.head).toMatchObject({ seq: last, count: 5 }) // the record, three photos and the last one
    await joining.page.getByRole('status').filter({ hasText: 'It also has what this browser saw of each album' }).waitFor()
    await Promise.all([joining.context.close(), unaware.context.close()])
  })

  it('a photo uploaded from the web app commits to the history the browser checked', async () => {
    const { album } = await seedAlbum(node, 'Garden', 2, 1)
    const device = await openDevice(browser, proxy.url)
    await openAs(device.page, server, account, `/#/albums/${album.albumId}`)
    await expect.poll(() => rememberedAlbums(device.page), { timeout: 20_000 }).toContain(album.albumId)
    await picker(device.page).setInputFiles(await writtenPhoto('garden.jpg', 77))
    await expect.poll(async () => (await feedOf(album.albumId)).length, { timeout: 30_000 }).toBe(4)
    const uploaded = (await feedOf(album.albumId)).at(-1)!
    expect(committedHead(contentOf(uploaded))).toMatchObject({ seq: (await feedOf(album.albumId))[2]!.sync_seq, count: 3 })
    await device.context.close()
  })
})

/** A small JPEG of its own stored into the album from Node (no derivatives). */
async function storeFile(target: BackupTarget, name: string, seed: number): Promise<void> {
  const bytes = new Uint8Array(await readFile(await writtenPhoto(name, seed)))
  await backupFile(target, { name, size: bytes.length, type: 'image/jpeg', modified: null, open: () => [bytes] })
}

/** Where the album page's history check stands (lib/album.ts HistoryState, on the page's main element). */
const historyState = (page: Page): Promise<string | null> => page.locator('main.album').getAttribute('data-history')

/** A small JPEG of its own in the test's folder. */
async function writtenPhoto(name: string, seed: number): Promise<string> {
  const file = path.join(work, name)
  await writePhoto(file, { format: 'jpeg', width: 64, height: 48, seed })
  return file
}

/** The `content` of a feed entry's signed manifest. */
function contentOf(entry: FeedEntry): unknown {
  const outer = decodeCanonical(fromBase64(entry.manifest_cbor)) as { body: Uint8Array }
  return (decodeCanonical(outer.body) as { content?: unknown }).content
}
