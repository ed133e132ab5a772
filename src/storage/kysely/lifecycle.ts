import type { AppliedOp, LifecycleStore, LiveBlob } from '../port.ts'
import { affected, asBuffer, type Executor } from './executor.ts'
import type { AlbumOpsTable } from './tables.ts'
import { openDeclarations } from './uploads.ts'

const opColumns = ['albumId', 'syncSeq', 'manifestHash', 'assetId', 'action', 'manifestCbor', 'metadataBlobHash', 'uploadId', 'appliedAt'] as const

function opOf(row: AlbumOpsTable): AppliedOp {
  return { ...row, manifestCbor: asBuffer(row.manifestCbor) }
}

export function lifecycleQueries(db: Executor): LifecycleStore {
  return {
    async findAppliedOp(albumId, manifestHash) {
      const row = await db.selectFrom('albumOps').select(opColumns).where('albumId', '=', albumId).where('manifestHash', '=', manifestHash).executeTakeFirst()
      return row && opOf(row)
    },

    async findAsset(assetId) {
      return db
        .selectFrom('assets')
        .select(['assetId', 'albumId', 'ownerId', 'chainHead', 'originalHash', 'retentionUntil', 'deletedAt'])
        .where('assetId', '=', assetId)
        .executeTakeFirst()
    },

    async insertAsset(asset, now) {
      const result = await db
        .insertInto('assets')
        .values({ ...asset, createdAt: now, updatedAt: now, takenDownAt: null, legalHoldAt: null, deletedAt: null })
        .onConflict((oc) => oc.column('assetId').doNothing())
        .executeTakeFirst()
      return affected(result) === 1
    },

    async advanceAsset(assetId, head, now) {
      await db.updateTable('assets').set({ ...head, updatedAt: now }).where('assetId', '=', assetId).execute()
    },

    async endAsset(assetId, chainHead, now) {
      await db.updateTable('assets').set({ chainHead, deletedAt: now, updatedAt: now }).where('assetId', '=', assetId).execute()
    },

    async supersedeBundle(assetId, now) {
      await db.updateTable('assetBlobs').set({ supersededAt: now }).where('assetId', '=', assetId).where('supersededAt', 'is', null).execute()
    },

    async insertBundle(assetId, owner, refs) {
      await db.insertInto('assetBlobs').values(refs.map((ref) => ({ assetId, ...owner, ...ref, supersededAt: null }))).execute()
    },

    async insertAppliedOp(op) {
      await db.insertInto('albumOps').values(op).execute()
    },

    async feed(albumId, afterSeq, limit) {
      const rows = await db.selectFrom('albumOps').select(opColumns).where('albumId', '=', albumId).where('syncSeq', '>', afterSeq).orderBy('syncSeq').limit(limit).execute()
      return rows.map(opOf)
    },

    async findLiveBlobs(ownerId, hashes) {
      const live = new Map<string, LiveBlob>()
      if (hashes.length === 0) return live
      const refs = await db
        .selectFrom('assetBlobs')
        .innerJoin('assets', 'assets.assetId', 'assetBlobs.assetId')
        .select(['assetBlobs.hash', 'assetBlobs.size', 'assetBlobs.role', 'assets.takenDownAt'])
        .where('assetBlobs.ownerId', '=', ownerId)
        .where('assetBlobs.hash', 'in', hashes)
        .where('assetBlobs.supersededAt', 'is', null)
        .execute()
      // Several live assets may reference one blob: withheld only when every one is taken down.
      for (const ref of refs) {
        const seen = live.get(ref.hash)
        live.set(ref.hash, { size: ref.size, withheld: ref.takenDownAt !== null && (seen?.withheld ?? true), provenance: ref.role === 'provenance' || (seen?.provenance ?? false) })
      }
      return live
    },

    async heldManifests(hashes, ownerId) {
      if (hashes.length === 0) return new Map()
      // Through the owner's albums: album_ops is indexed by (album_id, manifest_hash).
      let query = db
        .selectFrom('blobs')
        .innerJoin('albums', 'albums.ownerId', 'blobs.ownerId')
        .innerJoin('albumOps', (join) => join.onRef('albumOps.albumId', '=', 'albums.albumId').onRef('albumOps.manifestHash', '=', 'blobs.hash'))
        .select(['blobs.hash', 'albumOps.manifestCbor'])
        .where('blobs.hash', 'in', hashes)
      if (ownerId !== undefined) query = query.where('blobs.ownerId', '=', ownerId)
      return new Map((await query.execute()).map((row) => [row.hash, asBuffer(row.manifestCbor)]))
    },

    async blobHashesStillNeeded(hashes, now) {
      if (hashes.length === 0) return new Set()
      const owned = await db.selectFrom('blobs').select('hash').distinct().where('hash', 'in', hashes).execute()
      const declared = await openDeclarations(db, now).select('declared.hash').distinct().where('declared.hash', 'in', hashes).execute()
      return new Set([...owned, ...declared].map((row) => row.hash))
    },
  }
}
