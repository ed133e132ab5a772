// Storage verification (SPEC.md "Verify storage", API.md section 7): may the client stop
// holding these blobs? Structural verdicts from the database and the blob store; with `deep`,
// the bytes are re-read and re-hashed within the account's budget. A pure read apart from the
// budget.
import { createHash } from 'node:crypto'
import type { Static } from 'typebox'
import type { StorageVerifyRequest } from '../../contract/custody.ts'
import type { Deps } from '../../deps.ts'
import { UNKNOWN_BLOB, blobVerdict, isDurable, type BlobVerdict, type DeepResult } from '../../domain/verification.ts'
import { AppError } from '../../errors.ts'
import type { Caller } from '../context.ts'

export interface AssetVerdict {
  readonly assetId: string
  readonly durable: boolean
  readonly blobs: readonly (BlobVerdict & { hash: string })[]
  readonly checkedAt: number
}

/** The SHA-256 of the bytes held: the database's, or the store's read again. */
async function rehash(deps: Deps, hash: string, heldBytes: Buffer | undefined): Promise<string> {
  return heldBytes === undefined ? deps.blobs.sha256(hash) : createHash('sha256').update(heldBytes).digest('hex')
}

/**
 * Verdicts for the assets of the request, each judged against its uploader's blobs: the caller's
 * own, and in an album the caller owns or is a member of, the member's who added it (decision
 * 0067: a member verifies what it reads); any other asset is unknown. A deep scan spends the
 * caller's budget.
 */
export async function verifyStorage(deps: Deps, caller: Caller, request: Static<typeof StorageVerifyRequest>): Promise<AssetVerdict[]> {
  const { maxAssets, maxHashes } = deps.config.verification
  const declared = request.assets.reduce((count, asset) => count + asset.blob_hashes.length, 0)
  if (request.assets.length > maxAssets || declared > maxHashes) {
    throw new AppError('error.request.invalid', `At most ${maxAssets} assets and ${maxHashes} hashes per request`)
  }
  const uploaders = await deps.storage.verifiableAssetOwners(
    caller.userId,
    request.assets.map((asset) => asset.asset_id),
  )
  const byUploader = new Map<string, Static<typeof StorageVerifyRequest>['assets'][number][]>()
  for (const asset of request.assets) {
    const uploader = uploaders.get(asset.asset_id) ?? caller.userId
    byUploader.set(uploader, [...(byUploader.get(uploader) ?? []), asset])
  }
  const scanned = new Map<string, DeepResult>()
  const judged = new Map<Static<typeof StorageVerifyRequest>['assets'][number], AssetVerdict>()
  for (const [uploader, assets] of byUploader)
    for (const [asset, verdict] of await uploadersVerdicts(deps, caller, uploader, assets, request.deep === true, scanned)) judged.set(asset, verdict)
  return request.assets.map((asset) => judged.get(asset)!)
}

/** The verdicts of assets one account uploaded, each with its blobs: held, indexed, durable; deep scans within the caller's budget. */
async function uploadersVerdicts(
  deps: Deps,
  caller: Caller,
  uploader: string,
  assets: readonly Static<typeof StorageVerifyRequest>['assets'][number][],
  deepScan: boolean,
  scanned: Map<string, DeepResult>,
): Promise<Map<Static<typeof StorageVerifyRequest>['assets'][number], AssetVerdict>> {
  const { deepScanBudgetBytes, deepScanWindowS } = deps.config.verification
  const allHashes = [...new Set(assets.flatMap((asset) => asset.blob_hashes))]
  const [custody, owned, indexed] = await Promise.all([
    deps.storage.assetCustody(
      uploader,
      assets.map((asset) => asset.asset_id),
    ),
    deps.storage.ownedBlobHashes(uploader, allHashes),
    deps.storage.liveReferencedHashes(uploader, allHashes),
  ])
  const sizes = new Map(await Promise.all([...owned].map(async (hash) => [hash, await deps.blobs.size(hash)] as const)))
  // No file: a provenance blob's bytes are held in the database (decision 0038).
  const inDatabase = await deps.storage.heldManifests(
    [...owned].filter((hash) => sizes.get(hash) === null),
    uploader,
  )
  for (const [hash, bytes] of inDatabase) sizes.set(hash, bytes.length)

  const verdicts = new Map<Static<typeof StorageVerifyRequest>['assets'][number], AssetVerdict>()
  for (const asset of assets) {
    const held = custody.get(asset.asset_id)
    const blobs: (BlobVerdict & { hash: string })[] = []
    for (const hash of asset.blob_hashes) {
      if (held === undefined) {
        blobs.push({ hash, ...UNKNOWN_BLOB })
        continue
      }
      const size = sizes.get(hash) ?? null
      const stored = owned.has(hash) && size !== null
      let deep: DeepResult | undefined
      if (deepScan && stored) {
        deep = scanned.get(hash)
        if (deep === undefined) {
          const reserved = await deps.storage.reserveDeepScan(caller.userId, size, deps.clock.now(), deepScanBudgetBytes, deepScanWindowS * 1000)
          deep = reserved ? ((await rehash(deps, hash, inDatabase.get(hash))) === hash ? 'intact' : 'corrupt') : 'rate_limited'
          if (deep !== 'rate_limited') scanned.set(hash, deep)
        }
      }
      blobs.push({
        hash,
        ...blobVerdict({
          role: held.roles.get(hash) ?? null,
          stored,
          indexed: indexed.has(hash),
          withheld: held.takenDown,
          ...(deep === undefined ? {} : { deep }),
        }),
      })
    }
    verdicts.set(asset, { assetId: asset.asset_id, durable: held !== undefined && isDurable(blobs), blobs, checkedAt: deps.clock.now() })
  }
  return verdicts
}
