import type { QueryCreator } from 'kysely'
import type { Engine } from '../port.ts'
import type { AppliedOp, LifecycleStore, LiveBlob } from '../port/lifecycle.ts'
import { asBuffer, type Executor } from './executor.ts'
import type { AlbumOpsTable, Tables } from './tables.ts'
import { openDeclarations } from './uploads.ts'

const opColumns = ['albumId', 'syncSeq', 'manifestHash', 'assetId', 'action', 'manifestCbor', 'metadataBlobHash', 'uploadId', 'appliedAt'] as const

function opOf(row: AlbumOpsTable): AppliedOp {
  return { ...row, manifestCbor: asBuffer(row.manifestCbor) }
}

/** Marks the asset's live bundle as replaced. */
function supersede(qb: QueryCreator<Tables>, assetId: string, now: number) {
  return qb.updateTable('assetBlobs').set({ supersededAt: now }).where('assetId', '=', assetId).where('supersededAt', 'is', null).returning('assetId')
}

export function lifecycleQueries(db: Executor, engine: Engine): LifecycleStore {
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

    async indexWrite({ asset, bundle, op }, now) {
      const assetId = op.assetId
      const created = 'created' in asset ? { ...asset.created, createdAt: now, updatedAt: now, takenDownAt: null, legalHoldAt: null, deletedAt: null } : null
      const { chainHead, originalHash, retentionUntil } = 'advanced' in asset ? asset.advanced : asset.created
      const head = { chainHead, originalHash, retentionUntil, updatedAt: now }
      // Their keys are new (a sync_seq just taken): only a create that lost to an existing asset
      // could meet rows, and that write is rolled back.
      const references = bundle.refs.map((ref) => ({
        assetId,
        ownerId: bundle.ownerId,
        syncSeq: bundle.syncSeq,
        uploadId: bundle.uploadId,
        ...ref,
        supersededAt: null,
      }))
      if (engine === 'postgres') {
        // One statement, one round trip. Its WITHs see the rows as they were before it: the
        // replaced bundle's update never meets the new references (a create's finds none).
        const withAsset =
          created === null
            ? db.with('asset', (qb) => qb.updateTable('assets').set(head).where('assetId', '=', assetId).returning('assetId'))
            : db.with('asset', (qb) =>
                qb
                  .insertInto('assets')
                  .values(created)
                  .onConflict((oc) => oc.doNothing())
                  .returning('assetId'),
              )
        const row = await withAsset
          .with('superseded', (qb) => qb.updateTable('assetBlobs').set({ supersededAt: now }).where('assetId', '=', assetId).where('supersededAt', 'is', null))
          .with('bundle', (qb) =>
            qb
              .insertInto('assetBlobs')
              .values(references)
              .onConflict((oc) => oc.doNothing()),
          )
          .insertInto('albumOps')
          .values(op)
          .returning((eb) =>
            eb
              .selectFrom('asset')
              .select((inner) => inner.fn.countAll<number>().as('indexed'))
              .as('indexed'),
          )
          .executeTakeFirstOrThrow()
        return Number(row.indexed) === 1
      }
      if (created !== null) {
        if (
          (await db
            .insertInto('assets')
            .values(created)
            .onConflict((oc) => oc.doNothing())
            .returning('assetId')
            .executeTakeFirst()) === undefined
        )
          return false
      } else {
        await supersede(db, assetId, now).execute()
        await db.updateTable('assets').set(head).where('assetId', '=', assetId).execute()
      }
      await db
        .insertInto('assetBlobs')
        .values(references)
        .onConflict((oc) => oc.doNothing())
        .execute()
      await db.insertInto('albumOps').values(op).execute()
      return true
    },

    async endAsset(assetId, chainHead, now) {
      await db.updateTable('assets').set({ chainHead, deletedAt: now, updatedAt: now }).where('assetId', '=', assetId).execute()
    },

    async supersedeBundle(assetId, now) {
      await supersede(db, assetId, now).execute()
    },

    async insertAppliedOp(op) {
      await db.insertInto('albumOps').values(op).execute()
    },

    async feed(albumId, afterSeq, limit, linkId) {
      let query = db.selectFrom('albumOps').select(opColumns).where('albumId', '=', albumId).where('syncSeq', '>', afterSeq)
      if (linkId !== undefined) query = query.where('assetId', 'in', db.selectFrom('albumLinkAssets').select('assetId').where('linkId', '=', linkId))
      const rows = await query.orderBy('syncSeq').limit(limit).execute()
      return rows.map(opOf)
    },

    async findLiveBlobs(readerId, hashes) {
      if (hashes.length === 0) return new Map()
      const refs = await liveRefs(db, hashes)
        .where((eb) =>
          eb.or([
            eb('assets.albumId', 'in', eb.selectFrom('albums').select('albumId').where('ownerId', '=', readerId)),
            eb('assets.albumId', 'in', eb.selectFrom('albumMembers').select('albumId').where('userId', '=', readerId).where('state', '=', 'active')),
          ]),
        )
        .execute()
      return liveBlobsOf(refs)
    },

    async findLinkBlobs(link, hashes) {
      if (hashes.length === 0) return new Map()
      let query = liveRefs(db, hashes).where('assets.albumId', '=', link.albumId)
      if (link.selection) query = query.where('assets.assetId', 'in', db.selectFrom('albumLinkAssets').select('assetId').where('linkId', '=', link.linkId))
      // Without downloads, an original only where it is what the photo is shown from: no preview
      // beside its thumbnail (a small photo), or no derivative at all (a video).
      if (!link.downloads)
        query = query.where((eb) =>
          eb.or([
            eb('assetBlobs.role', '!=', 'original'),
            eb(
              eb
                .selectFrom('assetBlobs as shown')
                .select((shown) => shown.fn.countAll<number>().as('count'))
                .whereRef('shown.assetId', '=', 'assets.assetId')
                .where('shown.role', '=', 'derivative')
                .where('shown.supersededAt', 'is', null),
              '<',
              2,
            ),
          ]),
        )
      return liveBlobsOf(await query.execute())
    },

    async heldManifests(hashes, ownerId) {
      if (hashes.length === 0) return new Map()
      // By hash (album_ops_by_manifest_hash): in a shared album the writer, who owns the blob, is not the album's owner.
      let query = db
        .selectFrom('blobs')
        .innerJoin('albumOps', 'albumOps.manifestHash', 'blobs.hash')
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

/** The live references of these blob hashes, with what deciding the answer takes; the caller narrows them to what the reader may read. */
function liveRefs(db: Executor, hashes: readonly string[]) {
  return db
    .selectFrom('assetBlobs')
    .innerJoin('assets', 'assets.assetId', 'assetBlobs.assetId')
    .select(['assetBlobs.hash', 'assetBlobs.size', 'assetBlobs.role', 'assets.takenDownAt'])
    .where('assetBlobs.hash', 'in', hashes)
    .where('assetBlobs.supersededAt', 'is', null)
}

/** By hash; several live assets may reference one blob: withheld only when every one is taken down. */
function liveBlobsOf(refs: readonly { hash: string; size: number; role: string; takenDownAt: number | null }[]): Map<string, LiveBlob> {
  const live = new Map<string, LiveBlob>()
  for (const ref of refs) {
    const seen = live.get(ref.hash)
    live.set(ref.hash, {
      size: ref.size,
      withheld: ref.takenDownAt !== null && (seen?.withheld ?? true),
      provenance: ref.role === 'provenance' || (seen?.provenance ?? false),
    })
  }
  return live
}
