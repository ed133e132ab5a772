import type { Kysely, Transaction } from 'kysely'
import type { Tables } from './tables.ts'

/** A database handle or an open transaction: per-aggregate queries run on either. */
export type Executor = Kysely<Tables> | Transaction<Tables>

/** SQLite returns Uint8Array for BLOB, pg returns Buffer for bytea; services get Buffer. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

export function affected(result: {
  numAffectedRows?: bigint
  numUpdatedRows?: bigint
  numDeletedRows?: bigint
  numInsertedOrUpdatedRows?: bigint | undefined
}): number {
  return Number(result.numUpdatedRows ?? result.numDeletedRows ?? result.numInsertedOrUpdatedRows ?? result.numAffectedRows ?? 0n)
}
