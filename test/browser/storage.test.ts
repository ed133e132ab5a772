// What the web app keeps in the browser is ciphertext (docs/decisions/0031-browser-storage-encrypted.md).
// One Chromium profile on disk: a browser whose session and device keys an earlier version kept
// in plain (the session is dropped) signs in through the page (the keys are sealed then),
// uploads photos (one left in the queue, its upload held), and shows their thumbnails (which the
// photo index then keeps, decision 0053). Then every IndexedDB database and store,
// localStorage, sessionStorage and Cache Storage, read from the page, and every file of the
// profile, read from disk, are searched for what must never be there in plain: the device's
// keys, the photos' bytes, a decrypted thumbnail's bytes, the files' names, the email, the
// tokens. After sign-out only the sealed device keys are left; they open with the password and
// with nothing else, and the next sign-in shows the photos without pairing again. A second
// test: a password change here seals the keys again; one elsewhere asks for the earlier password.
import { randomUUID } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { liveEntries } from '../../src/client/albums.ts'
import { derivativeBlob, openAsset, openDerivative } from '../../src/client/files.ts'
import { nativeArgon2id } from '../../src/client/node/crypto.ts'
import type { EscrowKdfParams } from '../../src/client/format/recovery.ts'
import { toHex } from '../../src/sdk/bytes.ts'
import { openValue, passwordKey, type Sealed } from '../../web/src/lib/sealed.ts'
import { PASSWORD } from '../support/actors.ts'
import { CHROMIUM, checkScreen, FLAGS, type WatchedPage, signOut } from '../support/browser.ts'
import { decryptedThumbnails, liveAssetIds, picker } from '../support/gallery.ts'
import { writePhoto } from '../support/photos.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { openAs, putPlainState, storedNames, webAccount, type WebAccount } from '../support/web-account.ts'

vi.setConfig({ expect: { poll: { timeout: 15_000 } } })

let server: TestServer
let profile: string
let context: BrowserContext
beforeAll(async () => {
  server = await startServer()
  profile = await mkdtemp(path.join(tmpdir(), 'coffer-storage-profile-'))
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    baseURL: server.url,
    viewport: { width: 1280, height: 860 },
    reducedMotion: 'reduce',
  })
  context.setDefaultTimeout(10_000)
}, 60_000)
afterAll(async () => {
  await context?.close()
  await server?.close()
  if (profile !== undefined) await rm(profile, { recursive: true, force: true })
})

/** One place the page keeps something: its bytes (every string and byte field it holds, base64), and its CryptoKeys' extractability. */
interface Kept {
  readonly where: string
  readonly base64: string
  readonly extractableKeys: number
}

/**
 * Everything the page's origin keeps: every record of every IndexedDB database and store (its
 * key and value, Blobs read), localStorage, sessionStorage, Cache Storage's responses.
 */
