// The identity keys this browser pinned for other accounts (src/client/sharing.ts ContactStore;
// decision 0067): the key of each account it shared an album with, or was shared one by, the
// first time it met it, and when the person compared safety numbers. Its own IndexedDB database,
// 'coffer-contacts', one record per account, sealed (lib/sealed.ts) under a key derived from the
// account's master key: like the album histories it outlives a sign-out (this browser stays the
// same device, and a pin forgotten is a key the server could swap unnoticed), and "Forget this
// browser" drops it with the keys.
import { clear, createStore, get, set } from 'idb-keyval'
import { hkdfSha256 } from '#photos/format/keys.ts'
import type { ContactStore, PinnedContact } from '#photos/sharing.ts'
import { equalBytes, utf8 } from '#sdk/bytes.ts'
import { importedKey, isSealed, openValue, sealValue, type AesKey } from './sealed.ts'

const db = createStore('coffer-contacts', 'contacts')
const KEY_INFO = 'coffer/v1/web/contacts'

const sealingKeys = new WeakMap<Uint8Array, Promise<AesKey>>()
function sealingKey(masterKey: Uint8Array): Promise<AesKey> {
  let key = sealingKeys.get(masterKey)
  if (key === undefined) {
    key = hkdfSha256(masterKey, new Uint8Array(0), utf8(KEY_INFO), 32).then(importedKey)
    sealingKeys.set(masterKey, key)
  }
  return key
}

/** The pins of the account whose master key this is. */
export function browserContacts(masterKey: Uint8Array): ContactStore {
  const name = (userId: string): string => `contact/${userId}`
  const read = async (userId: string): Promise<PinnedContact | null> => {
    const stored = await get<unknown>(userId, db)
    if (!isSealed(stored)) return null
    // One that does not open (another account's on this browser) is as none.
    return openValue<PinnedContact>(await sealingKey(masterKey), name(userId), stored).catch(() => null)
  }
  const write = async (userId: string, contact: PinnedContact): Promise<void> => {
    await set(userId, await sealValue(await sealingKey(masterKey), name(userId), contact), db)
  }
  return {
    pinned: read,
    pin: (userId, identityKey) => write(userId, { identityKey, verifiedAt: null }),
    async markVerified(userId, identityKey, at) {
      const pinned = await read(userId)
      if (pinned === null || !equalBytes(pinned.identityKey, identityKey)) throw new Error(`the key compared is not the one pinned for account ${userId}`)
      await write(userId, { identityKey, verifiedAt: at })
    },
  }
}

/** Drops every pin ("forget this browser"). */
export const dropContacts = (): Promise<void> => clear(db)
