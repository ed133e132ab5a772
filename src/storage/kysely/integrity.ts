// Read-only checks for `coffer fsck` and `coffer backup`: the rows that name blob files, the
// receipt chain in order, and statements that find rows disagreeing with one another. Each
// finding query is bounded: a database that is badly damaged reports its first rows of each kind.
import { sql } from 'kysely'
import type { ConsistencyFinding, IntegrityStore } from '../port/integrity.ts'
import { asBuffer, type Executor } from './executor.ts'

const FINDINGS_PER_KIND = 1000
// Raw statements keep snake_case in SQL; the CamelCasePlugin hands their rows back in camelCase.

const n = (value: unknown): number => Number(value)

export function integrityQueries(db: Executor): IntegrityStore {
  const rows = async <T>(query: ReturnType<typeof sql<T>>): Promise<T[]> => (await query.execute(db)).rows

  return {
    async namedBlobsAfter(after, limit) {
      const found = await db
        .selectFrom('blobs')
        .select((eb) => ['hash', eb.fn.min('size').as('minSize'), eb.fn.max('size').as('maxSize')])
        .where('hash', '>', after)
        .groupBy('hash')
        .orderBy('hash')
        .limit(limit)
        .execute()
      return found.map((row) => ({ hash: row.hash, minSize: n(row.minSize), maxSize: n(row.maxSize) }))
    },

    async blobRowsNaming(hashes) {
      if (hashes.length === 0) return new Set()
      return new Set((await db.selectFrom('blobs').select('hash').distinct().where('hash', 'in', hashes).execute()).map((row) => row.hash))
    },

    async queuedAmong(hashes) {
      if (hashes.length === 0) return new Set()
      return new Set((await db.selectFrom('blobReclaims').select('hash').where('hash', 'in', hashes).execute()).map((row) => row.hash))
    },

    async receiptsAfter(afterSeq, limit) {
      const found = await db.selectFrom('receipts').selectAll().where('receiptSeq', '>', afterSeq).orderBy('receiptSeq').limit(limit).execute()
      return found.map((row) => ({
        ...row,
        receiptSeq: n(row.receiptSeq),
        size: n(row.size),
        receivedAt: n(row.receivedAt),
        receiptCbor: asBuffer(row.receiptCbor),
      }))
    },

    async readReceiptChains() {
      const heads = await db.selectFrom('receiptChain').select(['lastSeq', 'lastReceiptHash', 'activeKeyId']).orderBy('id').execute()
      return heads.map((head) => ({ ...head, lastSeq: n(head.lastSeq) }))
    },

    async consistencyFindings() {
      const findings: ConsistencyFinding[] = []
      // An asset's chain head is the hash of the last manifest its album applied for it.
      for (const row of await rows(sql<{ assetId: string; chainHead: string; manifestHash: string | null }>`
        select a.asset_id, a.chain_head, o.manifest_hash from assets a
        left join album_ops o on o.album_id = a.album_id and o.asset_id = a.asset_id
          and o.sync_seq = (select max(x.sync_seq) from album_ops x where x.album_id = a.album_id and x.asset_id = a.asset_id)
        where o.manifest_hash is null or o.manifest_hash <> a.chain_head
        order by a.asset_id limit ${FINDINGS_PER_KIND}`)) {
        findings.push({ kind: 'asset_head', assetId: row.assetId, chainHead: row.chainHead, lastManifestHash: row.manifestHash })
      }
      // A live asset's original is the original of its live bundle (a deleted one has none).
      for (const row of await rows(sql<{ assetId: string; originalHash: string; liveOriginal: string | null }>`
        select a.asset_id, a.original_hash,
          (select min(b.hash) from asset_blobs b where b.asset_id = a.asset_id and b.superseded_at is null and b.role = 'original') as live_original
        from assets a
        where a.deleted_at is null and not exists (select 1 from asset_blobs b where b.asset_id = a.asset_id and b.superseded_at is null and b.role = 'original' and b.hash = a.original_hash)
        order by a.asset_id limit ${FINDINGS_PER_KIND}`)) {
        findings.push({ kind: 'asset_original', assetId: row.assetId, originalHash: row.originalHash, liveOriginal: row.liveOriginal })
      }
      // A lifecycle write closes the session it applies, in its transaction.
      for (const row of await rows(sql<{ albumId: string; syncSeq: unknown; uploadId: string }>`
        select o.album_id, o.sync_seq, o.upload_id from album_ops o join upload_sessions s on s.upload_id = o.upload_id
        where s.closed_at is null order by o.album_id, o.sync_seq limit ${FINDINGS_PER_KIND}`)) {
        findings.push({ kind: 'op_session_open', albumId: row.albumId, syncSeq: n(row.syncSeq), uploadId: row.uploadId })
      }
      // An uploaded blob a bundle references was declared by the bundle's session (while that session is kept).
      for (const row of await rows(sql<{ assetId: string; uploadId: string; hash: string }>`
        select r.asset_id, r.upload_id, r.hash from asset_blobs r join upload_sessions s on s.upload_id = r.upload_id
        where r.role in ('original', 'derivative') and not exists (select 1 from upload_blobs u where u.upload_id = r.upload_id and u.hash = r.hash)
        order by r.asset_id, r.hash limit ${FINDINGS_PER_KIND}`)) {
        findings.push({ kind: 'reference_undeclared', assetId: row.assetId, uploadId: row.uploadId, hash: row.hash })
      }
      // A reference has its owner's row, of the same size.
      for (const row of await rows(sql<{ assetId: string; hash: string; referenceSize: unknown; blobSize: unknown }>`
        select r.asset_id, r.hash, r.size as reference_size, b.size as blob_size from asset_blobs r
        left join blobs b on b.owner_id = r.owner_id and b.hash = r.hash
        where b.size is null or b.size <> r.size order by r.asset_id, r.hash limit ${FINDINGS_PER_KIND}`)) {
        findings.push({
          kind: 'reference_size',
          assetId: row.assetId,
          hash: row.hash,
          referenceSize: n(row.referenceSize),
          blobSize: row.blobSize === null ? null : n(row.blobSize),
        })
      }
      // Every blob of every bundle was receipted (replaced bundles keep their receipts too), or
      // its bundle's receipts are requested from the chain's holder (pending: decision 0073).
      for (const row of await rows(sql<{ assetId: string; uploadId: string; hash: string; role: string }>`
        select r.asset_id, r.upload_id, r.hash, r.role from asset_blobs r
        where not exists (select 1 from receipts c where c.asset_id = r.asset_id and c.upload_id = r.upload_id
          and c.ciphertext_hash = r.hash and c.blob_role = r.role and c.size = r.size)
        and not exists (select 1 from receipt_requests q where q.asset_id = r.asset_id and q.upload_id = r.upload_id)
        order by r.asset_id, r.hash limit ${FINDINGS_PER_KIND}`)) {
        findings.push({ kind: 'reference_unreceipted', assetId: row.assetId, uploadId: row.uploadId, hash: row.hash, role: row.role })
      }
      // An account's stored bytes are the sizes of its blob rows.
      for (const row of await rows(sql<{ userId: string; storedBytes: unknown; actual: unknown }>`
        select t.user_id, t.stored_bytes, t.actual from (
          select s.user_id, s.stored_bytes, coalesce((select sum(b.size) from blobs b where b.owner_id = s.user_id), 0) as actual from account_storage s
          union all
          select b.owner_id as user_id, null as stored_bytes, sum(b.size) as actual from blobs b
          where not exists (select 1 from account_storage s where s.user_id = b.owner_id) group by b.owner_id
        ) t where t.stored_bytes is null or t.stored_bytes <> t.actual order by t.user_id limit ${FINDINGS_PER_KIND}`)) {
        findings.push({ kind: 'stored_bytes', userId: row.userId, recorded: row.storedBytes === null ? null : n(row.storedBytes), actual: n(row.actual) })
      }
      return findings
    },
  }
}
