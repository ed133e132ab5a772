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

export async function verifyStorage(deps: Deps, caller: Caller, request: Static<typeof StorageVerifyRequest>): Promise<AssetVerdict[]> {
  const { maxAssets, maxHashes, deepScanBudgetBytes, deepScanWindowS } = deps.config.verification
  const declared = request.assets.reduce((count, asset) => count + asset.blob_hashes.length, 0)
  if (request.assets.length > maxAssets || declared > maxHashes) {
    throw new AppError('error.request.invalid', `At most ${maxAssets} assets and ${maxHashes} hashes per request`)
  }
  const allHashes = [...new Set(request.assets.flatMap((asset) => asset.blob_hashes))]
  const [custody, owned, indexed] = await Promise.all([
    deps.storage.assetCustody(
      caller.userId,
      request.assets.map((asset) => asset.asset_id),
    ),
    deps.storage.ownedBlobHashes(caller.userId, allHashes),
    deps.storage.liveReferencedHashes(caller.userId, allHashes),
  ])
  const sizes = new Map(await Promise.all([...owned].map(async (hash) => [hash, await deps.blobs.size(hash)] as const)))
  // No file: a provenance blob's bytes are held in the database (decision 0038).
  const inDatabase = await deps.storage.heldManifests(
    [...owned].filter((hash) => sizes.get(hash) === null),
    caller.userId,
  )
  for (const [hash, bytes] of inDatabase) sizes.set(hash, bytes.length)
  const scanned = new Map<string, DeepResult>()

  const verdicts: AssetVerdict[] = []
  for (const asset of request.assets) {
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
      if (request.deep === true && stored) {
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
    verdicts.push({ assetId: asset.asset_id, durable: held !== undefined && isDurable(blobs), blobs, checkedAt: deps.clock.now() })
  }
  return verdicts
}
