// coffer fsck: does what the database says match what is on disk, and does the database agree
// with itself? Read-only (unless asked to queue unowned files), safe beside running servers:
// what a concurrent write or collection changes while it looks is checked again before it is
// reported. Findings are problems (something acknowledged may be lost or unprovable: exit 1)
// or notes (space held by files no row names: nothing is lost).
import { createHash } from 'node:crypto'
import { chainOfReceipt, nextReceiptSeq } from '../../contract/signing.ts'
import { hybridVerify } from '../../crypto/hybrid.ts'
import type { Deps } from '../../deps.ts'
import { verifyReceipts } from '../../sdk/receipts.ts'
import type { Receipt } from '../../storage/port/custody.ts'
import type { ConsistencyFinding } from '../../storage/port/integrity.ts'
import { attestationKeysDocument } from '../custody/attestation.ts'
import { receiptView } from '../custody/receipts.ts'

const PAGE = 500

export interface FsckOptions {
  /** Re-read every blob and compare its SHA-256 with its name. */
  readonly deep: boolean
  /** Queue the files no row names for the next maintenance pass to remove. */
  readonly reclaimUnowned: boolean
  readonly problem: (line: string) => void
  readonly note: (line: string) => void
  /** Called now and then with what was looked at so far. */
  readonly progress?: (done: { phase: string; count: number; bytes: number }) => void
}

export interface FsckSummary {
  readonly problems: number
  readonly notes: number
  /** Distinct hashes owner rows name, and their bytes. */
  readonly blobs: number
  readonly bytes: number
  readonly rehashed: boolean
  readonly receipts: number
  /** Files no row names and no queue entry will remove; and how many of them were queued now. */
  readonly unownedFiles: number
  readonly queuedNow: number
}

function findingLine(finding: ConsistencyFinding): string {
  switch (finding.kind) {
    case 'asset_head':
      return `asset ${finding.assetId}: chain head ${finding.chainHead} is not the hash of its last applied manifest (${finding.lastManifestHash ?? 'none in its album feed'})`
    case 'asset_original':
      return `asset ${finding.assetId}: original ${finding.originalHash} is not its live bundle's original (${finding.liveOriginal ?? 'none'})`
    case 'op_session_open':
      return `album ${finding.albumId} feed entry ${finding.syncSeq}: its upload session ${finding.uploadId} is still open`
    case 'reference_undeclared':
      return `asset ${finding.assetId}: blob ${finding.hash} of its bundle was not declared by upload session ${finding.uploadId}`
    case 'reference_size':
      return `asset ${finding.assetId}: blob ${finding.hash} is referenced with ${finding.referenceSize} bytes, ${finding.blobSize === null ? 'but its owner has no row for it' : `its owner row says ${finding.blobSize}`}`
    case 'reference_unreceipted':
      return `asset ${finding.assetId}: blob ${finding.hash} (${finding.role}, upload ${finding.uploadId}) has no custody receipt`
    case 'stored_bytes':
      return `account ${finding.userId}: stored bytes ${finding.recorded ?? '(no row)'} differ from its blob rows' ${finding.actual}`
  }
}

/** Owner rows against files: each named blob exists, with the rows' size (and, deep, its name's SHA-256). */
async function checkNamedBlobs(deps: Deps, options: FsckOptions, problem: (line: string) => void): Promise<{ blobs: number; bytes: number }> {
  let blobs = 0
  let bytes = 0
  for (let after = ''; ; ) {
    const page = await deps.storage.namedBlobsAfter(after, PAGE)
    const sizes = await Promise.all(page.map((row) => deps.blobs.size(row.hash)))
    // Without a file, a provenance blob's bytes are the manifest its owner's feed holds (decision 0038).
    const held = await deps.storage.heldManifests(page.filter((_, i) => (sizes[i] ?? null) === null).map((row) => row.hash))
    const missing: string[] = []
    for (const [i, row] of page.entries()) {
      const heldBytes = held.get(row.hash)
      const size = heldBytes?.length ?? sizes[i] ?? null
      const where = heldBytes === undefined ? 'the file' : 'the manifest held in the database'
      blobs++
      bytes += row.maxSize
      if (row.minSize !== row.maxSize) problem(`blob ${row.hash}: its owner rows disagree on its size (${row.minSize} and ${row.maxSize} bytes)`)
      if (size === null) missing.push(row.hash)
      else if (size !== row.maxSize) problem(`blob ${row.hash}: ${where} has ${size} bytes, its rows say ${row.maxSize}`)
      else if (options.deep) {
        const actual =
          heldBytes === undefined
            ? await deps.blobs.sha256(row.hash).catch((error: Error) => `unreadable (${error.message})`)
            : createHash('sha256').update(heldBytes).digest('hex')
        if (actual !== row.hash) problem(`blob ${row.hash}: ${where}'s SHA-256 is ${actual}`)
      }
    }
    // A collection may have released the row and reclaimed the file meanwhile: only a file that
    // is still missing while a row still names it is lost.
    const stillNamed = await deps.storage.blobRowsNaming(missing)
    for (const hash of missing) if (stillNamed.has(hash) && (await deps.blobs.size(hash)) === null) problem(`blob ${hash}: the file is missing`)
    options.progress?.({ phase: options.deep ? 'blobs re-hashed' : 'blobs checked', count: blobs, bytes })
    if (page.length < PAGE) return { blobs, bytes }
    after = page.at(-1)?.hash ?? after
  }
}

