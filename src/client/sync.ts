// The sync engine's backup (docs/client-library.md, "Backing up a folder"): every file of a
// walk into one album, several at a time, resumable and idempotent.
//
// - A file this device has backed up before (same path, size, mtime and inode, recorded in the
//   state store, the local index) whose asset the album still holds is skipped without being
//   read.
// - Every path is an asset of its own, named by it (decision 0048): a copy of content the album
//   holds under another name, or a file renamed since, gets an id of its own (namedAssetIdFor)
//   and its own metadata; its original, stored already, is not sent again (content keys).
// - A file at a recorded path whose content changed is stored as a `replace` of its asset,
//   but only over the version this device last wrote or saw there (the index keeps it): a backup
//   never overwrites a version written elsewhere (another device, `replace`). When the album
//   moved on, a file unchanged here is `kept` as the album has it, and one changed on both sides
//   is a `conflict`: named, nothing sent (decision 0047).
// - Any other file is read and hashed; its asset id follows from its content (format/ids.ts),
//   so content the album already holds is not sent again, whoever sent it, and a crash after
//   the server committed an asset but before the store recorded it cannot store it twice (the
//   server refuses the second create, and backupFile reads that as "present").
// - A large file streamed from disk is read once, sent as it is read and identified at its end
//   (files.ts), unless its size is one the album's writes state: then it is hashed first, so
//   that a copy of content the album holds is not sent.
// - Content the album holds as a deleted asset (`coffer-photos rm`) is not stored again: a
//   backup does not undo a deletion. It is reported `deleted`.
// - Upload sessions are recorded while open; the next run aborts those a crash left behind,
//   except one that a pending upload continues: an original sent in parts whose upload was cut
//   (a crash, a kill, the network) continues from what the server holds (files.ts ResumeStore),
//   unless the file changed since.
// - Stopping (the signal) lets the files in flight finish and starts no new one.
// The state store is a port: node/state.ts keeps it in node:sqlite; a browser can keep it in
// IndexedDB.
import { sha256 } from '@noble/hashes/sha2.js'
import { equalBytes, fromBase64, toHex } from '../sdk/bytes.ts'
import { statedOriginalHash, statedPlaintextSize } from '../sdk/manifest.ts'
import { feedEntries } from './albums.ts'
import { AssetMovedOnError, replaceFile, type ReplaceTarget } from './edits.ts'
import { contentMacOf } from './format/content.ts'
import { assetIdFor, namedAssetIdFor } from './format/ids.ts'
import { openOriginalKeys, sealOriginalKeys } from './format/resume.ts'
import { ProtocolUnsupportedError } from './protocol.ts'
import { transientFailure } from './retry.ts'
import {
  FileTransferError,
  restoreFile,
  Tap,
  type BackupResult,
  type BackupTarget,
  type FileSource,
  type MediaFacts,
  type ResumeStore,
  type Sha256Hasher,
  type StoredOriginals,
  type UploadProgress,
} from './files.ts'
import { backupFile, causedBy } from './upload.ts'

/** What the local index recorded of a file backed up. */
export interface IndexedFile {
  readonly path: string
  readonly assetId: string
  /** SHA-256 of the plaintext, hex. */
  readonly contentHash: string
  /** The content's keyed hash (format/content.ts), hex; null in records older than it. */
  readonly contentMac: string | null
  /** How many other paths of the album the index records as the same asset (a duplicate, a hard link, a file moved from there). */
  readonly sharedPaths: number
  /** The asset's version (its original's ciphertext hash) this device last wrote or saw at this path; null in records older than it. */
  readonly version: string | null
}

