import { sql, type ExpressionBuilder } from 'kysely'
import type { Engine } from '../port.ts'
import type { AssetCustody, CustodyBundle, CustodyStore, Receipt, ReceiptRequest } from '../port/custody.ts'
import { affected, asBuffer, type Executor } from './executor.ts'
import { NOTICE_BUNDLE_MAX, REQUESTED_CHANNEL, TAKEN_CHANNEL } from './receipt-notices.ts'
import type { ReceiptRequestsTable, ReceiptsTable, Tables } from './tables.ts'

const keyColumns = ['keyId', 'publicKey', 'privateBox', 'status', 'notBefore', 'notAfter'] as const

function receiptOf(row: ReceiptsTable): Receipt {
  return { ...row, receiptCbor: asBuffer(row.receiptCbor) }
}

function receiptRequestOf(row: ReceiptRequestsTable): ReceiptRequest {
  const { blobs, envelopeHash } = JSON.parse(row.bundle) as Pick<CustodyBundle, 'blobs' | 'envelopeHash'>
  return {
    requestId: row.requestId,
    chain: Number(row.chain),
    bundle: { assetId: row.assetId, uploadId: row.uploadId, blobs, envelopeHash },
    requestedAt: Number(row.requestedAt),
  }
}

export function custodyQueries(db: Executor, engine: Engine): CustodyStore {
  return {
    async listAttestationKeys() {
      // Oldest first; a key retired in the instant its successor began comes before it.
      const rows = await db.selectFrom('attestationKeys').select(keyColumns).orderBy('notBefore').orderBy(sql`not_after is null`).orderBy('keyId').execute()
      return rows.map((row) => ({ ...row, publicKey: asBuffer(row.publicKey), privateBox: asBuffer(row.privateBox) }))
    },

    async findAttestationKey(keyId) {
      const row = await db.selectFrom('attestationKeys').select(keyColumns).where('keyId', '=', keyId).executeTakeFirst()
      return row && { ...row, publicKey: asBuffer(row.publicKey), privateBox: asBuffer(row.privateBox) }
    },

    async lockReceiptChain(chain) {
      return db
        .updateTable('receiptChain')
        .set((eb) => ({ lastSeq: eb.ref('lastSeq') }))
        .where('id', '=', chain)
        .returning(['lastSeq', 'lastReceiptHash', 'activeKeyId'])
        .executeTakeFirstOrThrow()
    },

    async activateAttestationKey(key, now) {
      await db.updateTable('attestationKeys').set({ status: 'retired', notAfter: now }).where('status', '=', 'active').execute()
      await db
        .insertInto('attestationKeys')
        .values({ ...key, status: 'active', notBefore: now, notAfter: null })
        .execute()
      await db.updateTable('receiptChain').set({ activeKeyId: key.keyId }).execute()
    },

    async receiptChainLayout() {
      const chains = await db
        .selectFrom('receiptChain')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow()
      const issued = await db.selectFrom('receipts').select('receiptSeq').limit(1).executeTakeFirst()
      return { chains: Number(chains.count), issued: issued !== undefined }
    },

    async setReceiptChains(count) {
      await db.deleteFrom('receiptChain').where('id', '>', count).execute()
      const first = await db.selectFrom('receiptChain').select('activeKeyId').where('id', '=', 1).executeTakeFirstOrThrow()
      const rows = Array.from({ length: count - 1 }, (_, i) => ({ id: i + 2, lastSeq: 0, lastReceiptHash: null, activeKeyId: first.activeKeyId, holder: null }))
      if (rows.length > 0)
        await db
          .insertInto('receiptChain')
          .values(rows)
          .onConflict((oc) => oc.column('id').doNothing())
          .execute()
    },

    async claimReceiptChain(holder, now, until) {
      const claimable = (eb: ExpressionBuilder<Tables, 'receiptChain'>) => eb.or([eb('holder', '=', holder), eb('leaseUntil', '<', now)])
      const claimed = await db
        .updateTable('receiptChain')
        .set({ holder, leaseUntil: until })
        .where('id', '=', (eb) =>
          eb.selectFrom('receiptChain').select('id').where(claimable).orderBy(sql`case when holder = ${holder} then 0 else 1 end`).orderBy('id').limit(1),
        )
        // Again on the row itself: another instance may have claimed it since the choice was read.
        .where(claimable)
        .returning('id')
        .executeTakeFirst()
      return claimed?.id ?? null
    },

    async releaseReceiptChains(holder) {
      await db.updateTable('receiptChain').set({ holder: null, leaseUntil: 0 }).where('holder', '=', holder).execute()
    },

    async requestReceipts({ requestId, chain, bundle, requestedAt }) {
      await db
        .insertInto('receiptRequests')
        .values({
          requestId,
          chain,
          assetId: bundle.assetId,
          uploadId: bundle.uploadId,
          bundle: JSON.stringify({ blobs: bundle.blobs, envelopeHash: bundle.envelopeHash }),
          requestedAt,
        })
        // On PostgreSQL the insert tells the chain's holder, when it commits (receipt-notices.ts).
        .$if(engine === 'postgres', (insert) =>
          insert.returning(
            sql<void>`pg_notify(${REQUESTED_CHANNEL}, json_build_object('schema', current_schema(), 'request_id', request_id, 'chain', chain,
              'asset_id', asset_id, 'upload_id', upload_id, 'bundle', case when octet_length(bundle) <= ${NOTICE_BUNDLE_MAX} then bundle end,
              'requested_at', requested_at)::text)`.as('notified'),
          ),
        )
        .execute()
    },

    async pendingReceiptRequests(chain, before, limit) {
      let query = db.selectFrom('receiptRequests').selectAll()
      if (chain !== null) query = query.where('chain', '=', chain)
      if (before !== null) query = query.where('requestedAt', '<', before)
      const rows = await query.orderBy('requestedAt').orderBy('requestId').limit(limit).execute()
      return rows.map(receiptRequestOf)
    },

    async takeReceiptRequests(requestIds) {
      if (requestIds.length === 0) return []
      // On PostgreSQL each request taken tells its waiting writer, when the transaction that appends it commits.
      const taken = await db
        .deleteFrom('receiptRequests')
        .where('requestId', 'in', requestIds)
        .returning('requestId')
        .$if(engine === 'postgres', (remove) => remove.returning(sql<void>`pg_notify(${TAKEN_CHANNEL}, current_schema() || ' ' || request_id)`.as('notified')))
        .execute()
      return taken.map((row) => row.requestId)
    },

    async receiptRequestPending(requestId) {
      const row = await db.selectFrom('receiptRequests').select('requestId').where('requestId', '=', requestId).executeTakeFirst()
      return row !== undefined
    },

    async newestReceiptIssuer() {
      // The chains' heads, one receipt each: the newest of them is the newest receipt.
      const row = await db
        .selectFrom('receiptChain')
        .innerJoin('receipts', 'receipts.receiptSeq', 'receiptChain.lastSeq')
        .select('receipts.serverId')
        .orderBy('receipts.receivedAt', 'desc')
        .orderBy('receipts.receiptSeq', 'desc')
        .limit(1)
        .executeTakeFirst()
      return row?.serverId ?? null
    },

    async receiptChainHead(chain) {
      return db
        .selectFrom('receiptChain')
        .leftJoin('receipts', 'receipts.receiptSeq', 'receiptChain.lastSeq')
        .select(['receiptChain.lastSeq', 'receiptChain.lastReceiptHash', 'receiptChain.activeKeyId', 'receipts.receivedAt as lastReceivedAt'])
        .where('receiptChain.id', '=', chain)
        .executeTakeFirstOrThrow()
    },

    async appendReceiptsAfter(chain, after, receipts, lastReceiptHash) {
      const last = receipts.at(-1)
      if (last === undefined || after.activeKeyId === null) return false
      const moved = await db
        .updateTable('receiptChain')
        .set({ lastSeq: last.receiptSeq, lastReceiptHash })
        .where('id', '=', chain)
        .where('lastSeq', '=', after.lastSeq)
        .where('lastReceiptHash', after.lastReceiptHash === null ? 'is' : '=', after.lastReceiptHash)
        .where('activeKeyId', '=', after.activeKeyId)
        .executeTakeFirst()
      if (affected(moved) !== 1) return false
      await db
        .insertInto('receipts')
        .values([...receipts])
        .execute()
      return true
    },

    async appendReceipts(chain, receipts, lastReceiptHash) {
      const last = receipts.at(-1)
      if (last === undefined) return
      await db
        .insertInto('receipts')
        .values([...receipts])
        .execute()
      await db.updateTable('receiptChain').set({ lastSeq: last.receiptSeq, lastReceiptHash }).where('id', '=', chain).execute()
    },

    async listReceipts(assetId, after, limit) {
      const rows = await db
        .selectFrom('receipts')
        .selectAll()
        .where('assetId', '=', assetId)
        .where('receiptSeq', '>', after)
        .orderBy('receiptSeq')
        .limit(limit)
        .execute()
      return rows.map(receiptOf)
    },

    async albumReceipts(albumId, throughSeq, after, limit) {
      let query = db
        .selectFrom('assets')
        .innerJoin('receipts', 'receipts.assetId', 'assets.assetId')
        .selectAll('receipts')
        .where('assets.albumId', '=', albumId)
        .where('receipts.receiptSeq', '<=', throughSeq)
      if (after !== null) {
        // The range starts at the cursor's asset (an index range on assets_album), then skips what it already gave.
        query = query
          .where('assets.assetId', '>=', after.assetId)
          .where((eb) => eb.or([eb('assets.assetId', '>', after.assetId), eb('receipts.receiptSeq', '>', after.receiptSeq)]))
      }
      const rows = await query.orderBy('assets.assetId').orderBy('receipts.receiptSeq').limit(limit).execute()
      return rows.map(receiptOf)
    },

    async reserveDeepScan(userId, bytes, now, budget, windowMs) {
      if (bytes > budget) return false
      const ended = sql<boolean>`deep_scan_budgets.window_started_at + ${windowMs} <= ${now}`
      const result = await db
        .insertInto('deepScanBudgets')
        .values({ userId, windowStartedAt: now, bytesUsed: bytes })
        .onConflict((oc) =>
          oc
            .column('userId')
            .doUpdateSet({
              windowStartedAt: sql<number>`case when ${ended} then ${now} else deep_scan_budgets.window_started_at end`,
              bytesUsed: sql<number>`case when ${ended} then ${bytes} else deep_scan_budgets.bytes_used + ${bytes} end`,
            })
            .where(sql<boolean>`${ended} or deep_scan_budgets.bytes_used + ${bytes} <= ${budget}`),
        )
        .executeTakeFirst()
      return affected(result) === 1
    },

    async assetCustody(ownerId, assetIds) {
      const custody = new Map<string, AssetCustody>()
      if (assetIds.length === 0) return custody
      const rows = await db
        .selectFrom('assets')
        .leftJoin('assetBlobs', (join) => join.onRef('assetBlobs.assetId', '=', 'assets.assetId').on('assetBlobs.supersededAt', 'is', null))
        .select(['assets.assetId', 'assets.takenDownAt', 'assetBlobs.hash', 'assetBlobs.role'])
        .where('assets.ownerId', '=', ownerId)
        .where('assets.assetId', 'in', assetIds)
        .where('assets.deletedAt', 'is', null)
        .execute()
      for (const row of rows) {
        const entry = custody.get(row.assetId) ?? { takenDown: row.takenDownAt !== null, roles: new Map() }
        if (row.hash !== null && row.role !== null) (entry.roles as Map<string, typeof row.role>).set(row.hash, row.role)
        custody.set(row.assetId, entry)
      }
      return custody
    },

    async verifiableAssetOwners(userId, assetIds) {
      if (assetIds.length === 0) return new Map()
      const rows = await db
        .selectFrom('assets')
        .innerJoin('albums', 'albums.albumId', 'assets.albumId')
        .leftJoin('albumMembers', (join) =>
          join.onRef('albumMembers.albumId', '=', 'assets.albumId').on('albumMembers.userId', '=', userId).on('albumMembers.state', '=', 'active'),
        )
        .select(['assets.assetId', 'assets.ownerId'])
        .where('assets.assetId', 'in', assetIds)
        .where('assets.deletedAt', 'is', null)
        .where((eb) => eb.or([eb('assets.ownerId', '=', userId), eb('albums.ownerId', '=', userId), eb('albumMembers.userId', 'is not', null)]))
        .execute()
      return new Map(rows.map((row) => [row.assetId, row.ownerId]))
    },

    async liveReferencedHashes(ownerId, hashes) {
      if (hashes.length === 0) return new Set()
      const rows = await db
        .selectFrom('assetBlobs')
        .select('hash')
        .distinct()
        .where('ownerId', '=', ownerId)
        .where('hash', 'in', hashes)
        .where('supersededAt', 'is', null)
        .execute()
      return new Set(rows.map((row) => row.hash))
    },
  }
}
