// Freeing local space (docs/photos.md "free-up", decisions 0017 and 0052): which files of a
// folder this device may delete because the album holds them safely, and deleting them. A file is
// freed only when every one of these holds:
//   1. this device recorded it (state.ts) as backed up to the album, and it is unchanged since:
//      the same size and mtime, and its bytes, read again now, hash to the plaintext SHA-256
//      recorded (and that hash gives the asset id recorded), and that asset is this very path
//      with this size (its metadata's name: restore brings it back here);
//   2. its asset is live in the album and the server calls it durable: every blob (original,
//      derivatives, metadata, manifest) stored, indexed and retrievable;
//   3. its custody receipts verify here, offline (../verify.ts verifyAssets);
//   4. its bytes were checked: every blob re-hashed intact by the server's deep scan, or
//      downloaded and checked here (verify --deep, free-up --download), in this run or within the
//      last DEEP_CHECK_VALID_MS (remembered in state.ts); or, for a folder of more than
//      SAMPLE_FILES files, a random sample of SAMPLE_FILES of them was so checked, every
//      one intact, and no blob of the run was found corrupt. The server's deep-scan budget is a
//      gigabyte an hour by default; the sample lets a 400 GB folder be freed in a day while the
//      server re-reads a fraction of it (the trade: a server losing a share of what it holds is
//      caught, one blob lost alone may not be: docs/photos.md).
// Deleting: never a symbolic link, never outside the folder (the folder's real path is fixed at
// the start; each file's parent must still resolve under it), and only the very file that was
// hashed (same device, inode, size and mtime, checked right before the unlink). Each freed file
// is appended to a log (one JSON line, written with an fsync) after it is gone.
import { constants } from 'node:fs'
import { lstat, open, realpath, unlink, type FileHandle } from 'node:fs/promises'
import { createHash, createHmac, hkdfSync } from 'node:crypto'
import path from 'node:path'
import { fromHex, toHex } from '../../sdk/bytes.ts'
import type { Library } from '../albums.ts'
import { contentMacOf } from '../format/content.ts'
import { assetIdFor, namedAssetIdFor } from '../format/ids.ts'
import { verifyAssets, type AssetReport } from '../verify.ts'
import type { SqliteSyncState } from './state.ts'
import { modifiedMs } from './files.ts'
import { walkMedia } from './walk.ts'

/** Why a file is kept, most telling first when there are several. */
export type KeepReason =
  /** This device has no record of backing it up to the album. */
  | 'not_backed_up'
  /** Backed up from here as a new version of a photo, and the album's current version of that photo is other content (written elsewhere since), or cannot be matched. */
  | 'newer_in_album'
  /** Its size, mtime or content differs from what was backed up. */
  | 'changed'
  /** Its asset is not (any more) in the album. */
  | 'not_in_album'
  /** A blob of the asset is corrupt on the server's disk (the deep scan). */
  | 'corrupt'
  /** The server does not hold every blob stored, indexed and retrievable, or its envelope cannot be read. */
  | 'not_durable'
  /** A custody receipt is missing or does not verify. */
  | 'receipt'
  /** Neither a deep check of every blob nor a complete sample: not checked yet. */
  | 'deep_pending'
  /** Not checked itself, and a file of the sample was found wrong: not freed on the sample. */
  | 'sample_failed'

export const KEEP_TEXT: Record<KeepReason, string> = {
  not_backed_up: 'never backed up from this device to this album; run backup first',
  newer_in_album: 'backed up from here as a version of a photo the album now holds in another version',
  changed: 'changed since it was backed up',
  not_in_album: 'not in the album',
  corrupt: 'a blob is corrupt on the server',
  not_durable: 'not durable on the server',
  receipt: 'custody receipt missing or invalid',
  deep_pending: "not checked yet (the server's deep-check budget is spent); run again later",
  sample_failed: 'not checked itself, and a file of the sample checked for it is not intact',
}

/** How long a deep check's "intact" counts for free-up: a day. */
export const DEEP_CHECK_VALID_MS = 24 * 60 * 60 * 1000

/** Files of a folder checked in full, picked at random, before the rest may be freed on them. */
export const SAMPLE_FILES = 64