/** What a device remembers between runs: the local index of the files it backed up, and its open upload sessions. */
export interface SyncState {
  /**
   * The asset this device stored a file as, when the same path, size, mtime and identity (device
   * and inode numbers; null where the platform has none) was backed up to this album before.
   */
  knownAsset(albumId: string, path: string, size: number, modified: number | null, identity: string | null): Promise<string | null>
  /** What this device last backed up at this path of the album, whatever the file is now. */
  lastBackedUp(albumId: string, path: string): Promise<IndexedFile | null>
  remember(entry: {
    albumId: string
    path: string
    size: number
    modified: number | null
    identity: string | null
    contentHash: string
    contentMac: string | null
    assetId: string
    version: string | null
  }): Promise<void>
  uploadOpened(uploadId: string): Promise<void>
  uploadEnded(uploadId: string): Promise<void>
  /** Upload sessions opened and not ended (a crash left them open), but those a pending upload continues. */
  openUploads(): Promise<string[]>
  /** The upload of this path that did not finish (its resume point, sealed), with the file as it was then; null when none. */
  pendingUpload(albumId: string, path: string): Promise<PendingUpload | null>
  savePendingUpload(albumId: string, path: string, pending: PendingUpload): Promise<void>
  dropPendingUpload(albumId: string, path: string): Promise<void>
  /** The sealed keys (format/resume.ts sealOriginalKeys) of an original this device sent under keys of its own, by its content (hex SHA-256) and chunk size, with its plaintext size. */
  storedOriginal(contentHash: string, chunkSize: number): Promise<{ readonly size: number; readonly sealed: Uint8Array } | null>
  rememberOriginal(contentHash: string, chunkSize: number, size: number, sealed: Uint8Array): Promise<void>
  /** True when this device sent an original of this plaintext size under keys of its own: a large file of that size is hashed first. */
  storesOriginalOfSize(size: number): Promise<boolean>
}

/** An upload inside a file that a later run continues (files.ts ResumeStore), and the file it was of. */
export interface PendingUpload {
  readonly size: number
  readonly modified: number | null
  readonly identity: string | null
  readonly uploadId: string
  /** The resume point, sealed (format/resume.ts). */
  readonly sealed: Uint8Array
}

/** A file found by a walk. */
export interface Candidate {
  /** Relative to the folder backed up, "/" between names: the name stored in the metadata. */
  readonly path: string
  readonly size: number
  readonly modified: number | null
  /** The file's identity on its file system (device and inode numbers), when the platform has one. */
  readonly identity?: string
  source(): Promise<FileSource>
  /** Capture time, dimensions and derivatives (node/media.ts); only asked for a file that is sent. */
  describe?(): Promise<MediaFacts>
}

/**
 * `deleted`: the album holds this content as an asset deleted since (`coffer-photos rm`): not
 * stored again, so that a backup does not undo a deletion. `replaced`: a file backed up before
 * whose content changed, stored as a new version of its asset. `unchanged` includes a file
 * moved or renamed since (the index knows it by its identity). `kept`: the album holds a newer
 * version written elsewhere and the file did not change here: nothing sent. `conflict`: both
 * changed: nothing sent, the file named (BackupSummary.conflicts).
 */
export type FileOutcome = 'stored' | 'replaced' | 'present' | 'unchanged' | 'kept' | 'conflict' | 'deleted' | 'failed'

export type BackupEvent =
  | { readonly type: 'start'; readonly files: number; readonly bytes: number; readonly abortedUploads: number }
  | {
      readonly type: 'file'
      readonly path: string
      readonly outcome: FileOutcome
      readonly size: number
      readonly sentBytes: number
      readonly assetId: string | null
      readonly error?: string
      /** Why a file is `kept` or a `conflict`. */
      readonly reason?: string
    }
  | { readonly type: 'retry'; readonly path: string; readonly attempt: number; readonly error: string }

export interface BackupSummary {
  readonly files: number
  readonly bytes: number
  readonly stored: number
  readonly replaced: number
  readonly present: number
  readonly unchanged: number
  /** Files unchanged here whose album version was written elsewhere since: the album's is kept. */
  readonly kept: number
  /** Files changed here whose album version was written elsewhere since too: nothing sent (conflicts names them). */
  readonly conflict: number
  /** Files whose content the album holds as a deleted asset: not stored again. */
  readonly deleted: number
  readonly failed: number
  /** Stored (or replaced) files whose encrypted original the account already held: only their derivatives and metadata were sent (private dedup). */
  readonly deduplicated: number
  readonly sentBytes: number
  /** Files whose upload continued where an interrupted one stopped, and the bytes of their originals not sent again. */
  readonly resumed: number
  readonly resumedBytes: number
  /** True when the signal stopped the run before every file was seen. */
  readonly stopped: boolean
  readonly failures: readonly { readonly path: string; readonly error: string }[]
  readonly conflicts: readonly { readonly path: string; readonly reason: string }[]
}

