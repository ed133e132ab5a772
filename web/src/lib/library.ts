// The account as src/client's album functions take it (its Library): the session's client and
// this browser's device keys. The identity key (to sign with) is made from its seeds when first
// used, once per keys object; its public half (to check manifests with) is the one the keys keep.
// Signatures are checked with WebCrypto's Ed25519 (sdk/hybrid.ts webCryptoHybridVerify). Albums'
// histories are checked and remembered as lib/album-history.ts says, with what others wrote into
// a shared album checked under their pinned keys (lib/sharing.ts).
import { membershipChecker, writerKeysOf, type SharedLibrary } from '#photos/sharing.ts'
import type { CofferClient } from '#sdk/client.ts'
import { webCryptoHybridVerify } from '#sdk/hybrid.ts'
import { IdentityKey } from '#sdk/identity.ts'
import { browserHistory } from './album-history.ts'
import { browserContacts } from './contacts.ts'
import type { SavedKeys } from './store.ts'

const identities = new WeakMap<SavedKeys, IdentityKey>()

function identityOf(keys: SavedKeys): IdentityKey {
  let identity = identities.get(keys)
  if (identity === undefined) {
    identity = IdentityKey.fromSeeds(keys.identitySeeds)
    identities.set(keys, identity)
  }
  return identity
}

/** The identity key's public half: the one the keys keep, or derived from the seeds when they lack it. */
export function identityPublicKeyOf(keys: SavedKeys): Uint8Array {
  return keys.identityPublicKey ?? identityOf(keys).publicKey
}

/** The keys with their identity key's public half (SavedKeys.identityPublicKey). */
export function keysWithPublicKey(keys: SavedKeys): SavedKeys {
  return keys.identityPublicKey === undefined ? { ...keys, identityPublicKey: identityPublicKeyOf(keys) } : keys
}

/**
 * The account's library. In an album others write into, each writer's identity key is the one
 * this browser pinned (lib/contacts.ts), and the album's history is held to the membership it
 * records (src/client/sharing.ts).
 */
export function libraryOf(client: CofferClient, keys: SavedKeys): SharedLibrary {
  const identityPublicKey = identityPublicKeyOf(keys)
  const writerKeys = writerKeysOf({ library: { client, userId: keys.userId, identityPublicKey }, contacts: browserContacts(keys.masterKey) })
  const ownerId = keys.userId
  return {
    client,
    writerKeys,
    ownerId,
    history: browserHistory({ client, identityPublicKey, writerKeys, ownerId, checkMembers: membershipChecker(client, ownerId, writerKeys) }, keys.masterKey),
    get identity() {
      return identityOf(keys)
    },
    identityPublicKey,
    userId: keys.userId,
    deviceId: keys.deviceId,
    masterKey: keys.masterKey,
    verify: webCryptoHybridVerify,
  }
}
