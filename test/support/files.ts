// Stored blobs seen from outside, as fsck would: which of them no row owns; and a file's hash
// and presence, as the coffer-photos tests check what a restore or free-up left.
import { createHash } from 'node:crypto'
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import type { DatabaseTarget } from '../../src/storage/kysely/storage.ts'
import { readRows } from './database.ts'

/** Hashes of the blob files under a blob folder's `root` (tmp/ excluded: writes in progress are not blobs). */
export async function blobFilesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile() && path.relative(root, entry.parentPath).split(path.sep)[0] !== 'tmp')
    .map((entry) => entry.name)
    .sort()
}

/**
 * Of the `stored` hashes, those no row owns: named by no owner row (`blobs`) and declared by no
 * upload session still open at `now` (its uploaded blobs and a lifecycle write's extras). What a
 * crash must not leave behind once a maintenance pass has run.
 */
export async function unownedBlobs(stored: readonly string[], database: DatabaseTarget, now: number): Promise<string[]> {
  const named = await readRows(
    database,
    `select hash from blobs
     union select b.hash from upload_blobs b join upload_sessions s on s.upload_id = b.upload_id where s.closed_at is null and s.expires_at > ${now}
     union select e.hash from upload_extras e join upload_sessions s on s.upload_id = e.upload_id where s.closed_at is null and s.expires_at > ${now}`,
  )
  const owned = new Set(named.map((row) => String(row.hash)))
  return stored.filter((hash) => !owned.has(hash))
}

/** A file's SHA-256 in hex. */
export const fileSha256 = async (file: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex')

/** Whether anything is at the path. */
export const fileExists = (file: string): Promise<boolean> =>
  stat(file).then(
    () => true,
    () => false,
  )
