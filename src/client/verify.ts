// Checking that the server holds an album (docs/client-library.md, "Verifying an album"): the
// server's storage verification of every blob of every asset, and every custody receipt
// checked here, offline, against the attestation-keys document: its signature, the chain
// links between the receipts seen, and that it names a blob of the asset with that blob's hash
// and size (for a replaced asset, the receipts of its current version); and that every blob
// has a receipt. `deep` also asks the server to re-hash the bytes
// and downloads every blob here, checking its hash and decrypting it: a server that says
// "intact" is not taken at its word. verifyAssets checks some assets of an album only (free-up:
// the files about to be deleted here), and can leave the download out.
import { fromBase64, sha256Hex, toHex } from '../sdk/bytes.ts'
import type { CofferClient, Feed } from '../sdk/client.ts'
import { verifyReceipts } from '../sdk/receipts.ts'
import { ALBUM_RECORD_TYPE, streamLiveEntries, type Library } from './albums.ts'
import { restoreFile, type RestoredFile } from './files.ts'
import { ciphertextSize, DEFAULT_CHUNK_SIZE } from './format/stream.ts'

/** The server's limits on one verify request (API.md section 7). */
const VERIFY_MAX_ASSETS = 256
const VERIFY_MAX_HASHES = 4096

/** What kind of thing is wrong with an asset, for a caller that acts on it (free-up). */
export type IssueKind =
  /** Its envelope or metadata could not be read and decrypted. */
  | 'unreadable'
  /** A blob is not stored, indexed or retrievable, or the server does not call the asset durable. */
  | 'not_durable'
  /** The server's deep scan found a blob whose bytes no longer hash to their address. */
  | 'corrupt'
  /** A custody receipt is missing, does not verify, or does not match the asset's blobs. */
  | 'receipt'
  /** Downloaded and decrypted here (deep), it fails. */
  | 'download'

export interface AssetIssue {
  readonly kind: IssueKind
  readonly message: string
}

export interface AssetReport {
  readonly assetId: string
  /** The file's name; null when its metadata could not be read. */
  readonly name: string | null
  /** The file's size and modification time (ms) as its metadata records them; null when it could not be read (modified: or when none was recorded). */
  readonly size: number | null
  readonly modified: number | null
  /** True for the album's own record (albums.ts). */
  readonly record: boolean
  readonly blobs: number
  readonly receipts: number
  /** One sentence per thing wrong; empty when the asset is durable and every receipt verified. */
  readonly problems: readonly string[]
  /** The same, each with its kind. */
  readonly issues: readonly AssetIssue[]
  /** With `deep`: the blobs the server's deep scan did not reach (its per-account budget spent, verdict rate_limited); 0 otherwise. */
  readonly deepPending: number
  /** The keyed hash of the content of the asset's current version (its metadata's), hex; null when not recorded (metadata version 1) or unreadable. */
  readonly contentMac: string | null
  /** With `deep`: the blobs the server's deep scan re-hashed in this run and found intact. */
  readonly intact: readonly string[]
  /** With `deep` and the download: every blob, when each was downloaded and checked here; empty otherwise. */
  readonly checkedHere: readonly string[]
}

export interface VerifyOptions {
  readonly deep?: boolean
  /** Told as each asset's report is complete. */
  readonly onAsset?: (report: AssetReport) => void
  /** With `deep`: told, as an asset's original is downloaded, how many of its plaintext bytes have come so far. */
  readonly onDownloaded?: (file: { readonly assetId: string; readonly name: string }, bytes: number) => void
  /** Assets checked at once (receipts, downloads); 4 unless given. */
  readonly concurrency?: number
  /** With `deep`, also download and decrypt every blob here; true unless given. */
  readonly download?: boolean
  /**
   * With `deep`: true for a blob hash a deep check found intact recently enough for the caller;
   * an asset whose every blob is so is verified without the server's deep scan (its storage and
   * receipts still are), saving the server's per-account budget for the others.
   */
  readonly recentlyIntact?: (hash: string) => boolean
  /** Receipts asked for a page (CofferClient.assetReceipts); the server's default page unless given. */
  readonly receiptsPageSize?: number
}

type AttestationKeys = Awaited<ReturnType<CofferClient['attestationKeys']>>

interface ExpectedBlob {
  readonly role: string
  readonly hash: string
  readonly size: number
}

interface Checked {
  readonly entry: Feed['entries'][number]
  readonly opened: RestoredFile | null
  readonly blobs: readonly ExpectedBlob[]
  readonly issues: AssetIssue[]
  deepPending: number
  readonly intact: string[]
}