/** How a freed file's bytes were checked: itself (a deep check of every blob), or the sample. */
export type CheckedBy = 'itself' | 'sample'

/**
 * The sample of `assetIds`: the `size` whose keyed rank is lowest. The key comes from the
 * account's master key, so the server cannot tell the sample before it is asked about it; the
 * rank is fixed, so successive runs share their sample (what one run's budget did not reach, the
 * next completes) until its files are freed and others take their place.
 */
export function sampleOf(assetIds: readonly string[], masterKey: Uint8Array, albumId: string, size = SAMPLE_FILES): Set<string> {
  const key = Buffer.from(hkdfSync('sha256', masterKey, new Uint8Array(0), 'coffer/v1/free-up-sample', 32))
  const rank = (assetId: string): string => createHmac('sha256', key).update(`${albumId}\n${assetId}`).digest('hex')
  const ranked = assetIds.map((assetId) => ({ assetId, rank: rank(assetId) })).sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0))
  return new Set(ranked.slice(0, size).map((r) => r.assetId))
}

export interface FreeUpFile {
  /** Relative to the folder, "/" between names. */
  readonly path: string
  /** Its absolute path (under the folder's real path). */
  readonly file: string
  readonly size: number
  /** Null when it is freed. */
  readonly reason: KeepReason | null
  /** For a freed file: how its bytes were checked; null when kept. */
  readonly checkedBy: CheckedBy | null
  /** What was found, one sentence each (empty when freed or for the local reasons' plain cases). */
  readonly details: readonly string[]
  readonly assetId: string | null
  readonly contentHash: string | null
  /** What the unlink must find again: the hashed file's identity. */
  readonly identity: { readonly dev: number; readonly ino: number; readonly size: number; readonly modified: number } | null
}

export interface FreeUpPlan {
  /** The folder's real path. */
  readonly root: string
  readonly files: readonly FreeUpFile[]
}

export interface PlanOptions {
  readonly library: Library
  readonly albumId: string
  readonly folder: string
  readonly state: SqliteSyncState
  readonly concurrency?: number
  readonly signal?: AbortSignal
  /** Also download and decrypt every blob here (verify --deep's second half); off unless given. */
  readonly download?: boolean
  /** The time, for the deep checks' validity; Date.now unless given. */
  readonly now?: () => number
  /** The sample's size; SAMPLE_FILES unless given. */
  readonly sampleFiles?: number
}

interface Hashed {
  readonly hash: string
  readonly dev: number
  readonly ino: number
  readonly size: number
  readonly modified: number
}

/** Reads the file (not following a symbolic link) and hashes it; its identity as of the read, or null when it changed during it. */
async function hashFile(file: string): Promise<Hashed | null> {
  let handle: FileHandle
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch {
    return null
  }
  try {
    const before = await handle.stat({ bigint: true })
    if (!before.isFile()) return null
    const digest = createHash('sha256')
    for await (const chunk of handle.createReadStream({ autoClose: false, start: 0 })) digest.update(chunk as Buffer)
    const after = await handle.stat({ bigint: true })
    if (after.size !== before.size || after.mtimeNs !== before.mtimeNs) return null
    return { hash: digest.digest('hex'), dev: Number(after.dev), ino: Number(after.ino), size: Number(after.size), modified: modifiedMs(after) }
  } finally {
    await handle.close()
  }
}

const ORDER: readonly KeepReason[] = ['corrupt', 'not_durable', 'receipt', 'deep_pending']

/** Blobs of the report neither the server's deep scan nor a download here checked. */
const uncheckedBlobs = (report: AssetReport): number => (report.checkedHere.length === report.blobs ? 0 : report.deepPending)

/** The reason a report keeps its file, or null when it may be freed. */
function reasonOf(report: AssetReport): KeepReason | null {
  const found = new Set<KeepReason>()
  for (const issue of report.issues) {
    if (issue.kind === 'corrupt' || issue.kind === 'download') found.add('corrupt')
    else if (issue.kind === 'not_durable' || issue.kind === 'unreadable') found.add('not_durable')
    else found.add('receipt')
  }
  if (uncheckedBlobs(report) > 0) found.add('deep_pending')
  return ORDER.find((reason) => found.has(reason)) ?? null
}