function pageStorage(page: Page): Promise<Kept[]> {
  return page.evaluate(async () => {
    // This program is typed for Node: the page's APIs as far as used here.
    type Request<T> = { result: T; error: unknown; onsuccess: (() => void) | null; onerror: (() => void) | null }
    type Store = { getAllKeys(): Request<unknown[]>; getAll(): Request<unknown[]> }
    type Database = { objectStoreNames: ArrayLike<string>; transaction(store: string): { objectStore(name: string): Store }; close(): void }
    const g = globalThis as unknown as {
      indexedDB: { databases(): Promise<{ name: string }[]>; open(name: string): Request<Database> }
      localStorage: { length: number; key(n: number): string; getItem(key: string): string }
      sessionStorage: { length: number; key(n: number): string; getItem(key: string): string }
      caches: {
        keys(): Promise<string[]>
        open(name: string): Promise<{ keys(): Promise<{ url: string }[]>; match(request: unknown): Promise<{ arrayBuffer(): Promise<ArrayBuffer> }> }>
      }
      Blob: new () => { arrayBuffer(): Promise<ArrayBuffer> }
      CryptoKey: new () => { extractable: boolean }
    }
    const asked = <T>(request: Request<T>) =>
      new Promise<T>((resolve, reject) => {
        request.onsuccess = () => resolve(request.result)
        request.onerror = () => reject(request.error)
      })
    const encoder = new TextEncoder()
    const bytesOf = async (value: unknown, out: Uint8Array[], keys: { extractable: number }): Promise<void> => {
      if (typeof value === 'string') out.push(encoder.encode(value))
      else if (typeof value === 'number') out.push(encoder.encode(String(value)))
      else if (value instanceof Uint8Array) out.push(value)
      else if (value instanceof ArrayBuffer) out.push(new Uint8Array(value))
      else if (value instanceof g.Blob) out.push(new Uint8Array(await value.arrayBuffer()))
      else if (value instanceof g.CryptoKey) keys.extractable += value.extractable ? 1 : 0
      else if (Array.isArray(value)) for (const inner of value) await bytesOf(inner, out, keys)
      else if (typeof value === 'object' && value !== null)
        for (const [key, inner] of Object.entries(value)) {
          out.push(encoder.encode(key))
          await bytesOf(inner, out, keys)
        }
    }
    const kept: { where: string; base64: string; extractableKeys: number }[] = []
    const keep = async (where: string, value: unknown) => {
      const parts: Uint8Array[] = []
      const keys = { extractable: 0 }
      await bytesOf(value, parts, keys)
      let binary = ''
      for (const part of parts) for (const byte of part) binary += String.fromCharCode(byte)
      kept.push({ where, base64: btoa(binary), extractableKeys: keys.extractable })
    }
    for (const { name } of await g.indexedDB.databases()) {
      const db = await asked(g.indexedDB.open(name))
      for (const storeName of Array.from(db.objectStoreNames)) {
        const store = () => db.transaction(storeName).objectStore(storeName)
        const [keys, values] = await Promise.all([asked(store().getAllKeys()), asked(store().getAll())])
        for (const [n, key] of keys.entries()) await keep(`indexedDB ${name}/${storeName}/${String(key)}`, [key, values[n]])
      }
      db.close()
    }
    for (const [label, storage] of [
      ['localStorage', g.localStorage],
      ['sessionStorage', g.sessionStorage],
    ] as const) {
      for (let n = 0; n < storage.length; n++) await keep(`${label} ${storage.key(n)}`, [storage.key(n), storage.getItem(storage.key(n))])
    }
    for (const cacheName of await g.caches.keys()) {
      const cache = await g.caches.open(cacheName)
      for (const request of await cache.keys())
        await keep(`Cache Storage ${cacheName} ${request.url}`, [request.url, await (await cache.match(request)).arrayBuffer()])
    }
    return kept
  })
}

/** What must never be kept in plain, each as bytes to search for. */
type Needles = Map<string, Buffer>

/** The needles found in `haystack`. */
const found = (needles: Needles, haystack: Buffer): string[] => [...needles].filter(([, needle]) => haystack.includes(needle)).map(([label]) => label)

/** The needles found in each of the page's stores and records. */
async function plaintextInPage(page: Page, needles: Needles): Promise<string[]> {
  return (await pageStorage(page)).flatMap((kept) => found(needles, Buffer.from(kept.base64, 'base64')).map((label) => `${label} in ${kept.where}`))
}

/** The needles found in the profile's files on disk. */
async function plaintextOnDisk(dir: string, needles: Needles): Promise<string[]> {
  const hits: string[] = []
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const file = path.join(entry.parentPath, entry.name)
    const bytes = await readFile(file).catch(() => null) // a file Chromium removed meanwhile
    if (bytes !== null) hits.push(...found(needles, bytes).map((label) => `${label} in ${path.relative(dir, file)}`))
  }
  return hits
}

/** 64 bytes from the middle of `bytes`: a piece no random ciphertext holds. */
const middle = (bytes: Uint8Array): Buffer => Buffer.from(bytes.subarray(Math.floor(bytes.length / 2) - 32, Math.floor(bytes.length / 2) + 32))