export interface BackupRun {
  /** Where to; it can check signatures too, to continue an asset's chain (a changed file is a replace). */
  readonly target: ReplaceTarget
  readonly state: SyncState
  /** Files in flight at once; 4 unless given. */
  readonly concurrency?: number
  /** Tries per file when the network or the server fails (transient); 3 unless given. */
  readonly attempts?: number
  readonly signal?: AbortSignal
  readonly onEvent?: (event: BackupEvent) => void
  /** Told where each file's upload is, as it goes (BackupOptions.onProgress), with the file's path: for a progress bar that moves within files. */
  readonly onProgress?: (path: string, progress: UploadProgress) => void
  /** The album as an earlier run over it left it (albumView): only the feed's newer entries are read. A new one unless given. */
  readonly view?: AlbumView
  /** The totals for progress, from a quick first walk; the run does not need them. */
  readonly totals?: { readonly files: number; readonly bytes: number }
}

/**
 * What a backup knows of its album from the feed, kept between runs over the same album (`backup
 * --watch`): each asset's latest action (live ones are not sent again, deleted ones not brought
 * back) and where its latest entry is (a replace reads that one entry, not the feed again).
 * `catchUp` reads only the entries after the last one it saw, this device's own writes included.
 */
export interface AlbumView {
  readonly albumId: string
  readonly live: Set<string>
  readonly deleted: Set<string>
  readonly positions: Map<string, number>
  /**
   * The plaintext sizes its writes state (their signatures not checked: a hint): a large file of
   * one of these sizes is hashed before it is sent (BackupOptions.hashFirst), in case the album
   * holds its content; any other is read once and sent as it is read.
   */
  readonly sizes: Set<number>
  /** Each live asset's current version, its original's ciphertext hash as its latest write states it (a hint: replaceFile checks it signed). */
  readonly versions: Map<string, string>
  catchUp(client: BackupTarget['client']): Promise<void>
}

export function albumView(albumId: string): AlbumView {
  let through = 0
  const view: AlbumView = {
    albumId,
    live: new Set(),
    deleted: new Set(),
    positions: new Map(),
    sizes: new Set(),
    versions: new Map(),
    async catchUp(client) {
      for await (const entry of feedEntries(client, albumId, { after: through })) {
        through = entry.sync_seq
        view.positions.set(entry.asset_id, entry.sync_seq)
        const manifest = fromBase64(entry.manifest_cbor)
        const size = statedPlaintextSize(manifest)
        if (size !== null) view.sizes.add(size)
        const version = statedOriginalHash(manifest)
        if (version !== null) view.versions.set(entry.asset_id, version)
        if (entry.action === 'delete') {
          view.live.delete(entry.asset_id)
          view.deleted.add(entry.asset_id)
        } else {
          view.deleted.delete(entry.asset_id)
          view.live.add(entry.asset_id)
        }
      }
    },
  }
  return view
}

/**
 * The error in `error`'s cause chain that every other file would meet too, or null: the session
 * ended (401), the account is suspended (403), over quota (507), or the album needs a protocol
 * version this client does not speak (update it). The run stops and throws it.
 */
export function fatalCause(error: unknown): unknown {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    if (at instanceof ProtocolUnsupportedError) return at
    const status = (at as { status?: unknown }).status
    if (typeof status === 'number') return status === 401 || status === 403 || status === 507 ? at : null
  }
  return null
}

/** SHA-256 of no bytes: the content id of empty content is the album's record (albums.ts). */
const EMPTY_SHA256 = sha256(new Uint8Array(0))

/** Why a file is `kept` or a `conflict` (the file event's reason, the summary's conflicts). */
const KEPT = 'the album holds a newer version, written elsewhere; kept'
const CONFLICT = 'changed here and in the album (a newer version written elsewhere): nothing sent; choose one with `replace` or `restore`'