/** Decides, for every photo and video of the folder, whether it may be freed; deletes nothing. See the top of this file. */
export async function planFreeUp(options: PlanOptions): Promise<FreeUpPlan> {
  const { library, albumId, state } = options
  const root = await realpath(options.folder)
  const files: FreeUpFile[] = []
  /**
   * `contentMac`: the file's keyed content hash, which the asset's current version must state;
   * `newVersion`: the asset is not the one the content names (the file was backed up as a new version of it).
   */
  const pending: { readonly index: number; readonly assetId: string; readonly contentMac: string; readonly newVersion: boolean }[] = []
  for await (const walked of walkMedia(root)) {
    if (options.signal?.aborted === true) break
    const keep = (reason: KeepReason, details: string[] = [], assetId: string | null = null): void =>
      void files.push({ path: walked.path, file: walked.file, size: walked.size, reason, checkedBy: null, details, assetId, contentHash: null, identity: null })
    const record = state.backedUpFile(albumId, walked.path)
    if (record === null) {
      keep('not_backed_up')
      continue
    }
    if (record.size !== walked.size || record.modified !== walked.modified) {
      keep(
        'changed',
        [
          `backed up with ${record.size} bytes and mtime ${record.modified === null ? 'unknown' : new Date(record.modified).toISOString()}; now ${walked.size} bytes, ${new Date(walked.modified).toISOString()}`,
        ],
        record.assetId,
      )
      continue
    }
    const hashed = await hashFile(walked.file)
    if (hashed === null || hashed.size !== record.size || hashed.modified !== record.modified) {
      keep('changed', ['it changed while being read'], record.assetId)
      continue
    }
    if (hashed.hash !== record.contentHash) {
      keep('changed', ['its content no longer hashes to what was backed up (same size and mtime)'], record.assetId)
      continue
    }
    // The asset its content names (at this path, for a copy: decision 0048); or, for a file backed
    // up as a new version of a photo (edited, backed up again), another. Either way the album's
    // current version of it must be this content.
    const content = fromHex(hashed.hash)
    const named = [await assetIdFor(library.masterKey, albumId, content), await namedAssetIdFor(library.masterKey, albumId, content, walked.path)]
    pending.push({
      index: files.length,
      assetId: record.assetId,
      contentMac: toHex(await contentMacOf(library.masterKey, content)),
      newVersion: !named.includes(record.assetId),
    })
    files.push({
      path: walked.path,
      file: walked.file,
      size: walked.size,
      reason: null,
      checkedBy: 'itself',
      details: [],
      assetId: record.assetId,
      contentHash: hashed.hash,
      identity: hashed,
    })
  }
  if (pending.length > 0) {
    const now = options.now ?? Date.now
    const started = now()
    const sampleSize = options.sampleFiles ?? SAMPLE_FILES
    const sample = sampleOf(
      pending.map((p) => p.assetId),
      library.masterKey,
      albumId,
      sampleSize,
    )
    const verifyOptions = {
      deep: true,
      download: options.download === true,
      concurrency: options.concurrency ?? 4,
      recentlyIntact: (hash: string) => {
        const at = state.deepCheckedAt(hash)
        return at !== null && started - at < DEEP_CHECK_VALID_MS
      },
    }
    // The sample first, so that the server's deep-scan budget goes to it before the rest.
    const reports = [
      ...(await verifyAssets(library, albumId, sample, verifyOptions)),
      ...(pending.length > sample.size
        ? await verifyAssets(
            library,
            albumId,
            pending.map((p) => p.assetId).filter((id) => !sample.has(id)),
            verifyOptions,
          )
        : []),
    ]
    for (const report of reports) state.rememberDeepCheck([...report.intact, ...report.checkedHere], started)
    const byId = new Map(reports.map((report) => [report.assetId, report]))
    const sampleReports = [...sample].map((id) => byId.get(id))
    const sampleChecked = sampleReports.filter((report) => report !== undefined && reasonOf(report) === null).length
    const corruptSeen = reports.some((report) => reasonOf(report) === 'corrupt')
    const sampleHolds = pending.length > sampleSize && sampleChecked === sample.size && !corruptSeen
    const sampleWrong = sampleReports.some((report) => report === undefined || (reasonOf(report) ?? 'deep_pending') !== 'deep_pending') || corruptSeen
    for (const { index, assetId, contentMac, newVersion } of pending) {
      const report = byId.get(assetId)
      const file = files[index]!
      if (report === undefined) {
        files[index] = { ...file, reason: 'not_in_album', checkedBy: null, details: ['its asset is not live in the album (deleted, or never stored)'] }
        continue
      }
      // The album's current version of the photo must be this content (a metadata of version 1
      // states none: then only an asset its content names can be matched).
      if (report.contentMac === null ? newVersion : report.contentMac !== contentMac) {
        const detail =
          report.contentMac === null
            ? "the album's current version of the photo records no content hash to match this file with"
            : "the album's current version of the photo is other content (replaced elsewhere since)"
        files[index] = { ...file, reason: 'newer_in_album', checkedBy: null, details: [detail] }
        continue
      }
      // Restore brings an asset back under its own name: this very path must be it (decision 0048).
      if (report.name !== null && (report.name !== file.path || report.size !== file.size)) {
        files[index] = { ...file, reason: 'not_backed_up', checkedBy: null, details: [`the album holds its content as "${report.name}", not at this path`] }
        continue
      }
      const reason = reasonOf(report)
      if (reason === null) continue
      const pendingDetail = `${uncheckedBlobs(report)} of ${report.blobs} blobs not re-hashed by the server yet`
      if (reason !== 'deep_pending') files[index] = { ...file, reason, checkedBy: null, details: report.problems }
      else if (sampleHolds) files[index] = { ...file, checkedBy: 'sample' }
      else if (pending.length > sampleSize && sampleWrong)
        files[index] = { ...file, reason: 'sample_failed', checkedBy: null, details: [pendingDetail, 'a file of the sample is not intact (listed with it)'] }
      else
        files[index] = {
          ...file,
          reason,
          checkedBy: null,
          details: [
            pendingDetail,
            ...(pending.length > sampleSize ? [`${sampleChecked} of the sample's ${sample.size} files checked so far; the rest are freed once they are`] : []),
          ],
        }
    }
  }
  return { root, files }
}

