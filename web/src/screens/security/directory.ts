// The account's device directory as this browser checks it: fetched, and read only when it is
// signed by the identity key this browser holds (src/sdk readDirectory). A directory that does
// not verify shows nothing of what it says.
import { sha256Hex } from '#sdk/bytes.ts'
import { CofferProblem, type CofferClient } from '#sdk/client.ts'
import { readDirectory, type DeviceDirectory } from '#sdk/directory.ts'
import { CofferInputError } from '#sdk/input-error.ts'
import { identityPublicKeyOf } from '../../lib/library.ts'
import type { SavedKeys } from '../../lib/store.ts'

export type DirectoryView =
  /** This browser is not a device of the account: it has no key to check the directory with. */
  | { readonly kind: 'no-keys' }
  /** The account has published none. */
  | { readonly kind: 'none'; readonly fingerprint: string }
  | { readonly kind: 'verified'; readonly directory: DeviceDirectory; readonly fingerprint: string }
  | { readonly kind: 'not-verified'; readonly why: string; readonly fingerprint: string }

/** A key's fingerprint as people compare it: hex SHA-256 of the key, in groups of four. */
export function fingerprintText(key: Uint8Array): string {
  return sha256Hex(key).match(/.{4}/g)!.join(' ')
}

export async function loadDirectory(client: CofferClient, keys: SavedKeys | null): Promise<DirectoryView> {
  if (keys === null) return { kind: 'no-keys' }
  const publicKey = identityPublicKeyOf(keys)
  const fingerprint = fingerprintText(publicKey)
  let bytes: Uint8Array
  try {
    const fetched = await client.fetchDirectory(keys.userId)
    if (fetched === null) return { kind: 'none', fingerprint }
    bytes = fetched.bytes
  } catch (error) {
    if (error instanceof CofferProblem && error.status === 404) return { kind: 'none', fingerprint }
    throw error
  }
  try {
    return { kind: 'verified', directory: readDirectory(bytes, publicKey), fingerprint }
  } catch (error) {
    if (!(error instanceof CofferInputError)) throw error
    return { kind: 'not-verified', why: error.problems.join('; '), fingerprint }
  }
}
