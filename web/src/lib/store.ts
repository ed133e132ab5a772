// What this browser keeps between visits, in IndexedDB (origin-private), every byte of it sealed
// (lib/sealed.ts; docs/decisions/0031-browser-storage-encrypted.md):
// - 'storage-key': the sign-in's storage key, a random non-extractable AES-GCM key made at
//   sign-in and deleted at sign-out. It seals the session's token pair with the account it
//   belongs to ('session'), the upload queue (lib/uploads.ts), and the photo index (the name and
//   thumbnail of the photos this browser opened, for the moderation record: lib/photo-index.ts,
//   decision 0053). Those two are in databases of their own; sealed under this key, they no
//   longer open after a sign-out, and both are dropped then (app/session.tsx), the index also
//   at "forget this browser" and at every sign-in.
// - 'password-key': the password key of the sign-in (argon2id of the password typed at sign-in,
//   non-extractable), deleted at sign-out with the storage key. It seals the device's keys.
// - 'keys': once the browser is a device of the account, the device's keys sealed under the
//   password key, beside the salt and costs that make it again from the password. They survive
//   sign-out (the browser stays a device, as the CLI's logout does) but open only at the next
//   sign-in, with the password; "forget this browser" drops them (docs/web.md).
//
// Setting up the account's first device keeps its new keys under 'pending-keys' (sealed as
// 'keys' are) before anything is published (the first publish binds the identity key for good),
// and moves them to 'keys' only once the recovery phrase was checked: 'keys' always holds a
// finished device, which is all the rest of the app reads (decision 0020, "Becoming a device").
//
// A version before sealing kept 'session' and 'keys' in plain: such a session is dropped (the
// next sign-in has the password), and such keys are sealed at their account's next sign-in.
import { createStore, del, delMany, get, getMany, promisifyRequest, set } from 'idb-keyval'
import type { Argon2id, EscrowKdfParams } from '#photos/format/recovery.ts'
import type { Tokens } from '#sdk/client.ts'
import { isSealed, newSalt, newStorageKey, openBytes, openValue, PASSWORD_KDF, passwordKey, sealBytes, sealValue, type Sealed } from './sealed.ts'

const db = createStore('coffer', 'state')

export interface SavedSession {
  readonly email: string
  readonly userId: string
  readonly tokens: Tokens
}

/** A device's secrets, as the CLI keeps them in keys.json (standard base64 fields). */
export interface SavedKeys {
  readonly userId: string
  readonly deviceId: string
  readonly masterKey: Uint8Array
  /** IdentityKey.exportSeeds(): 64 bytes. */
  readonly identitySeeds: Uint8Array
  readonly xwingSeed: Uint8Array
  /**
   * The identity key's public half (1984 bytes), kept so that opening the app need not derive it
   * from the seeds: an ML-DSA-65 key generation, about 100 ms of the page's thread. Keys saved
   * without it are given it at their next load (lib/library.ts keysWithPublicKey).
   */
  readonly identityPublicKey?: Uint8Array
}

/** A first-device setup that has not finished: its keys (never complete yet) and the name it publishes. */
export interface PendingKeys extends SavedKeys {
  readonly deviceName: string
}

/** The key argon2id makes of the password, with the salt and costs it was made with. */
export interface PasswordKey {
  readonly key: CryptoKey
  readonly salt: Uint8Array
  readonly params: EscrowKdfParams
}

type KeysName = 'keys' | 'pending-keys'

/** What 'keys' and 'pending-keys' hold: the keys sealed under a password key, and what makes that key again. */
interface PasswordSealed {
  readonly userId: string
  readonly salt: Uint8Array
  readonly params: EscrowKdfParams
  readonly sealed: Sealed
}

const isPasswordSealed = (value: unknown): value is PasswordSealed => typeof value === 'object' && value !== null && isSealed((value as PasswordSealed).sealed)

/** A sign-in's storage key, or undefined when signed out. */
const storageKey = (): Promise<CryptoKey | undefined> => get<CryptoKey>('storage-key', db)

export async function sealWithStorageKey(name: string, plaintext: Uint8Array): Promise<Sealed> {
  const key = await storageKey()
  if (key === undefined) throw new Error('Signed out: nothing can be kept in this browser until you sign in again.')
  return sealBytes(key, name, plaintext)
}

/** The plaintext, or null when it no longer opens (signed out since, or signed in again: another storage key). */
export async function openWithStorageKey(name: string, sealed: Sealed): Promise<Uint8Array | null> {
  const key = await storageKey()
  if (key === undefined) return null
  return openBytes(key, name, sealed).catch(() => null)
}

export async function readSession(): Promise<SavedSession | undefined> {
  const [key, sealed] = await getMany<unknown>(['storage-key', 'session'], db)
  if (sealed === undefined) return undefined
  if (!isSealed(sealed) || !(key instanceof CryptoKey)) {
    await del('session', db) // kept in plain by an earlier version, or its key is gone
    return undefined
  }
  return openValue<SavedSession>(key, 'session', sealed).catch(() => undefined)
}

/** Keeps a new token pair; none once signed out (a refresh that ended after the sign-out). */
export async function saveSession(session: SavedSession): Promise<void> {
  const key = await storageKey()
  if (key !== undefined) await set('session', await sealValue(key, 'session', session), db)
}

/**
 * The password key of `password` for this browser's keys of `userId`: made with their salt and
 * costs when it keeps some, else with a new salt. Null when it keeps keys of that account that
 * this password does not open: they were sealed under an earlier password (changed elsewhere).
 */
