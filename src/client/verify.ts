// Checking that the server holds an album (docs/client-library.md, "Verifying an album"): the
// server's storage verification of every blob of every asset, and every custody receipt
// checked here, offline, against the attestation-keys document: its signature, the chain
// links between the receipts seen, and that it names a blob of the asset with that blob's hash
// and size (for a replaced asset, the receipts of its current version); and that every blob
// has a receipt. `deep` also asks the server to re-hash the bytes
// and downloads every blob here, checking its hash and decrypting it: a server that says
// "intact" is not taken at its word.
import { fromBase64, sha256Hex, toHex } from '../sdk/bytes.ts'
import type { Feed } from '../sdk/client.ts'
import { verifyReceipts } from '../sdk/receipts.ts'
import { ALBUM_RECORD_TYPE, liveEntries, type Library } from './albums.ts'
import { restoreFile, type RestoredFile } from './files.ts'
import { ciphertextSize, DEFAULT_CHUNK_SIZE } from './format/stream.ts'

/** The server's limits on one verify request (API.md section 7). */
const VERIFY_MAX_ASSETS = 256
const VERIFY_MAX_HASHES = 4096

export interface AssetReport {
  readonly assetId: string
  /** The file's name; null when its metadata could not be read. */
  readonly name: string | null
  /** True for the album's own record (albums.ts). */
  readonly record: boolean
  readonly blobs: number
  readonly receipts: number
  /** One sentence per thing wrong; empty when the asset is durable and every receipt verified. */
  readonly problems: readonly string[]
}

export interface VerifyOptions {
  readonly deep?: boolean
  /** Told as each asset's report is complete. */
  readonly onAsset?: (report: AssetReport) => void
  /** Assets checked at once (receipts, downloads); 4 unless given. */
  readonly concurrency?: number
}

interface ExpectedBlob {
  readonly role: string
  readonly hash: string
  readonly size: number
}

interface Checked {
  readonly entry: Feed['entries'][number]
  readonly opened: RestoredFile | null
  readonly blobs: readonly ExpectedBlob[]
  readonly problems: string[]
}

/** What an asset is made of, as this device reads it: every blob with its role, hash and stored size. */
function expectedBlobs(entry: Feed['entries'][number], opened: RestoredFile): ExpectedBlob[] {
  const { envelope, metadata } = opened
  const manifest = fromBase64(entry.manifest_cbor)
  return [
    { role: 'original', hash: envelope.ciphertext_hash, size: ciphertextSize(envelope.plaintext_size, envelope.chunk_size) },
    ...metadata.blobs.filter((b) => b.kind !== 'original').map((b) => ({ role: 'derivative', hash: toHex(b.hash), size: ciphertextSize(b.size, DEFAULT_CHUNK_SIZE) })),
    { role: 'metadata', hash: envelope.metadata_blob_hash!, size: opened.metadataBlobSize },
    { role: 'provenance', hash: sha256Hex(manifest), size: manifest.length },
  ]
}

async function inParallel<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker))
}

