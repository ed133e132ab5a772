// An account already set up on a device, put into a browser context the quick way: registered
// and given keys through the SDK here (as the CLI's setup makes them), its signed device
// directory published, and a session of its own plus the device keys written into the page's
// IndexedDB sealed as the app keeps them (web/src/lib/store.ts: database 'coffer', store
// 'state'; sealed with web/src/lib/sealed.ts). The browser then opens as that device, signed in.
import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { deviceEntry, newXWingSeed } from '../../src/client/account.ts'
import type { Library } from '../../src/client/albums.ts'
import { randomBytes } from '../../src/client/format/bytes.ts'
import { generateMasterKey } from '../../src/client/format/keys.ts'
import { nativeArgon2id, nativeIdentity, nativeSha256, nativeVerify } from '../../src/client/node/crypto.ts'
import { utf8 } from '../../src/sdk/bytes.ts'
import { CofferClient, type Tokens } from '../../src/sdk/client.ts'
import { signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { decodedValue, importedKey, newSalt, PASSWORD_KDF, sealValue } from '../../web/src/lib/sealed.ts'
import { registered, type Member } from './actors.ts'
import type { TestServer } from './server.ts'

export interface WebAccount extends Member {
  readonly userId: string
  /** The browser device's keys (SavedKeys' fields). */
  readonly keys: {
    readonly userId: string
    readonly deviceId: string
    readonly masterKey: Uint8Array
    readonly identitySeeds: Uint8Array
    readonly xwingSeed: Uint8Array
    readonly identityPublicKey: Uint8Array
  }
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
  const keys = {
    userId,
    deviceId: randomUUID(),
    masterKey: generateMasterKey(),
    identitySeeds: identity.exportSeeds(),
    xwingSeed: newXWingSeed(),
    identityPublicKey: identity.publicKey,
  }
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
  const client = new CofferClient({
    baseUrl: server.url,
    ...(server.clock === undefined ? {} : { now: server.clock.now }),
    userAgent: await page.evaluate(() => navigator.userAgent),
  })
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
/** WebCrypto in the page, as far as these helpers use it. */
interface PageSubtle {
  importKey(format: 'raw', bytes: Uint8Array, algorithm: string, extractable: false, usages: string[]): Promise<unknown>
  decrypt(algorithm: { name: string; iv: Uint8Array; additionalData: Uint8Array }, key: unknown, data: Uint8Array): Promise<ArrayBuffer>
}

/** A record for the page: its byte fields as number arrays (what page.evaluate carries), marked to be made Uint8Arrays again there. */
type Carried = { readonly bytes: number[] } | { readonly [field: string]: Carried } | string | number

function carried(value: unknown): Carried {
  if (value instanceof Uint8Array) return { bytes: [...value] }
  if (typeof value === 'string' || typeof value === 'number') return value
  return Object.fromEntries(Object.entries(value as object).map(([field, inner]) => [field, carried(inner)]))
}

/**
 * Writes records into the page's store ('coffer', 'state'). A field `{ key: [32 numbers] }`
 * (from keyed()) becomes a non-extractable AES-GCM CryptoKey there, as the app makes them.
 */
async function putRecords(page: Page, records: Record<string, unknown>): Promise<void> {
  await page.evaluate(async (records) => {
    const subtle = (globalThis as unknown as { crypto: { subtle: PageSubtle } }).crypto.subtle
    const revived = async (value: unknown): Promise<unknown> => {
      if (typeof value !== 'object' || value === null) return value
      const fields = Object.entries(value as Record<string, unknown>)
      if (fields.length === 1 && fields[0]![0] === 'bytes') return new Uint8Array(fields[0]![1] as number[])
      if (fields.length === 1 && fields[0]![0] === 'aesKey')
        return subtle.importKey('raw', new Uint8Array(fields[0]![1] as number[]), 'AES-GCM', false, ['encrypt', 'decrypt'])
      return Object.fromEntries(await Promise.all(fields.map(async ([field, inner]) => [field, await revived(inner)])))
    }
    const values = await Promise.all(Object.entries(records).map(async ([name, value]) => [name, await revived(value)] as const))
    await new Promise<void>((resolve, reject) => {
      const open = (globalThis as unknown as { indexedDB: PageIndexedDb }).indexedDB.open('coffer')
      open.onupgradeneeded = () => open.result.createObjectStore('state')
      open.onerror = () => reject(open.error)
      open.onsuccess = () => {
        const transaction = open.result.transaction('state', 'readwrite')
        for (const [name, value] of values) transaction.objectStore('state').put(value, name)
        transaction.oncomplete = () => {
          open.result.close()
          resolve()
        }
        transaction.onerror = () => reject(transaction.error)
      }
    })
  }, records)
}

/** Raw AES key bytes, to become a non-extractable CryptoKey in the page (putRecords). */
const keyed = (bytes: Uint8Array) => ({ aesKey: [...bytes] })

/** The keys as SavedKeys holds them. */
const savedKeys = (keys: WebAccount['keys']) => ({
  userId: keys.userId,
  deviceId: keys.deviceId,
  masterKey: keys.masterKey,
  identitySeeds: keys.identitySeeds,
  xwingSeed: keys.xwingSeed,
  identityPublicKey: keys.identityPublicKey,
})

/**
 * Opens the app in `page` signed in as `account` on its browser device (`path`: where to land,
 * e.g. '/#/security'), with what a sign-in through the page leaves (web/src/lib/store.ts): a
 * storage key sealing the session, and the password key (argon2id of the password, made here
 * natively) sealing the device keys.
 */
export async function openAs(page: Page, server: WebServer, account: WebAccount, path = '/'): Promise<void> {
  await page.goto(path)
  const tokens = await browserSession(page, server, account)
  const storageBytes = randomBytes(32)
  const salt = newSalt()
  const passwordBytes = await nativeArgon2id(utf8(account.password), salt, PASSWORD_KDF)
  const storageKey = await importedKey(new Uint8Array(storageBytes))
  const passwordKey = await importedKey(new Uint8Array(passwordBytes))
  await putRecords(page, {
    'storage-key': keyed(storageBytes),
    'password-key': { key: keyed(passwordBytes), salt: carried(salt), params: PASSWORD_KDF },
    session: carried(await sealValue(storageKey, 'session', { email: account.email, userId: account.userId, tokens })),
    keys: { userId: account.userId, salt: carried(salt), params: PASSWORD_KDF, sealed: carried(await sealValue(passwordKey, 'keys', savedKeys(account.keys))) },
  })
  await page.reload()
}

/** Puts a session of the account and its device keys into the page as a version before sealing kept them: in plain, under 'session' and 'keys'. */
export async function putPlainState(page: Page, server: WebServer, account: WebAccount): Promise<void> {
  const session = { email: account.email, userId: account.userId, tokens: await browserSession(page, server, account) }
  await putRecords(page, { session: carried(session), keys: carried(savedKeys(account.keys)) })
}

/** The names of what the app keeps in the page's store ('session', 'keys', ...), in order. */
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

/**
 * A byte field of the keys the app keeps under `name` ('keys', or 'pending-keys' during a
 * first-device setup), opened with the sign-in's password key in the page; null when it keeps
 * none (or they lack that field).
 */
export async function storedKeyBytes(page: Page, name: 'keys' | 'pending-keys', field: 'identitySeeds' | 'identityPublicKey'): Promise<Uint8Array | null> {
  const plaintext = await page.evaluate(
    (name) =>
      new Promise<number[] | null>((resolve, reject) => {
        const open = (globalThis as unknown as { indexedDB: PageIndexedDb }).indexedDB.open('coffer')
        open.onerror = () => reject(open.error)
        open.onsuccess = () => {
          const store = open.result.transaction('state').objectStore('state')
          const record = store.get(name)
          const passwordKey = store.get('password-key')
          passwordKey.onsuccess = () => {
            open.result.close()
            const sealed = (record.result as { sealed: { iv: Uint8Array; data: Uint8Array } } | undefined)?.sealed
            const key = (passwordKey.result as { key: unknown } | undefined)?.key
            if (sealed === undefined || key === undefined) return resolve(null)
            const subtle = (globalThis as unknown as { crypto: { subtle: PageSubtle } }).crypto.subtle
            subtle
              .decrypt({ name: 'AES-GCM', iv: sealed.iv, additionalData: new TextEncoder().encode(name) }, key, sealed.data)
              .then((bytes) => resolve([...new Uint8Array(bytes)]), reject)
          }
        }
      }),
    name,
  )
  return plaintext === null ? null : (decodedValue<Record<string, Uint8Array>>(new Uint8Array(plaintext))[field] ?? null)
}

/** The identity seeds of keys the app keeps under `name`, or null when it keeps none. */
export const storedIdentitySeeds = (page: Page, name: 'keys' | 'pending-keys'): Promise<Uint8Array | null> => storedKeyBytes(page, name, 'identitySeeds')