/** The plaintext's SHA-256: told by a source held in memory, else read once. */
async function contentHashOf(source: FileSource, hasher?: Sha256Hasher): Promise<Uint8Array> {
  const told = await source.digest?.()
  if (told !== undefined) return told
  const tap = new Tap(hasher)
  for await (const _ of tap.through(source.open()));
  return tap.digest()
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Backs up every candidate into the run's album; see the top of this file. */
export async function backupAll(run: BackupRun, candidates: AsyncIterable<Candidate> | Iterable<Candidate>): Promise<BackupSummary> {
  const { target, state } = run
  const emit = run.onEvent ?? (() => {})
  let abortedUploads = 0
  for (const uploadId of await state.openUploads()) {
    await target.client.abortUploadSession(uploadId).catch(() => {}) // already ended or expired: the same for us
    await state.uploadEnded(uploadId)
    abortedUploads++
  }
  const view = run.view ?? albumView(target.albumId)
  if (view.albumId !== target.albumId) throw new TypeError(`the album view is of album ${view.albumId}, not ${target.albumId}`)
  await view.catchUp(target.client)
  const { live, deleted, positions, sizes, versions } = view
  emit({ type: 'start', files: run.totals?.files ?? 0, bytes: run.totals?.bytes ?? 0, abortedUploads })
  const totals = {
    files: 0,
    bytes: 0,
    stored: 0,
    replaced: 0,
    present: 0,
    unchanged: 0,
    kept: 0,
    conflict: 0,
    deleted: 0,
    failed: 0,
    deduplicated: 0,
    sentBytes: 0,
    resumed: 0,
    resumedBytes: 0,
  }
  const failures: { path: string; error: string }[] = []
  const conflicts: { path: string; reason: string }[] = []
  let fatalError: unknown = null
  const iterator = (Symbol.asyncIterator in candidates ? candidates[Symbol.asyncIterator]() : candidates[Symbol.iterator]()) as
    | AsyncIterator<Candidate>
    | Iterator<Candidate>

  /** Finishes a file: `error` for a failed one, `reason` for one kept or in conflict, `result` for one uploaded. */
  const finish = (
    candidate: Candidate,
    outcome: FileOutcome,
    assetId: string | null,
    sentBytes: number,
    told: { readonly error?: string; readonly reason?: string; readonly result?: BackupResult } = {},
  ): void => {
    const { error, reason, result } = told
    totals.files++
    if (result?.reusedOriginal === true) totals.deduplicated++
    if (result !== undefined && result.resumedBytes > 0) {
      totals.resumed++
      totals.resumedBytes += result.resumedBytes
    }
    totals.bytes += candidate.size
    totals[outcome]++
    totals.sentBytes += sentBytes
    if (error !== undefined) failures.push({ path: candidate.path, error })
    if (outcome === 'conflict' && reason !== undefined) conflicts.push({ path: candidate.path, reason })
    emit({
      type: 'file',
      path: candidate.path,
      outcome,
      size: candidate.size,
      sentBytes,
      assetId,
      ...(error === undefined ? {} : { error }),
      ...(reason === undefined ? {} : { reason }),
    })
  }

  /** True when the album's current version of `seen`'s asset is not the one this device last wrote or saw at its path: written elsewhere since. */
  const movedOn = (seen: IndexedFile): boolean => {
    const current = versions.get(seen.assetId)
    return seen.version !== null && current !== undefined && current !== seen.version
  }

  /** The content mac the album's current version of a live asset states (its metadata, signature checked); undefined when it states none. */
  const albumContentMac = async (assetId: string): Promise<Uint8Array | undefined> => {
    const entry = (await target.client.feed(target.albumId, positions.get(assetId)! - 1, 1)).entries[0]
    if (entry?.asset_id !== assetId) return undefined
    return (await restoreFile(target, entry)).metadata.contentMac
  }

  /** The originals this device sent under keys of their own, their keys sealed in the state store: reused in any album (decision 0030's dedup for large files). */
  const originals: StoredOriginals = {
    async find(content, chunkSize) {
      const stored = await state.storedOriginal(toHex(content), chunkSize)
      if (stored === null) return null
      const keys = await openOriginalKeys(target.masterKey, content, stored.sealed).catch(() => null)
      return keys === null ? null : { ...keys, size: stored.size }
    },
    async remember(content, chunkSize, original) {
      await state.rememberOriginal(
        toHex(content),
        chunkSize,
        original.size,
        await sealOriginalKeys(target.masterKey, content, original.size, chunkSize, original),
      )
    },
  }

  /** The name the album's current version of a live asset states (its metadata, signature checked), read once per run. */
  const names = new Map<string, Promise<string>>()
  const albumName = (assetId: string): Promise<string> => {
    let name = names.get(assetId)
    if (name === undefined) {
      name = (async () => {
        const entry = (await target.client.feed(target.albumId, positions.get(assetId)! - 1, 1)).entries[0]
        if (entry?.asset_id !== assetId) throw new Error(`the feed has no entry of asset ${assetId} where it was`)
        return (await restoreFile(target, entry)).metadata.name
      })()
      names.set(assetId, name)
      name.catch(() => names.delete(assetId)) // a failure is not kept: the next file asks again
    }
    return name
  }
  /**
   * Which path of this run claimed a content id the album did not hold yet, and when its file is
   * done: the other paths of that content go one after another behind it, as the server takes one
   * upload session of an original per album at a time (it finds the session by the original's
   * hash: two copies' sessions open at once could be taken for one another).
   */
  const claimed = new Map<string, { readonly path: string; readonly done: Promise<void> }>()
  /** By content id: when the last path of this run queued behind its claim is done. */
  const lastInLine = new Map<string, Promise<void>>()
  /** The paths that have had their turn (a retry of one does not queue again). */
  const hadTurn = new Set<string>()
  const release = new Map<string, () => void>()
  /**
   * The asset id of the file at `path` with this content: its content id, unless that names
   * another file (a copy or the place a file was renamed from, in the album or earlier in this
   * run) or the album's record (empty content); then one of its own, from its name.
   */
  const assetIdOf = async (path: string, content: Uint8Array): Promise<string> => {
    const [byContent, named] = await Promise.all([
      assetIdFor(target.masterKey, target.albumId, content),
      namedAssetIdFor(target.masterKey, target.albumId, content, path),
    ])
    if (equalBytes(content, EMPTY_SHA256) || live.has(named) || deleted.has(named)) return named
    const holder = claimed.get(byContent)
    if (holder !== undefined && holder.path === path) return byContent
    if (holder !== undefined) {
      if (!hadTurn.has(path)) {
        hadTurn.add(path)
        const before = lastInLine.get(byContent) ?? holder.done
        lastInLine.set(byContent, new Promise((resolve) => release.set(path, resolve)))
        await before
      }
      return named
    }
    if (!live.has(byContent)) {
      claimed.set(byContent, { path, done: new Promise((resolve) => release.set(path, resolve)) })
      return byContent
    }
    return (await albumName(byContent)) === path ? byContent : named
  }

  const one = async (candidate: Candidate): Promise<void> => {
    const identity = candidate.identity ?? null
    const record = (assetId: string, contentHash: string, contentMac: string | null, version: string | null) =>
      state.remember({
        albumId: target.albumId,
        path: candidate.path,
        size: candidate.size,
        modified: candidate.modified,
        identity,
        contentHash,
        contentMac,
        assetId,
        version,
      })
    const known = await state.knownAsset(target.albumId, candidate.path, candidate.size, candidate.modified, identity)
    if (known !== null && live.has(known)) {
      const seen = await state.lastBackedUp(target.albumId, candidate.path)
      if (seen !== null && seen.assetId === known && movedOn(seen)) return finish(candidate, 'kept', known, 0, { reason: KEPT })
      return finish(candidate, 'unchanged', known, 0)
    }
    if (known !== null && deleted.has(known)) return finish(candidate, 'deleted', known, 0)
    // Changed since this device backed it up: a new version of the same asset, unless another
    // path is that asset too (a duplicate, a hard link, the place a file was moved from): then the
    // album must keep it, and the new content is stored as an asset of its own.
    const before = await state.lastBackedUp(target.albumId, candidate.path)
    const changed = before !== null && live.has(before.assetId) && before.sharedPaths === 0 ? before : null
    /**
     * A file changed here (size, mtime or inode) whose asset the album holds in a version written
     * elsewhere since: nothing is sent, its content decides. The content this device last backed
     * up (only touched) is `kept`; the album's current content (the same edit made there, e.g.
     * `replace` with this very file) is recorded as that version, `unchanged`; any other is a `conflict`.
     */
    const settle = async (seen: IndexedFile, source: FileSource): Promise<void> => {
      const content = await contentHashOf(source, target.sha256)
      if (toHex(content) === seen.contentHash) {
        await record(seen.assetId, seen.contentHash, seen.contentMac, seen.version)
        return finish(candidate, 'kept', seen.assetId, 0, { reason: KEPT })
      }
      const mac = await contentMacOf(target.masterKey, content)
      const inAlbum = await albumContentMac(seen.assetId)
      if (inAlbum !== undefined && equalBytes(mac, inAlbum)) {
        await record(seen.assetId, toHex(content), toHex(mac), versions.get(seen.assetId) ?? null)
        return finish(candidate, 'unchanged', seen.assetId, 0)
      }
      return finish(candidate, 'conflict', seen.assetId, 0, { reason: CONFLICT })
    }
    // An upload of this path that did not finish continues, unless the file changed since.
    const resume: ResumeStore = {
      async load() {
        const pending = await state.pendingUpload(target.albumId, candidate.path)
        if (pending === null || (pending.size === candidate.size && pending.modified === candidate.modified && pending.identity === identity)) return pending
        await target.client.abortUploadSession(pending.uploadId).catch(() => {})
        await state.dropPendingUpload(target.albumId, candidate.path)
        return null
      },
      save: (uploadId, sealed) =>
        state.savePendingUpload(target.albumId, candidate.path, { size: candidate.size, modified: candidate.modified, identity, uploadId, sealed }),
      clear: () => state.dropPendingUpload(target.albumId, candidate.path),
    }
    const attempts = run.attempts ?? 3
    for (let attempt = 1; ; attempt++) {
      let uploadId: string | null = null
      try {
        const options = {
          resume,
          hashFirst: async (size: number) => sizes.has(size) || (await state.storesOriginalOfSize(size)),
          originals,
          ...(run.onProgress === undefined ? {} : { onProgress: (progress: UploadProgress) => run.onProgress!(candidate.path, progress) }),
          ...(candidate.describe === undefined ? {} : { describe: () => candidate.describe!() }),
          onUploadOpened: async (id: string) => {
            uploadId = id
            await state.uploadOpened(id)
          },
        }
        const source = await candidate.source()
        if (changed !== null && movedOn(changed)) return await settle(changed, source)
        const result =
          changed === null
            ? await backupFile(target, source, {
                ...options,
                isStored: (assetId) => live.has(assetId) || deleted.has(assetId),
                assetIdOf: (content) => assetIdOf(candidate.path, content),
              })
            : await replaceFile(target, changed.assetId, source, {
                ...options,
                currentContentHash: changed.contentHash,
                position: positions.get(changed.assetId)!,
                ...(changed.version === null ? {} : { from: changed.version }),
              })
        if (uploadId !== null) await state.uploadEnded(uploadId)
        if (result.ciphertextHash !== null) versions.set(result.assetId, result.ciphertextHash)
        await record(result.assetId, result.contentHash, result.contentMac, versions.get(result.assetId) ?? null)
        live.add(result.assetId)
        const outcome: FileOutcome =
          result.status === 'present'
            ? deleted.has(result.assetId)
              ? 'deleted'
              : changed !== null
                ? 'unchanged'
                : 'present'
            : changed !== null
              ? 'replaced'
              : 'stored'
        return finish(candidate, outcome, result.assetId, result.sentBytes, { result })
      } catch (error) {
        if (uploadId !== null) await state.uploadEnded(uploadId) // backupFile aborted it
        // Written elsewhere while this run read the album: the same as found before the upload.
        if (causedBy(error, AssetMovedOnError)) return finish(candidate, 'conflict', changed?.assetId ?? null, 0, { reason: CONFLICT })
        const stop = fatalCause(error)
        if (stop !== null) {
          fatalError ??= stop
          return
        }
        const message = (error as Error)?.message ?? String(error)
        if (!transientFailure(error) || attempt >= attempts || run.signal?.aborted === true) {
          return finish(candidate, 'failed', error instanceof FileTransferError ? error.assetId : null, 0, { error: message })
        }
        emit({ type: 'retry', path: candidate.path, attempt, error: message })
        await pause(Math.min(30_000, 1000 * 2 ** (attempt - 1)))
      }
    }
  }

  const worker = async (): Promise<void> => {
    while (run.signal?.aborted !== true && fatalError === null) {
      const next = await iterator.next()
      if (next.done === true) return
      try {
        await one(next.value)
      } finally {
        release.get(next.value.path)?.()
        release.delete(next.value.path)
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, run.concurrency ?? 4) }, worker))
  if (fatalError !== null) throw fatalError
  const stopped = run.signal?.aborted === true && (await iterator.next()).done !== true
  return { ...totals, stopped, failures, conflicts }
}