/** What the page's store keeps under 'keys': the device keys sealed under the password key, and what makes that key. */
interface SealedKeysRecord {
  readonly salt: Uint8Array
  readonly params: EscrowKdfParams
  readonly sealed: Sealed
}

async function storedSealedKeys(page: Page): Promise<SealedKeysRecord> {
  const record = await page.evaluate(
    () =>
      new Promise<{ salt: number[]; params: EscrowKdfParams; iv: number[]; data: number[] }>((resolve, reject) => {
        type Request<T> = { result: T; error: unknown; onsuccess: (() => void) | null; onerror: (() => void) | null }
        type Store = { get(key: string): Request<{ salt: Uint8Array; params: EscrowKdfParams; sealed: Sealed }> }
        const open = (
          globalThis as unknown as { indexedDB: { open(name: string): Request<{ transaction(store: string): { objectStore(name: string): Store } }> } }
        ).indexedDB.open('coffer')
        open.onerror = () => reject(open.error)
        open.onsuccess = () => {
          const read = open.result.transaction('state').objectStore('state').get('keys')
          read.onsuccess = () =>
            resolve({ salt: [...read.result.salt], params: read.result.params, iv: [...read.result.sealed.iv], data: [...read.result.sealed.data] })
        }
      }),
  )
  return { salt: new Uint8Array(record.salt), params: record.params, sealed: { iv: new Uint8Array(record.iv), data: new Uint8Array(record.data) } }
}

/** A photo's thumbnail as the page decrypts it, opened here from what the server stores. */
async function thumbnailOf(account: WebAccount, albumId: string, assetId: string): Promise<Uint8Array> {
  const { client } = account.library
  const entry = (await liveEntries(client, albumId)).find((e) => e.asset_id === assetId)!
  const asset = await openAsset({ ...account.library, albumId }, entry, await client.downloadBlob(entry.metadata_blob_hash!))
  return openDerivative(asset, 'thumbnail', await client.downloadBlob(toHex(derivativeBlob(asset, 'thumbnail')!.hash)))
}

const signInHeading = (page: Page) => page.getByRole('heading', { name: 'Sign in to Coffer Photos' })

