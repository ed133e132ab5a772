// The account as src/client's album functions take it (its Library): the session's client and
// this browser's device keys. The identity key is made from its seeds once per keys object.
import type { Library } from '../../../src/client/albums.ts'
import type { CofferClient } from '../../../src/sdk/client.ts'
import { IdentityKey } from '../../../src/sdk/identity.ts'
import type { SavedKeys } from './store.ts'

const identities = new WeakMap<SavedKeys, IdentityKey>()

export function libraryOf(client: CofferClient, keys: SavedKeys): Library {
  let identity = identities.get(keys)
  if (identity === undefined) {
    identity = IdentityKey.fromSeeds(keys.identitySeeds)
    identities.set(keys, identity)
  }
  return { client, identity, identityPublicKey: identity.publicKey, userId: keys.userId, deviceId: keys.deviceId, masterKey: keys.masterKey }
}
