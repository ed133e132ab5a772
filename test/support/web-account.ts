// An account already set up on a device, put into a browser context the quick way: registered
// and given keys through the SDK here (as the CLI's setup makes them), its signed device
// directory published, and a session of its own plus the device keys written into the page's
// IndexedDB where the app keeps them (web/src/lib/store.ts: database 'coffer', store 'state',
// keys 'session' and 'keys'). The browser then opens as that device, signed in.
import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { deviceEntry, newXWingSeed } from '../../src/client/account.ts'
import type { Library } from '../../src/client/albums.ts'
import { generateMasterKey } from '../../src/client/format/keys.ts'
import { nativeIdentity, nativeSha256, nativeVerify } from '../../src/client/node/crypto.ts'
import { CofferClient, type Tokens } from '../../src/sdk/client.ts'
import { signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { registered, type Member } from './actors.ts'
import type { TestServer } from './server.ts'

export interface WebAccount extends Member {
  readonly userId: string
  /** The browser device's keys (SavedKeys' fields). */
  readonly keys: { readonly userId: string; readonly deviceId: string; readonly masterKey: Uint8Array; readonly identitySeeds: Uint8Array; readonly xwingSeed: Uint8Array; readonly identityPublicKey: Uint8Array }
  /** The account as the photo library takes it, on `client` (the registering session, never the browser's). */
  readonly library: Library
}

/** Device names in the published directory: the browser, and a second device of the account. */
export const BROWSER_DEVICE = 'Test browser'
export const OTHER_DEVICE = 'Laptop'

/** Registers and sets up an account whose first device is the browser, with a second device listed. */
export async function webAccount(server: Pick<TestServer, 'client'>, label?: string): Promise<WebAccount> {
  const member = await registered(server, label)
  const { user_id: userId } = await member.client.getProfile()
  const identity = IdentityKey.generate()
  const keys = { userId, deviceId: randomUUID(), masterKey: generateMasterKey(), identitySeeds: identity.exportSeeds(), xwingSeed: newXWingSeed(), identityPublicKey: identity.publicKey }
  const devices = [deviceEntry(identity, keys.deviceId, keys.xwingSeed, BROWSER_DEVICE), deviceEntry(identity, randomUUID(), newXWingSeed(), OTHER_DEVICE)]
  await member.client.publishDirectory(await signDirectory(identity, { version: 1, devices }), identity)
  // node:crypto's signing, verifying and hashing: what seeding many assets from Node spends its time on.
  const library: Library = {
    client: member.client,
    identity: nativeIdentity(keys.identitySeeds),
    identityPublicKey: identity.publicKey,
    userId,
    deviceId: keys.deviceId,
    masterKey: keys.masterKey,
    sha256: nativeSha256,
    verify: nativeVerify,
  }
  return { ...member, userId, keys, library }
}

/** The server the page talks to: a test server, or a bench's child (no settable clock). */
export type WebServer = Pick<TestServer, 'url'> & { readonly clock?: TestServer['clock'] }

/** A new session of the account for the page's browser (its own, so that token rotations never collide), opened as its sign-in would: with its User-Agent. */
async function browserSession(page: Page, server: WebServer, account: WebAccount): Promise<Tokens> {
  const client = new CofferClient({ baseUrl: server.url, ...(server.clock === undefined ? {} : { now: server.clock.now }), userAgent: await page.evaluate(() => navigator.userAgent) })
  const result = await client.login(account.email, account.password)
  if (result.kind !== 'session') throw new Error('the account asks for a second factor: sign in through the page')
  return result.tokens
}

// The page's IndexedDB, as far as these helpers use it (this program is typed for Node, not the DOM).
interface IdbRequest<T> {
  readonly result: T
  readonly error: unknown
  onsuccess: (() => void) | null
  onerror: (() => void) | null
}
interface IdbStore {
  put(value: unknown, key: string): void
  getAllKeys(): IdbRequest<unknown[]>
  get(key: string): IdbRequest<unknown>
}
interface IdbTransaction {
  readonly error: unknown
  objectStore(name: string): IdbStore
  oncomplete: (() => void) | null
  onerror: (() => void) | null
}
interface IdbDatabase {
  createObjectStore(name: string): void
  transaction(store: string, mode?: 'readwrite'): IdbTransaction
  close(): void
}
type PageIndexedDb = { open(name: string): IdbRequest<IdbDatabase> & { onupgradeneeded: (() => void) | null } }

/** Opens the app in `page` signed in as `account` on its browser device (`path`: where to land, e.g. '/#/security'). */
export async function openAs(page: Page, server: WebServer, account: WebAccount, path = '/'): Promise<void> {
  await page.goto(path)
  const tokens = await browserSession(page, server, account)
  const { keys } = account
  await page.evaluate(
    async ({ session, keys }) => {
      const bytes = (numbers: number[]) => new Uint8Array(numbers)
      const saved = { ...keys, masterKey: bytes(keys.masterKey), identitySeeds: bytes(keys.identitySeeds), xwingSeed: bytes(keys.xwingSeed), identityPublicKey: bytes(keys.identityPublicKey) }
      await new Promise<void>((resolve, reject) => {
        const open = (globalThis as unknown as { indexedDB: PageIndexedDb }).indexedDB.open('coffer')
        open.onupgradeneeded = () => open.result.createObjectStore('state')
        open.onerror = () => reject(open.error)
        open.onsuccess = () => {
          const transaction = open.result.transaction('state', 'readwrite')
          transaction.objectStore('state').put(session, 'session')
          transaction.objectStore('state').put(saved, 'keys')
          transaction.oncomplete = () => {
            open.result.close()
            resolve()
          }
          transaction.onerror = () => reject(transaction.error)
        }
      })
    },
    {
      session: { email: account.email, userId: account.userId, tokens },
      keys: { userId: keys.userId, deviceId: keys.deviceId, masterKey: [...keys.masterKey], identitySeeds: [...keys.identitySeeds], xwingSeed: [...keys.xwingSeed], identityPublicKey: [...keys.identityPublicKey] },
    },
  )
  await page.reload()
}

/** The names of what the app keeps in the page's store ('session', 'keys'). */
export function storedNames(page: Page): Promise<string[]> {
  return page.evaluate(
    () =>
      new Promise<string[]>((resolve, reject) => {
        const open = (globalThis as unknown as { indexedDB: PageIndexedDb }).indexedDB.open('coffer')
        open.onerror = () => reject(open.error)
        open.onsuccess = () => {
          const names = open.result.transaction('state').objectStore('state').getAllKeys()
          names.onsuccess = () => {
            open.result.close()
            resolve(names.result.map(String))
          }
        }
      }),
  )
}

/** A byte field of the keys the app keeps under `name` ('keys', or 'pending-keys' during a first-device setup), or null when it keeps none (or they lack that field). */
export async function storedKeyBytes(page: Page, name: 'keys' | 'pending-keys', field: 'identitySeeds' | 'identityPublicKey'): Promise<Uint8Array | null> {
  const bytes = await page.evaluate(
    ({ name, field }) =>
      new Promise<number[] | null>((resolve, reject) => {
        const open = (globalThis as unknown as { indexedDB: PageIndexedDb }).indexedDB.open('coffer')
        open.onerror = () => reject(open.error)
        open.onsuccess = () => {
          const read = open.result.transaction('state').objectStore('state').get(name)
          read.onsuccess = () => {
            open.result.close()
            const value = (read.result as Record<string, Uint8Array> | undefined)?.[field]
            resolve(value === undefined ? null : [...value])
          }
        }
      }),
    { name, field },
  )
  return bytes === null ? null : new Uint8Array(bytes)
}

/** The identity seeds of keys the app keeps under `name`, or null when it keeps none. */
export const storedIdentitySeeds = (page: Page, name: 'keys' | 'pending-keys'): Promise<Uint8Array | null> => storedKeyBytes(page, name, 'identitySeeds')
