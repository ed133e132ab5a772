// This browser's device keys as the photo library (src/client) takes them.
import type { Library } from '../../../src/client/albums.ts'
import type { CofferClient } from '../../../src/sdk/client.ts'
import { IdentityKey } from '../../../src/sdk/identity.ts'
import type { SavedKeys } from './store.ts'

export function libraryOf(client: CofferClient, keys: SavedKeys): Library {
  const identity = IdentityKey.fromSeeds(keys.identitySeeds)
  return { client, identity, identityPublicKey: identity.publicKey, userId: keys.userId, deviceId: keys.deviceId, masterKey: keys.masterKey }
}
