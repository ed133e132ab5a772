// What the album commands share: the account as the client library's Library, and an album
// named on the command line.
import { findAlbum, type Library, type NamedAlbum } from '../../client/albums.ts'
import { nativeSha256, nativeVerify } from '../../client/node/crypto.ts'
import type { Account } from './account.ts'
import { UsageError, type Invocation } from './command.ts'

export function libraryOf(account: Account): Library {
  return {
    client: account.client,
    identity: account.identity,
    userId: account.userId,
    deviceId: account.deviceId,
    masterKey: account.masterKey,
    identityPublicKey: account.identity.publicKey,
    sha256: nativeSha256,
    verify: nativeVerify,
  }
}

/** The album named `name`; a usage error naming `coffer-photos albums` when there is none. */
export async function namedAlbum(library: Library, name: string | undefined): Promise<NamedAlbum> {
  if (name === undefined) throw new UsageError('name the album (`coffer-photos albums` lists them)')
  const album = await findAlbum(library, name)
  if (album === null) throw new UsageError(`there is no album "${name}" (\`coffer-photos albums\` lists them)`)
  return album
}

/** A whole number option from 1 to `max` (e.g. --concurrency, up to 64), or `fallback` when not given. */
export function countOption(value: Invocation['values'][string], option: string, fallback: number, max = 64): number {
  if (value === undefined) return fallback
  const count = Number(value)
  if (typeof value !== 'string' || !Number.isSafeInteger(count) || count < 1 || count > max)
    throw new UsageError(`--${option} takes a whole number from 1 to ${max}`)
  return count
}