/** What an asset is made of, as this device reads it: every blob with its role, hash and stored size. */
function expectedBlobs(entry: Feed['entries'][number], opened: RestoredFile): ExpectedBlob[] {
  const { envelope, metadata } = opened
  const manifest = fromBase64(entry.manifest_cbor)
  return [
    { role: 'original', hash: envelope.ciphertext_hash, size: ciphertextSize(envelope.plaintext_size, envelope.chunk_size) },
    ...metadata.blobs
      .filter((b) => b.kind !== 'original')
      .map((b) => ({ role: 'derivative', hash: toHex(b.hash), size: ciphertextSize(b.size, DEFAULT_CHUNK_SIZE) })),
    { role: 'metadata', hash: envelope.metadata_blob_hash!, size: opened.metadataBlobSize },
    { role: 'provenance', hash: sha256Hex(manifest), size: manifest.length },
  ]
}

/** Runs `work` on every item, at most `concurrency` at once. */
export async function inParallel<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker))
}

/** Verifies every live asset of the album; see the top of this file. Answers one report per asset, in feed order. */
export async function verifyAlbum(library: Library, albumId: string, options: VerifyOptions = {}): Promise<AssetReport[]> {
  return verifyEntries(library, albumId, streamLiveEntries(library.client, albumId), options)
}

/**
 * Verifies the assets of the album named by `assetIds` as verifyAlbum does (one report per asset,
 * in feed order); an id that is not a live asset of the album has no report.
 */
export async function verifyAssets(library: Library, albumId: string, assetIds: Iterable<string>, options: VerifyOptions = {}): Promise<AssetReport[]> {
  return verifyEntries(library, albumId, liveEntriesOf(library.client, albumId, assetIds), options)
}

/** The live entries of the album for the assets named by `assetIds`, in feed order, streamed (streamLiveEntries). */
export async function* liveEntriesOf(client: CofferClient, albumId: string, assetIds: Iterable<string>): AsyncGenerator<Feed['entries'][number]> {
  const wanted = new Set(assetIds)
  for await (const entry of streamLiveEntries(client, albumId)) if (wanted.has(entry.asset_id)) yield entry
}

/**
 * Assets verified together: opened, asked about in one storage request, their receipts checked
 * and their blobs downloaded, then let go. Opened files (about 20 KB each) are held a window at a
 * time, not the album's (450 MiB for 10,000 photos); the reports, which are small, are kept.
 */
const WINDOW = 64

async function verifyEntries(
  library: Library,
  albumId: string,
  entries: AsyncIterable<Feed['entries'][number]>,
  options: VerifyOptions,
): Promise<AssetReport[]> {
  const reports: AssetReport[] = []
  let keys: AttestationKeys | null = null
  let window: Feed['entries'][number][] = []
  const flush = async (): Promise<void> => {
    if (window.length === 0) return
    keys ??= await library.client.attestationKeys()
    reports.push(...(await verifyWindow(library, albumId, window, keys, options)))
    window = []
  }
  for await (const entry of entries) {
    window.push(entry)
    if (window.length === WINDOW) await flush()
  }
  await flush()
  return reports
}

