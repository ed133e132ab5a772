// The signed device directory (SPEC.md "Signed device directory", API.md sections 4 and 5):
// stored exactly as received, read only for `directory_version`, bound to one identity key.
import { createHash } from 'node:crypto'
import { readTopLevelFields, unsignedField } from '../../codec/cbor.ts'
import { parseHybridPublicKey } from '../../crypto/hybrid.ts'
import type { Deps } from '../../deps.ts'
import { isFresh } from '../../domain/session.ts'
import { AppError } from '../../errors.ts'
import type { Directory } from '../../storage/port/directory.ts'
import type { Caller } from '../context.ts'
import { ensureNotSuspended } from '../moderation/moderation.service.ts'

export { DIRECTORY_MAX_BYTES } from '../../contract/devices.ts'

/** The identity key from its header: standard base64 of a 1984-byte hybrid public key. */
function identityKeyOf(header: string | undefined): Buffer {
  const key = header === undefined ? null : Buffer.from(header, 'base64')
  if (key === null || key.toString('base64') !== header || parseHybridPublicKey(key) === null) {
    throw new AppError(
      'error.directory.identity_key_invalid',
      'X-Service-Identity-Key must be standard base64 of the 1984-byte hybrid public key (Ed25519 | ML-DSA-65)',
    )
  }
  return key
}

function directoryOf(body: Buffer): Directory {
  // Only well-formedness and this one field are read: every other byte is opaque.
  const fields = readTopLevelFields(body, ['directory_version'])
  const version = fields === null ? null : unsignedField(fields, 'directory_version')
  if (version === null) {
    throw new AppError(
      'error.directory.malformed',
      'The body must be one CBOR item whose top level is a map with an unsigned integer under "directory_version"',
    )
  }
  return { version, body, etag: `"${createHash('sha256').update(body).digest('hex')}"` }
}

export async function publishDirectory(deps: Deps, caller: Caller, identityKeyHeader: string | undefined, body: Buffer): Promise<number> {
  ensureNotSuspended(caller)
  const identityKey = identityKeyOf(identityKeyHeader)
  const directory = directoryOf(body)
  const now = deps.clock.now()
  await deps.storage.transaction(async (tx) => {
    const binding = await tx.bindIdentityKey(caller.userId, identityKey)
    if (binding === 'mismatch') throw new AppError('error.directory.identity_key_mismatch', 'This account is bound to another identity key')
    // Binding the key decides who can later revoke every session (SPEC: a stolen access token
    // can revoke only itself), so it needs a recent password proof, as adding a device does.
    if (binding === 'bound' && !isFresh(caller.authenticatedAt, now, deps.config.freshnessWindowS)) {
      throw new AppError('error.auth.reauthentication_required', 'Prove the password again (reauthenticate) before binding the account’s identity key')
    }
    const outcome = await tx.publishDirectoryIfNewer(caller.userId, directory, now)
    if (!outcome.stored) {
      throw new AppError('error.directory.version_conflict', `directory_version must exceed the stored ${outcome.storedVersion}; re-sign above it`, {
        extensions: { submitted: directory.version, stored: outcome.storedVersion },
      })
    }
  })
  return directory.version
}

export async function fetchDirectory(deps: Deps, userId: string): Promise<Directory> {
  const directory = await deps.storage.findDirectory(userId)
  if (directory === undefined) throw new AppError('error.not_found', 'No directory is published for this user')
  return directory
}