/** Files against rows: a file that no owner row, open upload session or reclaim entry accounts for. */
async function checkUnownedFiles(deps: Deps, options: FsckOptions): Promise<{ unowned: number; queued: number }> {
  let unowned = 0
  let queued = 0
  const look = async (batch: string[]) => {
    const needed = await deps.storage.blobHashesStillNeeded(batch, deps.clock.now())
    const candidates = batch.filter((hash) => !needed.has(hash))
    const waiting = await deps.storage.queuedAmong(candidates)
    const found: string[] = []
    for (const hash of candidates) if (!waiting.has(hash) && (await deps.blobs.size(hash)) !== null) found.push(hash)
    for (const hash of found) options.note(`file ${hash}: no row names it and nothing queues it for removal${options.reclaimUnowned ? ' (queued now)' : ''}`)
    unowned += found.length
    if (options.reclaimUnowned && found.length > 0) {
      await deps.storage.queueReclaims(found)
      queued += found.length
    }
  }
  let batch: string[] = []
  for await (const hash of deps.blobs.list()) {
    batch.push(hash)
    if (batch.length === PAGE) {
      await look(batch)
      batch = []
    }
  }
  await look(batch)
  return { unowned, queued }
}

/**
 * The receipt chains: each chain's receipts from its first to its head without a gap, each
 * linked to the one before it on its chain, each signature valid under the attestation keys.
 */
async function checkReceiptChain(deps: Deps, options: FsckOptions, problem: (line: string) => void): Promise<number> {
  // Read first: receipts appended while the check runs are beyond their chain's head and not looked at.
  const heads = await deps.storage.readReceiptChains()
  const chains = heads.length
  // The chains the database holds, whatever this command's RECEIPT_CHAINS says.
  const { receipt_chains: _, ...keys } = await attestationKeysDocument(deps)
  const document = chains === 1 ? keys : { ...keys, receipt_chains: chains }
  const headOf = (seq: number) => heads[chainOfReceipt(seq, chains) - 1]!
  const chainName = (chain: number) => (chains === 1 ? 'receipt chain' : `receipt chain ${chain}`)
  /** The last receipt checked on each chain, by chain. */
  const previous = new Map<number, { seq: number; hash: string }>()
  const highest = Math.max(0, ...heads.map((head) => head.lastSeq))
  let count = 0
  for (let after = 0; after < highest; ) {
    const fetched = await deps.storage.receiptsAfter(after, PAGE)
    if (fetched.length === 0) break
    after = fetched.at(-1)!.receiptSeq
    const page = fetched.filter((receipt) => receipt.receiptSeq <= headOf(receipt.receiptSeq).lastSeq)
    // verifyReceipts checks one server's receipts: a PUBLIC_ORIGIN changed over the years makes runs.
    for (let start = 0; start < page.length; ) {
      let end = start + 1
      while (end < page.length && page[end]?.serverId === page[start]?.serverId) end++
      const run: Receipt[] = page.slice(start, end)
      const check = await verifyReceipts(run.map(receiptView), { ...document, server_id: run[0]!.serverId }, undefined, hybridVerify)
      for (const line of check.problems) problem(line)
      // Links inside a run are verifyReceipts's; the links into it, and gaps anywhere, are here.
      const inRun = new Set(run.map((receipt) => receipt.receiptSeq))
      for (const receipt of run) {
        const chain = chainOfReceipt(receipt.receiptSeq, chains)
        const before = previous.get(chain)
        const expected = nextReceiptSeq(before?.seq ?? 0, chain, chains)
        if (receipt.receiptSeq !== expected) problem(`${chainName(chain)}: receipts ${expected}..${receipt.receiptSeq - chains} are missing`)
        else if (before !== undefined && !inRun.has(before.seq) && receipt.priorReceiptHash !== before.hash)
          problem(`receipt ${receipt.receiptSeq}: prior_receipt_hash does not link to receipt ${before.seq}`)
        previous.set(chain, { seq: receipt.receiptSeq, hash: createHash('sha256').update(receipt.receiptCbor).digest('hex') })
      }
      count += run.length
      start = end
    }
    options.progress?.({ phase: 'receipts verified', count, bytes: 0 })
  }
  const pending = await deps.storage.pendingReceiptRequests(null, null, PAGE)
  if (pending.length > 0)
    options.note(
      `${pending.length === PAGE ? `at least ${PAGE}` : pending.length} bundles' receipts are requested from their chain's holder, not yet appended (pending, not missing: the chain's holder appends them, or coffer maintain those older than 10 s)`,
    )
  heads.forEach((head, i) => {
    const chain = i + 1
    const last = previous.get(chain)
    const name = chainName(chain)
    if ((last?.seq ?? 0) !== head.lastSeq) problem(`${name}: the head says receipt ${head.lastSeq}, the last one found is ${last?.seq ?? 'none'}`)
    else if (last !== undefined && last.hash !== head.lastReceiptHash) problem(`${name}: the head's hash does not name receipt ${last.seq}`)
  })
  return count
}

export async function fsck(deps: Deps, options: FsckOptions): Promise<FsckSummary> {
  let problems = 0
  const problem = (line: string) => {
    problems++
    options.problem(line)
  }
  let notes = 0
  const counted: FsckOptions = {
    ...options,
    note: (line) => {
      notes++
      options.note(line)
    },
  }
  const named = await checkNamedBlobs(deps, counted, problem)
  const receipts = await checkReceiptChain(deps, counted, problem)
  for (const finding of await deps.storage.consistencyFindings()) problem(findingLine(finding))
  const files = await checkUnownedFiles(deps, counted)
  return { problems, notes, ...named, rehashed: options.deep, receipts, unownedFiles: files.unowned, queuedNow: files.queued }
}