/** Verifies a window of entries (see verifyEntries); its reports in feed order. */
async function verifyWindow(
  library: Library,
  albumId: string,
  entries: readonly Feed['entries'][number][],
  keys: AttestationKeys,
  options: VerifyOptions,
): Promise<AssetReport[]> {
  const concurrency = options.concurrency ?? 4
  const checked: Checked[] = []
  await inParallel(entries, concurrency, async (entry) => {
    const issues: AssetIssue[] = []
    const opened = await restoreFile({ ...library, albumId }, entry).catch((error: unknown) => {
      issues.push({ kind: 'unreadable', message: `cannot be read: ${(error as Error).message}` })
      return null
    })
    checked.push({ entry, opened, blobs: opened === null ? [] : expectedBlobs(entry, opened), issues, deepPending: 0, intact: [] })
  })
  checked.sort((a, b) => a.entry.sync_seq - b.entry.sync_seq)

  // The server's verdicts, in requests within its limits. With `deep`, an asset whose every blob a
  // deep check found intact recently (options.recentlyIntact) is asked without: the server's
  // deep-scan budget goes to what was not checked yet.
  const fresh = (item: Checked): boolean =>
    options.recentlyIntact !== undefined && item.blobs.length > 0 && item.blobs.every((b) => options.recentlyIntact!(b.hash))
  const deep = options.deep === true
  const groups: [Checked[], boolean][] = deep
    ? [
        [checked.filter((c) => !fresh(c)), true],
        [checked.filter(fresh), false],
      ]
    : [[checked, false]]
  for (const [items, deepRequest] of groups) {
    for (let start = 0; start < items.length; ) {
      const batch: Checked[] = []
      let hashes = 0
      while (start < items.length && batch.length < VERIFY_MAX_ASSETS && hashes + items[start]!.blobs.length <= VERIFY_MAX_HASHES) {
        hashes += items[start]!.blobs.length
        batch.push(items[start++]!)
      }
      const { verdicts } = await library.client.verifyStorage({
        assets: batch.map((c) => ({ asset_id: c.entry.asset_id, blob_hashes: c.blobs.map((b) => b.hash) })),
        deep: deepRequest,
      })
      verdicts.forEach((verdict, i) => {
        const item = batch[i]!
        verdict.blobs.forEach((blob, j) => {
          const role = item.blobs[j]?.role ?? blob.role
          const missing = (['stored', 'indexed', 'retrievable'] as const).filter((flag) => !blob[flag])
          if (missing.length > 0)
            item.issues.push({ kind: 'not_durable', message: `${role} blob ${blob.hash.slice(0, 12)}… is not ${missing.join(', not ')} on the server` })
          if (blob.deep === 'corrupt')
            item.issues.push({
              kind: 'corrupt',
              message: `${role} blob ${blob.hash.slice(0, 12)}… is corrupt on the server's disk (its bytes no longer hash to their address)`,
            })
          if (blob.deep === 'rate_limited') item.deepPending++
          if (blob.deep === 'intact') item.intact.push(blob.hash)
        })
        if (!verdict.durable && item.issues.length === 0) item.issues.push({ kind: 'not_durable', message: 'the server does not call it durable' })
      })
    }
  }

  const reports: AssetReport[] = []
  await inParallel(checked, concurrency, async (item) => {
    const { entry, opened, blobs, issues } = item
    const problems: string[] = []
    // Every page, checked as one chain: a link across a page boundary is checked as any other.
    const { receipts } = await library.client.assetReceipts(
      entry.asset_id,
      options.receiptsPageSize === undefined ? {} : { pageSize: options.receiptsPageSize },
    )
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
      if (opened !== null && blob === undefined)
        problems.push(`receipt ${receipt.receipt_seq} names a ${receipt.blob_role} blob ${receipt.ciphertext_hash.slice(0, 12)}… the asset does not have`)
      else if (blob !== undefined && blob.size !== receipt.size)
        problems.push(`receipt ${receipt.receipt_seq} says the ${blob.role} blob has ${receipt.size} bytes, it has ${blob.size}`)
    }
    for (const blob of blobs)
      if (!receipts.some((r) => r.ciphertext_hash === blob.hash)) problems.push(`the ${blob.role} blob ${blob.hash.slice(0, 12)}… has no custody receipt`)
    issues.push(...problems.map((message) => ({ kind: 'receipt' as const, message })))
    let checkedHere: string[] = []
    if (options.deep === true && options.download !== false && opened !== null) {
      try {
        let downloaded = 0
        // Every chunk authenticated, the hash and size checked at the end.
        for await (const chunk of opened.bytes) {
          downloaded += chunk.length
          options.onDownloaded?.({ assetId: entry.asset_id, name: opened.metadata.name }, downloaded)
        }
        for (const blob of opened.metadata.blobs) if (blob.kind !== 'original') await opened.derivative(blob.kind)
        // The metadata and the manifest were read and checked when the file was opened.
        checkedHere = blobs.map((blob) => blob.hash)
      } catch (error) {
        issues.push({ kind: 'download', message: `downloaded, it fails: ${(error as Error).message}` })
      }
    }
    const report: AssetReport = {
      assetId: entry.asset_id,
      name: opened?.metadata.name ?? null,
      size: opened?.metadata.size ?? null,
      modified: opened?.metadata.modified ?? null,
      record: opened?.metadata.type === ALBUM_RECORD_TYPE,
      contentMac: opened?.metadata.contentMac === undefined ? null : toHex(opened.metadata.contentMac),
      blobs: blobs.length,
      receipts: receipts.length,
      problems: issues.map((issue) => issue.message),
      issues,
      deepPending: item.deepPending,
      intact: item.intact,
      checkedHere,
    }
    reports.push(report)
    options.onAsset?.(report)
  })
  const order = new Map(checked.map((c, i) => [c.entry.asset_id, i]))
  return reports.sort((a, b) => order.get(a.assetId)! - order.get(b.assetId)!)
}