export type FreeOutcome = { readonly freed: true } | { readonly freed: false; readonly reason: 'changed' | 'failed'; readonly detail: string }

/**
 * Deletes one file the plan frees, after checking again that it is the file that was hashed, a
 * regular file (not a link) whose folder still resolves under the plan's root.
 */
export async function freeFile(plan: FreeUpPlan, file: FreeUpFile): Promise<FreeOutcome> {
  if (file.reason !== null || file.identity === null) throw new Error(`${file.path} is not to be freed`)
  const expectedParent = path.dirname(path.join(plan.root, ...file.path.split('/')))
  if (expectedParent !== path.dirname(file.file) || !(expectedParent === plan.root || expectedParent.startsWith(plan.root + path.sep))) {
    return { freed: false, reason: 'failed', detail: 'it is not inside the folder' }
  }
  try {
    if ((await realpath(expectedParent)) !== expectedParent) return { freed: false, reason: 'changed', detail: 'its folder is now a link elsewhere' }
    const now = await lstat(file.file, { bigint: true })
    const id = file.identity
    if (!now.isFile()) return { freed: false, reason: 'changed', detail: 'it is no longer a regular file' }
    if (Number(now.dev) !== id.dev || Number(now.ino) !== id.ino || Number(now.size) !== id.size || modifiedMs(now) !== id.modified) {
      return { freed: false, reason: 'changed', detail: 'it changed after it was checked' }
    }
    await unlink(file.file)
    return { freed: true }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return { freed: false, reason: 'changed', detail: 'it is gone already' }
    return { freed: false, reason: 'failed', detail: (error as Error).message }
  }
}

/** The log of freed files: one JSON line each, appended with an fsync, in a 0600 file. */
export interface FreedLog {
  append(entry: Record<string, unknown>): Promise<void>
  close(): Promise<void>
}

export async function openFreedLog(file: string): Promise<FreedLog> {
  const handle = await open(file, 'a', 0o600)
  await handle.chmod(0o600)
  return {
    async append(entry) {
      await handle.appendFile(`${JSON.stringify(entry)}\n`, 'utf8')
      await handle.datasync()
    },
    close: () => handle.close(),
  }
}