export async function passwordKeyFor(userId: string, password: string, argon2id: Argon2id): Promise<PasswordKey | null> {
  const names: KeysName[] = ['keys', 'pending-keys']
  const records = await getMany<unknown>(names, db)
  const kept = names.flatMap((name, n) => {
    const record = records[n]
    return isPasswordSealed(record) && record.userId === userId ? [{ name, record }] : []
  })
  if (kept[0] === undefined) return newPasswordKey(password, argon2id)
  const { salt, params } = kept[0].record
  const made = { key: await passwordKey(password, salt, params, argon2id), salt, params }
  for (const { name, record } of kept) {
    if (
      !(await openBytes(made.key, name, record.sealed).then(
        () => true,
        () => false,
      ))
    )
      return null
  }
  return made
}

/** A password key with a new salt, at this version's costs. */
export async function newPasswordKey(password: string, argon2id: Argon2id): Promise<PasswordKey> {
  const salt = newSalt()
  return { key: await passwordKey(password, salt, PASSWORD_KDF, argon2id), salt, params: PASSWORD_KDF }
}

const sealUnder = async (passwordKey: PasswordKey, name: KeysName, keys: SavedKeys): Promise<PasswordSealed> => ({
  userId: keys.userId,
  salt: passwordKey.salt,
  params: passwordKey.params,
  sealed: await sealValue(passwordKey.key, name, keys),
})

/**
 * The keys of `userId` this browser keeps, opened with `from` and sealed again under `to` (a
 * password change, or keys sealed under an earlier password), and those an earlier version
 * kept in plain sealed under `to`; with `to` as the sign-in's password key when one is open.
 */
export async function resealKeys(userId: string, from: PasswordKey | null, to: PasswordKey): Promise<void> {
  const names: KeysName[] = ['keys', 'pending-keys']
  const resealed = new Map<KeysName, PasswordSealed>()
  for (const [n, record] of (await getMany<unknown>(names, db)).entries()) {
    const name = names[n]!
    let keys: SavedKeys | null = null
    if (isPasswordSealed(record)) {
      if (record.userId === userId && from !== null) keys = await openValue<SavedKeys>(from.key, name, record.sealed)
    } else if (record !== undefined && (record as SavedKeys).userId === userId) keys = record as SavedKeys
    if (keys !== null) resealed.set(name, await sealUnder(to, name, keys))
  }
  const signedIn = (await storageKey()) !== undefined
  await db('readwrite', (store) => {
    for (const [name, record] of resealed) store.put(record, name)
    if (signedIn) store.put(to, 'password-key')
    return promisifyRequest(store.transaction)
  })
}

/** Starts a sign-in: a new storage key, the session sealed under it, the password key kept beside it, plain keys of an earlier version sealed. */
export async function startSignIn(session: SavedSession, passwordKey: PasswordKey): Promise<void> {
  await resealKeys(session.userId, null, passwordKey)
  const key = await newStorageKey()
  const sealed = await sealValue(key, 'session', session)
  await db('readwrite', (store) => {
    store.put(key, 'storage-key')
    store.put(passwordKey, 'password-key')
    store.put(sealed, 'session')
    return promisifyRequest(store.transaction)
  })
}

/** Ends the sign-in here: the session and both of its keys. What they sealed no longer opens; the device's keys wait for the password. */
export const dropSession = (): Promise<void> => delMany(['session', 'storage-key', 'password-key'], db)

/** The sign-in's password key, or undefined when signed out. */
export const readPasswordKey = (): Promise<PasswordKey | undefined> => get<PasswordKey>('password-key', db)

async function readSealedKeys<T extends SavedKeys>(name: KeysName): Promise<T | undefined> {
  const [passwordKey, record] = await getMany<unknown>(['password-key', name], db)
  if (!isPasswordSealed(record) || passwordKey === undefined) return undefined
  return openValue<T>((passwordKey as PasswordKey).key, name, record.sealed).catch(() => undefined)
}

async function sealedKeys(name: KeysName, keys: SavedKeys): Promise<PasswordSealed> {
  const passwordKey = await readPasswordKey()
  if (passwordKey === undefined) throw new Error('Signed out: sign in again, then make this browser a device.')
  return sealUnder(passwordKey, name, keys)
}

export const readKeys = (): Promise<SavedKeys | undefined> => readSealedKeys<SavedKeys>('keys')
export const saveKeys = async (keys: SavedKeys): Promise<void> => set('keys', await sealedKeys('keys', keys), db)
/** Forgets the device: its keys, finished or pending. */
export const dropKeys = (): Promise<void> => delMany(['keys', 'pending-keys'], db)

export const readPendingKeys = (): Promise<PendingKeys | undefined> => readSealedKeys<PendingKeys>('pending-keys')
export const savePendingKeys = async (keys: PendingKeys): Promise<void> => set('pending-keys', await sealedKeys('pending-keys', keys), db)
export const dropPendingKeys = (): Promise<void> => del('pending-keys', db)

/** The setup finished: its keys become this browser's device keys, in one transaction. */
export async function completePendingKeys(keys: PendingKeys): Promise<SavedKeys> {
  const { deviceName: _name, ...saved } = keys
  const sealed = await sealedKeys('keys', saved)
  await db('readwrite', (store) => {
    store.put(sealed, 'keys')
    store.delete('pending-keys')
    return promisifyRequest(store.transaction)
  })
  return saved
}