/** Signs in through the page, and waits for `landing`: a screen only a device of the account shows. */
async function signIn(page: Page, account: WebAccount, landing: Locator, password = PASSWORD): Promise<void> {
  await page.getByLabel('Email').fill(account.email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect.poll(() => landing.isVisible()).toBe(true)
}

describe('the browser keeps only ciphertext', () => {
  it('keeps nothing in plain, in its storage or on disk; after sign-out only the sealed keys, which the password alone opens; signing in again needs no pairing', async () => {
    const account = await webAccount(server, 'web-storage')
    const page = context.pages()[0] ?? (await context.newPage())
    const problems: string[] = []
    page.on('pageerror', (error) => problems.push(error.message))
    const tokens: string[] = []
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/v1/auth/login' && response.ok())
        void response.json().then((body: { access_token: string; refresh_token: string }) => tokens.push(body.access_token, body.refresh_token))
    })
    const folder = await mkdtemp(path.join(tmpdir(), 'coffer-storage-photos-'))
    const photos = await Promise.all(
      [1, 2, 3].map(async (n) => {
        const file = path.join(folder, `secret-cove-${n}.jpg`)
        await writePhoto(file, { format: 'jpeg', width: 640, height: 480, seed: 9100 + n })
        return { file, bytes: await readFile(file) }
      }),
    )

    // A session and keys an earlier version kept in plain: the session is dropped (a sign-in has
    // the password), and that sign-in seals the keys.
    await page.goto('/')
    await putPlainState(page, server, account)
    await page.reload()
    await expect.poll(() => signInHeading(page).isVisible()).toBe(true)
    expect(await storedNames(page)).toEqual(['keys'])
    await signIn(page, account, page.getByRole('heading', { name: 'Photos', exact: true }))

    await page.goto('/#/albums')
    await page.getByLabel('New album').fill('Cove 2031')
    await page.getByRole('button', { name: 'Create album' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Cove 2031' }).isVisible()).toBe(true)
    await picker(page).setInputFiles(photos.slice(0, 2).map((p) => p.file))
    await expect.poll(async () => (await decryptedThumbnails(page)).length, { timeout: 30_000 }).toBe(2)
    // The photo index (decision 0053) keeps both, sealed, a moment later: its directory and a record each.
    const indexed = async () => (await pageStorage(page)).filter((k) => k.where.startsWith('indexedDB coffer-photo-index/')).length
    await expect.poll(indexed).toBe(3)
    // The third stays queued: its upload is held.
    await page.route('**/v1/upload**', () => {})
    await picker(page).setInputFiles(photos[2]!.file)
    await expect.poll(() => page.locator('.uploads li[data-state=sending]').count()).toBe(1)
    const albumId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!)
    const thumbnail = await thumbnailOf(account, albumId, (await liveAssetIds(account.library, albumId))[0]!)

    const needles: Needles = new Map([
      ['the master key', Buffer.from(account.keys.masterKey)],
      ['the identity seeds', Buffer.from(account.keys.identitySeeds)],
      ['the X-Wing seed', Buffer.from(account.keys.xwingSeed)],
      ...photos.map((p, n) => [`photo ${n + 1}'s bytes`, middle(p.bytes)] as const),
      ["a thumbnail's bytes", middle(thumbnail)],
      ['a file name', Buffer.from('secret-cove')],
      ['the email', Buffer.from(account.email)],
      ...tokens.map((token, n) => [n % 2 === 0 ? 'the access token' : 'the refresh token', Buffer.from(token)] as const),
    ])
    expect(tokens).toHaveLength(2)

    expect(await plaintextInPage(page, needles)).toEqual([])
    // On disk, not the keys: this test wrote them in plain (as an earlier version did), and LevelDB
    // keeps a record's overwritten bytes until it compacts (decision 0031). Nor the email:
    // Chromium's autofill keeps what the sign-in form was given ('Web Data'), not the app.
    const onDisk: Needles = new Map([...needles].filter(([label]) => !['the master key', 'the identity seeds', 'the X-Wing seed', 'the email'].includes(label)))
    expect(await plaintextOnDisk(profile, onDisk)).toEqual([])
    const kept = await pageStorage(page)
    // What was read: the sign-in's records and the queued file; no key readable by script.
    expect(kept.map((k) => k.where).filter((where) => where.startsWith('indexedDB coffer/'))).toEqual(
      ['keys', 'password-key', 'session', 'storage-key'].map((name) => `indexedDB coffer/state/${name}`),
    )
    expect(kept.filter((k) => k.where.startsWith('indexedDB coffer-uploads/'))).toHaveLength(1)
    expect(kept.filter((k) => k.extractableKeys > 0)).toEqual([])
    // The one service worker is the app's (decision 0057), and its cache holds the app's own files only.
    const worker = (await page.evaluate(`(async () => {
      const scripts = (await navigator.serviceWorker.getRegistrations()).map((r) => new URL((r.active ?? r.waiting ?? r.installing).scriptURL).pathname)
      const urls = []
      for (const name of await caches.keys()) for (const request of await (await caches.open(name)).keys()) urls.push(new URL(request.url).pathname)
      return { scripts, urls }
    })()`)) as { scripts: string[]; urls: string[] }
    expect(worker.scripts).toEqual(['/sw.js'])
    expect(worker.urls.filter((url) => url !== '/' && url !== '/manifest.webmanifest' && !/^\/(assets|icons)\//.test(url))).toEqual([])

    // Signing out drops the session, its keys and the queue; the device keys stay, sealed.
    await signOut(page)
    await expect.poll(() => signInHeading(page).isVisible()).toBe(true)
    expect(await page.getByRole('status').textContent()).toContain('One photo waiting to upload was dropped')
    expect(await storedNames(page)).toEqual(['keys'])
    expect((await pageStorage(page)).filter((k) => k.where.startsWith('indexedDB coffer-uploads/'))).toEqual([])
    expect(await indexed()).toBe(0)
    expect(await plaintextInPage(page, needles)).toEqual([])
    const record = await storedSealedKeys(page)
    const withPassword = async (password: string) => passwordKey(password, record.salt, record.params, nativeArgon2id)
    await expect(openValue(await withPassword('not the password at all'), 'keys', record.sealed)).rejects.toThrow()
    const right = await withPassword(PASSWORD)
    await expect(openValue(right, 'pending-keys', record.sealed)).rejects.toThrow() // sealed with its name
    const opened = await openValue<{ masterKey: Uint8Array }>(right, 'keys', record.sealed)
    expect(Buffer.from(opened.masterKey).equals(Buffer.from(account.keys.masterKey))).toBe(true)

    // Signing in again (back on the album's address): the same device, its photos shown, no pairing asked.
    await page.unrouteAll({ behavior: 'ignoreErrors' })
    await signIn(page, account, page.getByRole('heading', { name: 'Cove 2031' }))
    await expect.poll(async () => (await decryptedThumbnails(page)).length, { timeout: 30_000 }).toBe(2)
    expect(await plaintextInPage(page, needles)).toEqual([])
    expect(problems).toEqual([])
    await rm(folder, { recursive: true })
  }, 120_000)

  it('seals the keys again when the password changes here; after a change elsewhere, the earlier password unlocks them once, or they are let go', async () => {
    const account = await webAccount(server, 'web-storage-password')
    const page = await context.newPage()
    const watched: WatchedPage = { page, context, problems: [] }
    page.on('pageerror', (error) => watched.problems.push(`uncaught: ${error.message}`))
    await openAs(page, server, account, '/#/security')
    const albums = page.getByRole('heading', { name: 'Albums', exact: true })
    const changed = `changed here ${randomUUID().slice(0, 8)}`
    await page.getByLabel('Current password').fill(PASSWORD)
    await page.getByLabel('New password', { exact: true }).fill(changed)
    await page.getByLabel('New password again').fill(changed)
    await page.getByRole('button', { name: 'Change password' }).click()
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Your password is changed' }).isVisible()).toBe(true)
    await signOut(page)
    await page.goto('/#/albums')
    await signIn(page, account, albums, changed)

    // Changed on another device: this browser's session ends, its keys stay sealed under `changed`.
    const elsewhere = `changed elsewhere ${randomUUID().slice(0, 8)}`
    const other = server.client()
    await other.login(account.email, changed)
    await other.changePassword(changed, elsewhere)
    await page.reload()
    await expect.poll(() => signInHeading(page).isVisible()).toBe(true)
    await page.getByLabel('Email').fill(account.email)
    await page.getByLabel('Password').fill(elsewhere)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('heading', { name: "Unlock this browser's keys" }).isVisible()).toBe(true)
    await checkScreen(watched, 'sign-in-earlier-password')
    await page.getByLabel('Earlier password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Unlock' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That password does not open them either')
    await page.getByLabel('Earlier password').fill(changed)
    await page.getByRole('button', { name: 'Unlock' }).click()
    await expect.poll(() => albums.isVisible()).toBe(true)
    // Sealed under the new password now: the next sign-in asks nothing more.
    await signOut(page)
    await signIn(page, account, albums, elsewhere)

    // Changed elsewhere again, and the earlier password forgotten: the keys are let go, and the browser is not a device any more.
    const again = `changed again ${randomUUID().slice(0, 8)}`
    await other.login(account.email, elsewhere)
    await other.changePassword(elsewhere, again)
    await page.reload()
    await expect.poll(() => signInHeading(page).isVisible()).toBe(true)
    await page.getByLabel('Email').fill(account.email)
    await page.getByLabel('Password').fill(again)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('button', { name: 'Let them go' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Make this browser one of your devices' }).isVisible()).toBe(true)
    expect(await storedNames(page)).toEqual(['password-key', 'session', 'storage-key'])
    expect(watched.problems).toEqual([])
    await page.close()
  }, 60_000)
})
