// Blob download (API.md section 6): the bytes of a blob a live asset of the caller references.
import type { Readable } from 'node:stream'
import type { ByteRange } from '../../blob-store/port.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { Caller } from '../context.ts'

export async function downloadableBlob(deps: Deps, caller: Caller, hash: string): Promise<{ size: number; open: (range?: ByteRange) => Promise<Readable> }> {
  const blob = await deps.storage.findLiveBlob(caller.userId, hash)
  if (blob === undefined) throw new AppError('error.not_found', 'No live asset of this account references that blob')
  if (blob.withheld) throw new AppError('error.moderation.taken_down', 'The asset holding this blob was taken down')
  return { size: blob.size, open: (range) => deps.blobs.open(hash, range) }
}
