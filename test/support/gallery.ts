// An account set up as its first device would be, seeded through Node, and a browser made that
// device: the keys and a session of its own written into the page's IndexedDB where the web app
// keeps them (web/src/lib/store.ts: idb-keyval's database 'coffer', store 'state'). Then albums
// filled fast (small generated images, native signing) for the grid's tests.
import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import sharp from 'sharp'
import { albumRecordId, liveEntries, openAlbum, type Library, type NamedAlbum } from '../../src/client/albums.ts'
import { backupFile } from '../../src/client/files.ts'
import { generateMasterKey } from '../../src/client/format/keys.ts'
import { generateXWingKeyPair, XWING_SEED_BYTES } from '../../src/client/format/xwing.ts'
import { randomBytes } from '../../src/client/format/bytes.ts'
import { nativeIdentity, nativeSha256, nativeVerify } from '../../src/client/node/crypto.ts'
import type { Tokens } from '../../src/sdk/client.ts'
import { signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { registered, type Member } from './actors.ts'
import type { TestServer } from './server.ts'

/** The device's secrets as the web app keeps them (web/src/lib/store.ts SavedKeys). */
export interface DeviceKeys {
  readonly userId: string
  readonly deviceId: string
  readonly masterKey: Uint8Array
  readonly identitySeeds: Uint8Array
  readonly xwingSeed: Uint8Array
}

export interface SetUpAccount extends Member {
  readonly userId: string
  readonly keys: DeviceKeys
  /** The account from Node, as src/client takes it (its own session). */
  readonly library: Library
}

/**
 * Registers an account and sets it up as `coffer-photos setup` does, minus the escrow: a master
 * key, an identity key, a device with its X-Wing key listed in the published directory (version 1).
 */
export async function setUpAccount(server: TestServer, label = 'gallery'): Promise<SetUpAccount> {
  const member = await registered(server, label)
  const { user_id: userId } = await member.client.getProfile()
  const identitySeeds = IdentityKey.generate().exportSeeds()
  const identity = IdentityKey.fromSeeds(identitySeeds)
  const xwingSeed = randomBytes(XWING_SEED_BYTES)
  const deviceId = randomUUID()
  const directory = await signDirectory(identity, {
    version: 1,
    devices: [{ device_id: deviceId, public_key: identity.publicKey, encryption_key: generateXWingKeyPair(xwingSeed).publicKey, name: 'Test browser', added_at: new Date().toISOString() }],
  })
  await member.client.publishDirectory(directory, identity)
  const keys: DeviceKeys = { userId, deviceId, masterKey: generateMasterKey(), identitySeeds, xwingSeed }
  const library: Library = {
    client: member.client,
    identity: nativeIdentity(identitySeeds),
    identityPublicKey: identity.publicKey,
    userId,
    deviceId,
    masterKey: keys.masterKey,
    sha256: nativeSha256,
    verify: nativeVerify,
  }
  return { ...member, userId, keys, library }
}

/**
 * Makes the page's browser context that account's device, signed in with a session of its own
 * (a second sign-in: the Node client's refresh token is never shared), and opens `hash`.
 */
export async function becomeDevice(page: Page, server: TestServer, account: SetUpAccount, hash = '#/albums'): Promise<void> {
  const signIn = await server.client().login(account.email, account.password)
  if (signIn.kind !== 'session') throw new Error('the account has a second factor: sign in through the page instead')
  const session: { email: string; userId: string; tokens: Tokens } = { email: account.email, userId: account.userId, tokens: signIn.tokens }
  await page.goto('/')
  const { masterKey, identitySeeds, xwingSeed, ...ids } = account.keys
  // The page's own IndexedDB, opened as idb-keyval opens it. Bytes go over as arrays, and the
  // page's globals are typed loosely here (this file has no DOM types).
  await page.evaluate(
    async ({ session, ids, secrets }) => {
      const keys = { ...ids, masterKey: new Uint8Array(secrets[0]!), identitySeeds: new Uint8Array(secrets[1]!), xwingSeed: new Uint8Array(secrets[2]!) }
      const idb = (globalThis as unknown as { indexedDB: { open(name: string): any } }).indexedDB
      const db = await new Promise<any>((resolve, reject) => {
        const request = idb.open('coffer')
        request.onupgradeneeded = () => request.result.createObjectStore('state')
        request.onsuccess = () => resolve(request.result)
        request.onerror = () => reject(request.error)
      })
      await new Promise<void>((resolve, reject) => {
        const transaction = db.transaction('state', 'readwrite')
        transaction.objectStore('state').put(session, 'session')
        transaction.objectStore('state').put(keys, 'keys')
        transaction.oncomplete = () => resolve()
        transaction.onerror = () => reject(transaction.error)
      })
      db.close()
    },
    { session, ids, secrets: [masterKey, identitySeeds, xwingSeed].map((bytes) => [...bytes]) },
  )
  // A new fragment alone does not reload the page: the app reads the session when it loads.
  await page.goto(`/${hash}`)
  await page.reload()
}

/** A tiny distinct image (a flat colour from `n`) as WebP: the original and the thumbnail of a seeded asset. */
async function swatch(n: number): Promise<Uint8Array> {
  const pixel = Buffer.from([n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff])
  const bytes = await sharp(Buffer.concat(Array.from({ length: 16 * 16 }, () => pixel)), { raw: { width: 16, height: 16, channels: 3 } }).webp({ lossless: true }).toBuffer()
  return new Uint8Array(bytes)
}

/**
 * Fills an album with `count` small assets fast (backupFile from Node, `parallel` at a time):
 * each a 16×16 WebP named swatch-00000.webp..., its thumbnail the same image. Answers the
 * album and the asset ids in the order they were stored (the grid's feed order is not this
 * when `parallel` > 1).
 */
export async function seedAlbum(library: Library, name: string, count: number, parallel = 8): Promise<{ album: NamedAlbum; assetIds: string[] }> {
  const album = await openAlbum(library, name)
  const assetIds: string[] = []
  let next = 0
  const worker = async (): Promise<void> => {
    for (let n = next++; n < count; n = next++) {
      const bytes = await swatch(n)
      const result = await backupFile(
        { ...library, albumId: album.albumId, protocolVersion: album.protocolVersion },
        { name: `swatch-${String(n).padStart(5, '0')}.webp`, size: bytes.length, type: 'image/webp', modified: null, open: () => [bytes] },
        { describe: async () => ({ captured: null, width: 16, height: 16, derivatives: [{ kind: 'thumbnail', type: 'image/webp', bytes }] }) },
      )
      assetIds.push(result.assetId)
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
  return { album, assetIds }
}

/** The live assets of an album from Node (its record left out): what every device sees. */
export async function liveAssetIds(library: Library, albumId: string): Promise<string[]> {
  const record = await albumRecordId(library.masterKey, albumId)
  return (await liveEntries(library.client, albumId)).map((entry) => entry.asset_id).filter((id) => id !== record)
}

/** The album page's file picker. */
export const picker = (page: Page) => page.locator('input[type=file][aria-label="Photos to add"]')

/** Thumbnails on screen that are decrypted images: a blob: URL that decoded to some pixels. */
export function decryptedThumbnails(page: Page): Promise<string[]> {
  return page.locator('.grid img').evaluateAll((imgs) => (imgs as unknown as Img[]).filter((img) => img.src.startsWith('blob:') && img.complete && img.naturalWidth > 0).map((img) => img.alt))
}

/** What these tests read of an img element in the page (this file has no DOM types). */
export interface Img {
  readonly src: string
  readonly alt: string
  readonly complete: boolean
  readonly naturalWidth: number
}
