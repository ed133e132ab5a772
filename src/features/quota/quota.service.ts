// What the caller uses of the storage quota (docs/decisions/0008-storage-quota.md).
import type { Deps } from '../../deps.ts'
import type { StorageUsage } from '../../storage/port/storage-usage.ts'
import type { Caller } from '../context.ts'

export function storageUsage(deps: Deps, caller: Caller): Promise<StorageUsage> {
  return deps.storage.storageUsage(caller.userId, deps.clock.now())
}
