import type { Executor } from './executor.ts'

/**
 * Queues hashes whose files a row stops naming, in the transaction that stops it, for garbage
 * collection to look at again (a hash queued already moves to a new generation).
 */
export async function queueReclaims(db: Executor, hashes: readonly string[]): Promise<void> {
  const unique = [...new Set(hashes)]
  if (unique.length === 0) return
  await db
    .insertInto('blobReclaims')
    .values(unique.map((hash) => ({ hash, generation: 0 })))
    .onConflict((oc) => oc.column('hash').doUpdateSet((eb) => ({ generation: eb('blobReclaims.generation', '+', 1) })))
    .execute()
}