/** Verifies every live asset of the album; see the top of this file. Answers one report per asset, in feed order. */
export async function verifyAlbum(library: Library, albumId: string, options: VerifyOptions = {}): Promise<AssetReport[]> {
  const concurrency = options.concurrency ?? 4
  const entries = await liveEntries(library.client, albumId)
  const keys = await library.client.attestationKeys()
  const checked: Checked[] = []
  await inParallel(entries, concurrency, async (entry) => {
    const problems: string[] = []
    const opened = await restoreFile({ ...library, albumId }, entry).catch((error: unknown) => {
      problems.push(`cannot be read: ${(error as Error).message}`)
      return null
    })
    checked.push({ entry, opened, blobs: opened === null ? [] : expectedBlobs(entry, opened), problems })
  })
  checked.sort((a, b) => a.entry.sync_seq - b.entry.sync_seq)

  // The server's verdicts, in requests within its limits.
  for (let start = 0; start < checked.length; ) {
    const batch: Checked[] = []
    let hashes = 0
    while (start < checked.length && batch.length < VERIFY_MAX_ASSETS && hashes + checked[start]!.blobs.length <= VERIFY_MAX_HASHES) {
      hashes += checked[start]!.blobs.length
      batch.push(checked[start++]!)
    }
    const { verdicts } = await library.client.verifyStorage({ assets: batch.map((c) => ({ asset_id: c.entry.asset_id, blob_hashes: c.blobs.map((b) => b.hash) })), deep: options.deep === true })
    verdicts.forEach((verdict, i) => {
      const item = batch[i]!
      verdict.blobs.forEach((blob, j) => {
        const role = item.blobs[j]?.role ?? blob.role
        const missing = (['stored', 'indexed', 'retrievable'] as const).filter((flag) => !blob[flag])
        if (missing.length > 0) item.problems.push(`${role} blob ${blob.hash.slice(0, 12)}… is not ${missing.join(', not ')} on the server`)
        if (blob.deep === 'corrupt') item.problems.push(`${role} blob ${blob.hash.slice(0, 12)}… is corrupt on the server's disk (its bytes no longer hash to their address)`)
      })
      if (!verdict.durable && item.problems.length === 0) item.problems.push('the server does not call it durable')
    })
  }

  const reports: AssetReport[] = []
  await inParallel(checked, concurrency, async (item) => {
    const { entry, opened, blobs, problems } = item
    const { receipts } = await library.client.assetReceipts(entry.asset_id)
    const check = await verifyReceipts(receipts, keys, entry.asset_id, library.verify)
    problems.push(...check.problems)
    // A replaced asset keeps the receipts of its earlier versions (API.md section 7): they are
    // checked above with the rest, and only the current version's bundle (the upload session
    // whose provenance receipt is the current manifest) must match the current blobs.
    const provenance = blobs.find((b) => b.role === 'provenance')?.hash
    const bundle = receipts.find((r) => r.blob_role === 'provenance' && r.ciphertext_hash === provenance)?.upload_id
    for (const receipt of receipts) {
      if (bundle !== undefined && receipt.upload_id !== bundle) continue
      const blob = blobs.find((b) => b.hash === receipt.ciphertext_hash && b.role === receipt.blob_role)
      if (opened !== null && blob === undefined) problems.push(`receipt ${receipt.receipt_seq} names a ${receipt.blob_role} blob ${receipt.ciphertext_hash.slice(0, 12)}… the asset does not have`)
      else if (blob !== undefined && blob.size !== receipt.size) problems.push(`receipt ${receipt.receipt_seq} says the ${blob.role} blob has ${receipt.size} bytes, it has ${blob.size}`)
    }
    for (const blob of blobs) if (!receipts.some((r) => r.ciphertext_hash === blob.hash)) problems.push(`the ${blob.role} blob ${blob.hash.slice(0, 12)}… has no custody receipt`)
    if (options.deep === true && opened !== null) {
      try {
        for await (const _ of opened.bytes); // every chunk authenticated, the hash and size checked at the end
        for (const blob of opened.metadata.blobs) if (blob.kind !== 'original') await opened.derivative(blob.kind)
      } catch (error) {
        problems.push(`downloaded, it fails: ${(error as Error).message}`)
      }
    }
    const report: AssetReport = {
      assetId: entry.asset_id,
      name: opened?.metadata.name ?? null,
      record: opened?.metadata.type === ALBUM_RECORD_TYPE,
      blobs: blobs.length,
      receipts: receipts.length,
      problems,
    }
    reports.push(report)
    options.onAsset?.(report)
  })
  const order = new Map(checked.map((c, i) => [c.entry.asset_id, i]))
  return reports.sort((a, b) => order.get(a.assetId)! - order.get(b.assetId)!)
}
