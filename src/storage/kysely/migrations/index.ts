// Every migration, listed statically and in order. Forward-only: a landed migration is never
// edited; a change is a new file.
import type { Kysely, Migration, MigrationProvider } from 'kysely'
import type { Engine } from '../../port.ts'
import { columnTypes, type MigrationStep } from './column-types.ts'
import { up as accountsAndSessions } from './0001-accounts-and-sessions.ts'
import { up as devicesAndEscrow } from './0002-devices-and-escrow.ts'
import { up as albumsAndBlobs } from './0003-albums-and-blobs.ts'
import { up as custodyAndModeration } from './0004-custody-and-moderation.ts'
import { up as uploadExtras } from './0005-upload-extras.ts'
import { up as unknownSignIns } from './0006-unknown-sign-ins.ts'
import { up as attemptBudgets } from './0007-attempt-budgets.ts'
import { up as storageUsage } from './0008-storage-usage.ts'
import { up as blobReclaims } from './0009-blob-reclaims.ts'
import { up as gcHolds } from './0010-gc-holds.ts'
import { up as assetDeletion } from './0011-asset-deletion.ts'
import { up as assetsByOwner } from './0012-assets-by-owner.ts'
import { up as operatorLog } from './0013-operator-log.ts'
import { up as accountDeletion } from './0014-account-deletion.ts'
import { up as assetsByAlbum } from './0015-assets-by-album.ts'
import { up as recoveryCodes } from './0016-recovery-codes.ts'
import { up as uploadParts } from './0017-upload-parts.ts'
import { up as relayMailboxCounts } from './0018-relay-mailbox-counts.ts'
import { up as batchDownloadSlots } from './0019-batch-download-slots.ts'
import { up as trash } from './0020-trash.ts'
import { up as albumMembers } from './0021-album-members.ts'
import { up as manifestsByHash } from './0022-manifests-by-hash.ts'
import { up as memberKeyrings } from './0023-member-keyrings.ts'
import { up as partners } from './0024-partners.ts'
import { up as links } from './0025-links.ts'
import { up as receiptChainLeases } from './0026-receipt-chain-leases.ts'
import { up as receiptRequests } from './0027-receipt-requests.ts'

const steps: ReadonlyArray<readonly [string, MigrationStep]> = [
  ['0001-accounts-and-sessions', accountsAndSessions],
  ['0002-devices-and-escrow', devicesAndEscrow],
  ['0003-albums-and-blobs', albumsAndBlobs],
  ['0004-custody-and-moderation', custodyAndModeration],
  ['0005-upload-extras', uploadExtras],
  ['0006-unknown-sign-ins', unknownSignIns],
  ['0007-attempt-budgets', attemptBudgets],
  ['0008-storage-usage', storageUsage],
  ['0009-blob-reclaims', blobReclaims],
  ['0010-gc-holds', gcHolds],
  ['0011-asset-deletion', assetDeletion],
  ['0012-assets-by-owner', assetsByOwner],
  ['0013-operator-log', operatorLog],
  ['0014-account-deletion', accountDeletion],
  ['0015-assets-by-album', assetsByAlbum],
  ['0016-recovery-codes', recoveryCodes],
  ['0017-upload-parts', uploadParts],
  ['0018-relay-mailbox-counts', relayMailboxCounts],
  ['0019-batch-download-slots', batchDownloadSlots],
  ['0020-trash', trash],
  ['0021-album-members', albumMembers],
  ['0022-manifests-by-hash', manifestsByHash],
  ['0023-member-keyrings', memberKeyrings],
  ['0024-partners', partners],
  ['0025-links', links],
  ['0026-receipt-chain-leases', receiptChainLeases],
  ['0027-receipt-requests', receiptRequests],
]

export function migrationProvider(engine: Engine): MigrationProvider {
  const types = columnTypes(engine)
  return {
    getMigrations: async () => Object.fromEntries(steps.map(([name, step]): [string, Migration] => [name, { up: (db: Kysely<unknown>) => step(db, types) }])),
  }
}
