// The upload of one file into an album: backupFile, and replaceFile's new version (edits.ts), as
// named stages over one record (docs/client-library.md, "The upload of one file"; decision 0041).
//
//   plan      the file's keys (from a resume point, from its content, or new), the way its
//             original goes (whole, in parts, in one pass), its hashes when a resume point has them
//   hash      a file sent in two passes is encrypted once to hash its plaintext (the asset id) and
//             its ciphertext (what the session declares); content the album holds ends it here
//   describe  capture time, dimensions and derivatives (sealed under the file key), or a resume
//             point's
//   session   an upload session opened, or the one a resume point kept (asked how far the server
//             got), and the resume point stored; the server may hold the original already (held)
//   send      the original by its way, then the derivatives the server lacks; a file sent in one
//             pass is identified only now, and content the album holds is not stored
//   commit    the metadata blob and the signed manifest, applied through the protocol's 426
//
// An upgrade window met in session, send or commit ends the session, waits until the window
// closes and runs them again (protocol.ts). A resume point the server refuses (its session ended,
// the file is not what was sent) is dropped and the whole runs again from the start, once
// (storeFile). Each stage tells BackupOptions.onProgress where it is, with the bytes read,
// encrypted and sent so far and what they will be at the end given the way (UploadProgress).
//
// Why two passes: the server wants the original's SHA-256 and size before it takes the bytes
// (the upload session declares them, the blob's URL names the hash), and the SDK's uploadAsset
// holds every blob in memory. So a file is read twice, with one file key and one stream salt
// picked up front: pass 1 encrypts to hash and count the ciphertext (the bytes are dropped),
// pass 2 encrypts again — the same key, salt and plaintext give the same bytes — and streams them
// to the server. Only pass 2's ciphertext leaves the device, so no GCM nonce is ever seen with two
// plaintexts even if the file changed in between; a change is caught by the size and hash checks
// (and by the server, which refuses a blob whose hash is not its URL's). A source held in memory
// (node/files.ts) makes both passes over the same bytes, read once from disk, and tells its hash
// up front (FileSource.digest): its keys then follow from its content (format/content.ts), so the
// same photo in two albums is one encrypted original. A large source streamed from disk makes one
// pass instead (decision 0034): the session declares its original under a provisional name, the
// parts are sent as the file is read, and the last part names the blob; unless
// BackupOptions.hashFirst asks for the two passes.
import { equalBytes, fromHex, toHex } from '../sdk/bytes.ts'
import { CofferProblem, type CofferClient, type UploadSessionView } from '../sdk/client.ts'
import { buildLifecycleWrite } from '../sdk/manifest.ts'
import { digestSha256, randomBytes } from './format/bytes.ts'
import { contentKeys, contentMacOf } from './format/content.ts'
import { assetIdFor } from './format/ids.ts'
import { GCM_TAG_BYTES, generateFileKey } from './format/keys.ts'
import { sealMetadata, type AssetMetadata } from './format/metadata.ts'
import { manifestContent } from './format/membership.ts'
import { openResumePoint, sealResumePoint, type ResumePoint, type SealedDerivative } from './format/resume.ts'
import { ciphertextSize, DEFAULT_CHUNK_SIZE, encryptBytes, encryptStream, HEADER_BYTES, SALT_BYTES } from './format/stream.ts'
import {
  CLIENT_VERSION,
  CRYPTO_SUITE_V1,
  FileTransferError,
  albumKeyOf,
  reasonOf,
  sha256Of,
  staleRevival,
  Tap,
  writeEpoch,
  type BackupOptions,
  type BackupResult,
  type BackupTarget,
  type ChainHead,
  type FileSource,
  type MediaFacts,
  type ResumeStore,
  type StoredOriginals,
  type TransferTotals,
  type UploadProgress,
  type UploadStage,
  type UploadWay,
} from './files.ts'
import { appliedWrite } from './history.ts'
import { albumPinOf, knownVersion, pinnedVersion, upgradeInFlight, waitForUpgrade, writeWithProtocol } from './protocol.ts'
import { transientFailure } from './retry.ts'

/**
 * Backs up one file as an asset of the album: hashes and encrypts it, and unless the album
 * already holds its content, sends the original and its derivatives to an upload session and
 * applies a signed `create` manifest (key_mode "wrapped") carrying the metadata blob. A 426 or an
 * upgrade window on the way is carried out (protocol.ts). Throws FileTransferError naming the file.
 */
export function backupFile(target: BackupTarget, source: FileSource, options: BackupOptions = {}): Promise<BackupResult> {
  return storeFile(target, source, options, { action: 'create' })
}

/** How storeFile writes: a new asset (its id from its content), or a new version of an existing one. */
export type Lifecycle =
  | { readonly action: 'create' }
  | {
      readonly action: 'replace'
      readonly assetId: string
      readonly head: ChainHead
      /** The asset's current plaintext SHA-256 (hex) when the caller knows it: the same content again is not sent (answers `present`). */
      readonly currentContentHash?: string
      /** Reads the chain head again, after a 409 stale_revival (someone wrote the asset meanwhile). */
      readonly reread: () => Promise<ChainHead>
    }

/**
 * backupFile's work, for a `create` or a `replace` (replaceFile in edits.ts): the stages, once;
 * then again from the start, without the resume point, when the server refuses what it continued.
 */
export async function storeFile(target: BackupTarget, source: FileSource, options: BackupOptions, lifecycle: Lifecycle): Promise<BackupResult> {
  const meter = new Meter(source, options.onProgress)
  const resumed = await resumedUpload(target, source, options.resume)
  try {
    return await runStages(await plan(target, source, options, lifecycle, resumed, meter))
  } catch (error) {
    if (causedBy(error, OriginalGone))
      return runStages(await plan(target, source, { ...options, originals: forgetful(options.originals!) }, lifecycle, null, meter))
    if (resumed === null || !uploadRefused(error)) throw error
    return runStages(await plan(target, source, options, lifecycle, null, meter))
  }
}

// --- the state record ------------------------------------------------------------------------

/** A file's two hashes: of its plaintext (the asset id, the content mac) and of its encrypted original (the blob's name). */
interface Hashes {
  readonly content: Uint8Array
  readonly ciphertextHash: string
}

/** What the asset is, once its hashes are known. */
interface Identity {
  readonly assetId: string
  /** Hex SHA-256 of the plaintext. */
  readonly contentHash: string
  readonly contentMac: Uint8Array
}

/** The upload session of this round, as the session stage found it. */
interface Session {
  readonly uploadId: string
  /** The name the original is declared under: its hash, or a provisional name until its last part (one pass). */
  readonly declared: string
  readonly original: UploadSessionView['blobs'][number]
  /** Hashes of the declared blobs the server does not hold yet. */
  readonly missing: ReadonlySet<string>
}

/** A resume point opened, with its session. */
type Resumed = ResumePoint & { readonly uploadId: string }

/**
 * Everything one file's upload knows, in one place: what it was given, then what each stage
 * learns (the stage that writes a field is named beside it). The stages are the only writers.
 */
interface Upload {
  readonly target: BackupTarget
  readonly source: FileSource
  readonly options: BackupOptions
  readonly lifecycle: Lifecycle
  readonly meter: Meter
  readonly chunkSize: number
  readonly amkVersion: number
  /** The original's size encrypted; it goes in parts when that is more than one part. */
  readonly ciphertextSize: number
  readonly inParts: boolean
  /** plan: the resume point this run continues from, or null. */
  readonly resumed: Resumed | null
  /** plan: the content's SHA-256 when the source tells it up front; the original's keys then follow from it. */
  readonly knownContent: Uint8Array | undefined
  /** plan: the content mac, when the keys follow from the content. */
  readonly derivedMac: Uint8Array | null
  /** plan, or hash when the content's original is stored already (BackupOptions.originals): what encrypts the original. */
  fileKey: Uint8Array
  salt: Uint8Array
  /** hash: true when the keys and hashes are a stored original's: the server must hold it, nothing is encrypted with them. */
  reusesOriginal: boolean
  /** plan (a one-pass file, until its last part): the name the session declares the original under. */
  readonly provisionalName: string | null
  /** plan, then session: how the original goes. */
  way: UploadWay
  /** plan (a resume point's), hash (pass 1) or send (one pass): the hashes, once known. */
  hashes: Hashes | null
  /** hash or send, once the hashes are known: what the asset is. */
  identity: Identity | null
  /** describe: what the metadata says beyond the source's facts, and the derivatives sealed. */
  facts: ResumePoint['facts'] | null
  derivatives: readonly SealedDerivative[]
  /** Before the first session, then after an upgrade window: the protocol version the write states. */
  protocolVersion: string | null
  /** session: the session a resume point kept, until it is tried (once). */
  resumable: Resumed | null
  /** session: the upload session of this round; null before it and once it ended. */
  session: Session | null
  /** session: true once this upload's resume point is the one stored: a network failure then keeps the session for the next try. */
  pointStored: boolean
  /** session: the resume point stored (this upload's, or the one it continues); send updates its part in flight. */
  point: ResumePoint | null
  /** send: the ciphertext bytes this round sent (the original's, the derivatives'), and those of the original an earlier, interrupted try had sent. */
  sentBytes: number
  resumedBytes: number
  /** commit: the chain head a replace continues (read again after a stale revival). */
  head: ChainHead | null
}

// --- progress ----------------------------------------------------------------------------------

const NOTHING: TransferTotals = { read: 0, encrypted: 0, sent: 0 }
const plus = (a: TransferTotals, b: TransferTotals): TransferTotals => ({ read: a.read + b.read, encrypted: a.encrypted + b.encrypted, sent: a.sent + b.sent })

/** Counts what a file's upload reads, encrypts and sends, and tells onProgress with each stage's expectations. */
class Meter {
  readonly #file: { readonly name: string; readonly size: number }
  readonly #tell: ((progress: UploadProgress) => void) | undefined
  #done: TransferTotals = NOTHING
  #expected: TransferTotals = NOTHING
  #stage: UploadStage = 'plan'
  #way: UploadWay = 'whole'

  constructor(source: FileSource, tell: ((progress: UploadProgress) => void) | undefined) {
    this.#file = { name: source.name, size: source.size }
    this.#tell = tell
  }

  /** A stage begins: from here, `ahead` is left to do (the file's totals are what was done plus that). */
  enter(stage: UploadStage, way: UploadWay, ahead: TransferTotals): void {
    this.#stage = stage
    this.#way = way
    this.#expected = plus(this.#done, ahead)
    this.#emit()
  }

  add(kind: keyof TransferTotals, bytes: number): void {
    if (this.#tell === undefined || bytes === 0) return
    this.#done = { ...this.#done, [kind]: this.#done[kind] + bytes }
    this.#emit()
  }

  /** The upload ended (stored or present): what it did is what it took. */
  finish(way: UploadWay): void {
    this.enter('done', way, NOTHING)
  }

  #emit(): void {
    if (this.#tell === undefined) return
    const expected = {
      read: Math.max(this.#expected.read, this.#done.read),
      encrypted: Math.max(this.#expected.encrypted, this.#done.encrypted),
      sent: Math.max(this.#expected.sent, this.#done.sent),
    }
    this.#tell({ ...this.#file, stage: this.#stage, way: this.#way, ...this.#done, expected })
  }
}

/** `source`'s pieces as they pass, each counted. */
async function* counted(source: AsyncIterable<Uint8Array>, count: (bytes: number) => void): AsyncGenerator<Uint8Array> {
  for await (const piece of source) {
    count(piece.length)
    yield piece
  }
}

/** What sending the original by its way reads, encrypts and sends, from what the session holds of it. */
function originalAhead(up: Upload): TransferTotals {
  const held = up.session?.original.present === true ? up.ciphertextSize : (up.session?.original.received ?? 0)
  switch (up.way) {
    case 'whole':
      return { read: up.source.size, encrypted: up.ciphertextSize, sent: up.ciphertextSize }
    case 'parts':
      return { read: up.source.size - chunkAt(held, up.chunkSize) * up.chunkSize, encrypted: up.ciphertextSize - held, sent: up.ciphertextSize - held }
    case 'one-pass':
      return { read: up.source.size, encrypted: up.ciphertextSize, sent: up.ciphertextSize - held }
    case 'held':
    case 'none':
      return NOTHING
  }
}

/** The derivatives' bytes to send: those the session lacks (all of them before it opens). */
const derivativesAhead = (up: Upload): TransferTotals => ({
  ...NOTHING,
  sent: up.derivatives.filter((d) => up.session === null || up.session.missing.has(d.hash)).reduce((sum, d) => sum + d.sealed.length, 0),
})

// --- the stages -------------------------------------------------------------------------------

/** The stages in their order, with what ends the upload early (the album holds the content). */
async function runStages(up: Upload): Promise<BackupResult> {
  try {
    await hash(up)
    // Identified before anything is sent: content the album holds needs no session, not even one a resume point kept.
    const identifiedFirst = up.identity !== null
    if (identifiedFirst && alreadyStored(up)) {
      if (up.resumed !== null) await up.target.client.abortUploadSession(up.resumed.uploadId).catch(() => {})
      return await present(up)
    }
    await describe(up)
    up.protocolVersion = knownVersion(up.target.client, up.target.albumId, await albumProtocol(up.target))
    for (let round = 0; ; round++) {
      try {
        await openSession(up)
        await sendOriginal(up)
        // A file sent in one pass is identified only now: content the album already holds is not stored again.
        if (!identifiedFirst && alreadyStored(up)) {
          await endSession(up)
          return await present(up)
        }
        await sendDerivatives(up)
        return await commit(up)
      } catch (error) {
        if (!upgradeInFlight(error) || round >= 3) throw error
        // The ceremony waits for every open session: end this one, wait, and go again at the new pin.
        await endSession(up)
        if (up.pointStored) await up.options.resume?.clear()
        up.pointStored = false
        await waitForUpgrade(up.target.client, up.target.albumId)
        up.protocolVersion = await pinnedVersion(up.target.client, up.target.albumId, up.protocolVersion)
      }
    }
  } catch (error) {
    // A network or server failure while a resume point is stored keeps the session: the next
    // try continues from what the server holds. Anything else ends it.
    if (!(up.pointStored && transientFailure(error))) {
      const open = up.session?.uploadId ?? up.resumed?.uploadId ?? null
      if (open !== null) await up.target.client.abortUploadSession(open).catch(() => {})
      if (up.pointStored) await up.options.resume?.clear()
    }
    const assetId = up.lifecycle.action === 'replace' ? up.lifecycle.assetId : (up.identity?.assetId ?? null)
    throw new FileTransferError('backup', up.source.name, assetId, reasonOf(error), error)
  }
}

/** plan: the keys, the way the original goes, and the hashes a resume point has. */
async function plan(
  target: BackupTarget,
  source: FileSource,
  options: BackupOptions,
  lifecycle: Lifecycle,
  resumed: Resumed | null,
  meter: Meter,
): Promise<Upload> {
  const chunkSize = target.chunkSize ?? DEFAULT_CHUNK_SIZE
  const knownContent = resumed === null ? await source.digest?.() : undefined
  const derived = knownContent === undefined ? null : await contentKeys(target.masterKey, knownContent, chunkSize)
  const size = ciphertextSize(source.size, chunkSize)
  const inParts = size > partEnd(0, size, chunkSize)
  const hashes = resumed !== null && resumed.contentHash !== null ? { content: resumed.contentHash, ciphertextHash: resumed.ciphertextHash } : null
  // Read once, sent as it is read: a large file streamed from disk whose hashes are not known,
  // unless the caller asks for them first (the album may hold it).
  const onePass = resumed !== null ? resumed.contentHash === null : knownContent === undefined && inParts && (await options.hashFirst?.(source.size)) !== true
  const up: Upload = {
    target,
    source,
    options,
    lifecycle,
    meter,
    chunkSize,
    amkVersion: writeEpoch(target, target.albumId),
    ciphertextSize: size,
    inParts,
    resumed,
    knownContent,
    derivedMac: derived?.contentMac ?? null,
    fileKey: resumed?.fileKey ?? derived?.fileKey ?? generateFileKey(),
    salt: resumed?.salt ?? derived?.salt ?? randomBytes(SALT_BYTES),
    reusesOriginal: false,
    provisionalName: hashes === null && onePass ? (resumed?.ciphertextHash ?? toHex(randomBytes(32))) : null,
    // Until a session says what the server holds: in one pass, or hashed first and sent whole or in parts.
    way: onePass ? 'one-pass' : inParts ? 'parts' : 'whole',
    hashes,
    identity: null,
    facts: null,
    derivatives: [],
    protocolVersion: null,
    resumable: resumed,
    session: null,
    pointStored: resumed !== null,
    point: null,
    sentBytes: 0,
    resumedBytes: 0,
    head: lifecycle.action === 'replace' ? lifecycle.head : null,
  }
  const pass1 = hashes === null && !onePass ? { read: source.size, encrypted: size, sent: 0 } : NOTHING
  meter.enter('plan', up.way, plus(pass1, originalAhead(up)))
  return up
}

/** The original's ciphertext from chunk `firstChunk` on, its plaintext read from where that chunk begins; both counted. */
function encryptOriginal(up: Upload, plain: Tap, firstChunk = 0): AsyncGenerator<Uint8Array> {
  const read = counted(plain.through(up.source.open(firstChunk * up.chunkSize)), (bytes) => up.meter.add('read', bytes))
  const encrypted = encryptStream(up.fileKey, read, { role: 'original', chunkSize: up.chunkSize, salt: up.salt, firstChunk })
  return counted(encrypted, (bytes) => up.meter.add('encrypted', bytes))
}

async function drain(source: AsyncIterable<Uint8Array>): Promise<void> {
  for await (const _ of source);
}

/** hash: pass 1, for a file sent in two passes whose hashes are not known; then what the asset is. */
async function hash(up: Upload): Promise<void> {
  if (up.hashes === null && up.way !== 'one-pass') {
    up.meter.enter('hash', up.way, plus({ read: up.source.size, encrypted: up.ciphertextSize, sent: 0 }, originalAhead(up)))
    const plain = new Tap(up.target.sha256)
    const cipher = new Tap(up.target.sha256)
    await drain(cipher.through(encryptOriginal(up, plain)))
    if (plain.bytes !== up.source.size) throw new Error(`read ${plain.bytes} bytes, the source says ${up.source.size}: it changed while being read`)
    if (cipher.bytes !== up.ciphertextSize) throw new Error(`encrypted to ${cipher.bytes} bytes, expected ${up.ciphertextSize}`)
    // Keys that follow from a content must never encrypt another: a source whose bytes are not
    // the content it announced sends nothing.
    if (up.knownContent !== undefined && !equalBytes(plain.digest(), up.knownContent))
      throw new Error('the source changed while being read (its bytes are not the ones it hashed)')
    up.hashes = { content: up.knownContent ?? plain.digest(), ciphertextHash: toHex(cipher.digest()) }
    // Sent before under keys of its own: that original is this one (pass 1's bytes were only hashed).
    const stored = up.knownContent === undefined ? await up.options.originals?.find(up.hashes.content, up.chunkSize) : null
    if (stored !== null && stored !== undefined) {
      up.fileKey = stored.fileKey
      up.salt = stored.salt
      up.hashes = { content: up.hashes.content, ciphertextHash: stored.ciphertextHash }
      up.reusesOriginal = true
    }
  }
  if (up.hashes !== null) up.identity = await identify(up, up.hashes)
}

/** The asset id (from the content, for a create), the content hash and its mac. */
async function identify(up: Upload, hashes: Hashes): Promise<Identity> {
  const assetId =
    up.lifecycle.action === 'replace'
      ? up.lifecycle.assetId
      : await (up.options.assetIdOf?.(hashes.content) ?? assetIdFor(up.target.masterKey, up.target.albumId, hashes.content))
  return { assetId, contentHash: toHex(hashes.content), contentMac: up.derivedMac ?? (await contentMacOf(up.target.masterKey, hashes.content)) }
}

/** True when the album holds this content already (a create), or the asset is this content now (a replace): nothing is stored. */
function alreadyStored(up: Upload): boolean {
  const known = up.identity!
  return (
    (up.lifecycle.action === 'create' && up.options.isStored?.(known.assetId) === true) ||
    (up.lifecycle.action === 'replace' && up.lifecycle.currentContentHash === known.contentHash)
  )
}

const NO_FACTS: MediaFacts = { captured: null, capturedSource: null, capturedOffset: null, width: null, height: null, derivatives: [] }

/** describe: what the file says of itself and its derivatives, sealed under the file key; a resume point's as they were. */
async function describe(up: Upload): Promise<void> {
  up.meter.enter('describe', up.way, originalAhead(up))
  if (up.resumed !== null) {
    up.facts = up.resumed.facts
    up.derivatives = up.resumed.derivatives
  } else {
    const media = (await up.options.describe?.()) ?? NO_FACTS
    up.facts = {
      captured: media.captured,
      ...(media.capturedSource === undefined ? {} : { capturedSource: media.capturedSource }),
      ...(media.capturedOffset === undefined ? {} : { capturedOffset: media.capturedOffset }),
      width: media.width,
      height: media.height,
      ...(media.duration === undefined || media.duration === null ? {} : { duration: media.duration }),
      ...(media.camera === undefined || media.camera === null ? {} : { camera: media.camera }),
      ...(media.description === undefined || media.description === null ? {} : { description: media.description }),
      ...(media.favourite === true ? { favourite: true } : {}),
      location: media.location ?? null,
    }
    up.derivatives = await Promise.all(
      media.derivatives.map(async (d) => {
        const sealed = await encryptBytes(up.fileKey, d.bytes, { role: 'derivative' })
        up.meter.add('encrypted', sealed.length)
        return { kind: d.kind, type: d.type, size: d.bytes.length, hash: toHex(sha256Of(sealed, up.target.sha256)), sealed }
      }),
    )
  }
}

/** A resumed session that would expire sooner than this is not continued: a new one is opened. */
const RESUME_MARGIN_MS = 10 * 60 * 1000

/** The session a resume point kept, when it is still open with time to finish; tried once. */
async function resumedSession(up: Upload): Promise<UploadSessionView | null> {
  const kept = up.resumable
  up.resumable = null
  if (kept === null) return null
  const view = await up.target.client.uploadSessionStatus(kept.uploadId).catch((error: unknown) => {
    if (error instanceof CofferProblem && error.status === 404) return null
    throw error
  })
  return view !== null && Date.parse(view.expires_at) > Date.now() + RESUME_MARGIN_MS ? view : null
}

/** session: the resumed session or a new one, told to onUploadOpened; the resume point of an original sent in parts stored. */
async function openSession(up: Upload): Promise<void> {
  const { target, options } = up
  up.meter.enter('session', up.way, plus(originalAhead(up), derivativesAhead(up)))
  const declared = up.hashes?.ciphertextHash ?? up.provisionalName!
  const view =
    (await resumedSession(up)) ??
    (await target.client.openUploadSession({
      album_id: target.albumId,
      crypto_suite_id: CRYPTO_SUITE_V1,
      ciphertext_hash: declared,
      blobs: [
        { role: 'original', hash: declared, size: up.ciphertextSize },
        ...up.derivatives.map((d) => ({ role: 'derivative' as const, hash: d.hash, size: d.sealed.length })),
      ],
    }))
  const original = view.blobs.find((blob) => blob.role === 'original')!
  // A stored original's keys never encrypt: when the server no longer holds it, start again with keys of this upload's own.
  if (up.reusesOriginal && !original.present) {
    await target.client.abortUploadSession(view.upload_id).catch(() => {})
    throw new OriginalGone('the original stored before is not on the server any more')
  }
  up.session = { uploadId: view.upload_id, declared, original, missing: new Set(view.blobs.filter((blob) => !blob.present).map((blob) => blob.hash)) }
  await options.onUploadOpened?.(view.upload_id)
  if (up.resumed?.uploadId === view.upload_id) up.point = up.resumed
  else if (up.inParts && !original.present && options.resume !== undefined) {
    const point: ResumePoint = {
      contentHash: up.hashes?.content ?? null,
      ciphertextHash: declared,
      ciphertextSize: up.ciphertextSize,
      chunkSize: up.chunkSize,
      fileKey: up.fileKey,
      salt: up.salt,
      facts: up.facts!,
      derivatives: up.derivatives,
      inFlight: null,
    }
    await options.resume.save(view.upload_id, await sealResumePoint(target.masterKey, view.upload_id, point))
    up.point = point
    up.pointStored = true
  }
  // What the server holds decides the way: nothing of an original it holds is sent (held); one
  // whose hashes are known now (a one-pass file sent before an upgrade window) goes in parts.
  up.way = up.hashes === null ? 'one-pass' : original.present ? 'held' : up.inParts ? 'parts' : 'whole'
  up.sentBytes = 0
  up.resumedBytes = 0
}

/** send: the original by its way; a file sent in one pass is identified at its end. */
async function sendOriginal(up: Upload): Promise<void> {
  const { target } = up
  const session = up.session!
  up.meter.enter('send', up.way, plus(originalAhead(up), derivativesAhead(up)))
  const size = up.ciphertextSize
  switch (up.way) {
    case 'one-pass': {
      // Read once, from its start, hashed, encrypted and sent as it is read, from the first byte
      // the server does not hold (all of it when an earlier run's last part already named the
      // blob); the last part tells the server the blob's hash.
      up.resumedBytes = session.original.present ? size : session.original.received
      const plain = new Tap(target.sha256)
      const cipher = new Tap(target.sha256)
      let cipherDigest: Uint8Array | undefined
      const blobDigest = (): Uint8Array => (cipherDigest ??= cipher.digest())
      const parts = partsOf(dropFirst(cipher.through(encryptOriginal(up, plain)), up.resumedBytes), up.resumedBytes, size, up.chunkSize)
      await sendParts(up, session.declared, parts, blobDigest)
      if (plain.bytes !== up.source.size) throw new Error(`read ${plain.bytes} bytes, the source says ${up.source.size}: it changed while being read`)
      up.hashes = { content: plain.digest(), ciphertextHash: toHex(blobDigest()) }
      if (session.original.present && session.original.hash !== up.hashes.ciphertextHash)
        throw new StaleResumePoint('the file is not the one the interrupted upload sent')
      up.sentBytes += size - up.resumedBytes
      up.identity = await identify(up, up.hashes)
      break
    }
    case 'whole': {
      // Pass 2: the same bytes again, streamed.
      const plain = new Tap(target.sha256)
      const cipher = new Tap(target.sha256)
      await target.client.putBlob(session.uploadId, up.hashes!.ciphertextHash, cipher.through(encryptOriginal(up, plain)))
      if (toHex(cipher.digest()) !== up.hashes!.ciphertextHash || plain.bytes !== up.source.size)
        throw new Error('the source changed between the two passes (its bytes differ)')
      up.meter.add('sent', size)
      up.sentBytes += size
      break
    }
    case 'parts': {
      // Pass 2 from the first chunk the server does not hold: the file is read from there on.
      // The server checks the whole original against its hash when the last part arrives.
      up.resumedBytes = session.original.received
      const firstChunk = chunkAt(up.resumedBytes, up.chunkSize)
      const plain = new Tap(target.sha256)
      await sendParts(up, up.hashes!.ciphertextHash, partsOf(encryptOriginal(up, plain, firstChunk), up.resumedBytes, size, up.chunkSize))
      if (plain.bytes !== up.source.size - firstChunk * up.chunkSize) throw new Error('the source changed while being sent (its size differs)')
      up.sentBytes += size - up.resumedBytes
      break
    }
    case 'held':
    case 'none':
      break
  }
}

/** send, continued: the derivatives the session lacks. */
async function sendDerivatives(up: Upload): Promise<void> {
  const { target } = up
  const session = up.session!
  for (const d of up.derivatives) {
    if (!session.missing.has(d.hash)) continue
    await target.client.putBlob(session.uploadId, d.hash, d.sealed)
    up.meter.add('sent', d.sealed.length)
    up.sentBytes += d.sealed.length
  }
}

/**
 * The metadata's capturedSource and capturedOffset (version 3): both null without a capture time.
 * A capture time whose source or offset is not known (a resume point sealed before version 3, a
 * describe that names neither) is written as version 2, as it was read: a reader takes it as
 * `exif`, a floating time.
 */
function capturedSourceOf(facts: NonNullable<Upload['facts']>): Pick<AssetMetadata, 'capturedSource' | 'capturedOffset'> {
  if (facts.captured === null) return { capturedSource: null, capturedOffset: null }
  if (facts.capturedSource === undefined || facts.capturedSource === null || facts.capturedOffset === undefined) return {}
  return { capturedSource: facts.capturedSource, capturedOffset: facts.capturedOffset }
}

/**
 * The metadata's fields of version 3 and later: `camera`, a video's `duration` (version 4) and a
 * `description` (version 5); none beside a capture time written as version 2.
 */
function laterFields(facts: NonNullable<Upload['facts']>): Pick<AssetMetadata, 'camera' | 'duration' | 'description'> {
  if (capturedSourceOf(facts).capturedSource === undefined) return {}
  const { camera, duration, description } = facts
  return {
    ...(camera === undefined || camera === null ? {} : { camera }),
    ...(duration === undefined || duration === null ? {} : { duration }),
    ...(description === undefined ? {} : { description }),
  }
}

/** commit: the metadata blob and the signed manifest, applied; a replace whose asset moved on continues from its new head, once. */
async function commit(up: Upload): Promise<BackupResult> {
  const { target, source, lifecycle } = up
  const hashes = up.hashes!
  const identity = up.identity!
  up.meter.enter('commit', up.way, NOTHING)
  const metadata: AssetMetadata = {
    name: source.name,
    size: source.size,
    type: source.type,
    modified: source.modified,
    captured: up.facts!.captured,
    ...capturedSourceOf(up.facts!),
    ...laterFields(up.facts!),
    width: up.facts!.width,
    height: up.facts!.height,
    ...(up.facts!.favourite === true ? { favourite: true } : {}),
    ...(up.facts!.location === null ? {} : { location: up.facts!.location }),
    ...(up.options.cover === undefined ? {} : { cover: up.options.cover }),
    contentMac: identity.contentMac,
    blobs: [
      { kind: 'original', hash: fromHex(hashes.ciphertextHash), size: source.size, type: source.type },
      ...up.derivatives.map((d) => ({ kind: d.kind, hash: fromHex(d.hash), size: d.size, type: d.type })),
    ],
  }
  const albumKey = await albumKeyOf(target, target.albumId, up.amkVersion)
  const metadataBlob = await sealMetadata(albumKey, { albumId: target.albumId, fileId: identity.assetId }, up.fileKey, metadata)
  const sign = async (protocolVersion: string) =>
    buildLifecycleWrite(target.identity, {
      envelope: {
        crypto_suite_id: CRYPTO_SUITE_V1,
        protocol_version: protocolVersion,
        album_id: target.albumId,
        file_id: identity.assetId,
        amk_version: up.amkVersion,
        ciphertext_hash: hashes.ciphertextHash,
        plaintext_size: source.size,
        chunk_size: up.chunkSize,
        key_mode: 'wrapped',
        created_by_user: target.userId,
        created_by_device: target.deviceId,
        client_version: target.clientVersion ?? CLIENT_VERSION,
        action: lifecycle.action,
        ...(up.head === null ? {} : { prior_provenance_hash: up.head.manifestHash, original_blob_hash: up.head.originalHash }),
        ...(up.options.retentionUntil === undefined ? {} : { retention_until: up.options.retentionUntil }),
      },
      metadata: metadataBlob,
      content: manifestContent(await target.history?.content(target.albumId), up.options.membership),
    })
  const signAndApply = async (version: string): Promise<void> => {
    const write = await sign(version)
    await appliedWrite(target.history, target.albumId, write, () => target.client.applyManifest(target.albumId, write.request))
  }
  const apply = async (version: string): Promise<void> => {
    try {
      await signAndApply(version)
    } catch (error) {
      // A replace whose asset someone wrote meanwhile: continue from the new head, once.
      if (!(lifecycle.action === 'replace' && staleRevival(error) && up.head === lifecycle.head)) throw error
      up.head = await lifecycle.reread()
      await signAndApply(version)
    }
  }
  try {
    await writeWithProtocol(target.client, target.albumId, up.protocolVersion!, apply, { waitWhileUpgrading: false })
  } catch (error) {
    // The asset exists: an earlier run created it and stopped before recording it.
    if (lifecycle.action === 'create' && staleRevival(error)) {
      await endSession(up)
      return present(up)
    }
    throw error
  }
  up.session = null
  // An original encrypted under keys of its own: another file of its content can name it (decision 0030 for the rest).
  if (up.knownContent === undefined && !up.reusesOriginal && up.way !== 'held')
    await up.options.originals?.remember(hashes.content, up.chunkSize, {
      ciphertextHash: hashes.ciphertextHash,
      size: source.size,
      fileKey: up.fileKey,
      salt: up.salt,
    })
  return ended(up, {
    status: 'stored',
    ciphertextHash: hashes.ciphertextHash,
    sentBytes: up.sentBytes,
    resumedBytes: up.resumedBytes,
    reusedOriginal: up.way === 'held',
  })
}

/** Ends the session of this round (aborted; the server forgets what it held of it). */
async function endSession(up: Upload): Promise<void> {
  if (up.session !== null) await up.target.client.abortUploadSession(up.session.uploadId).catch(() => {})
  up.session = null
}

/** The album held the content (or the asset is it): nothing stored; the resume point, if any, dropped. */
function present(up: Upload): Promise<BackupResult> {
  return ended(up, { status: 'present', ciphertextHash: null, sentBytes: 0, resumedBytes: 0, reusedOriginal: false })
}

/** The upload is over (stored, or present): its progress says done, its resume point goes, and the result names the asset. */
async function ended(up: Upload, outcome: Omit<BackupResult, 'assetId' | 'contentHash' | 'contentMac'>): Promise<BackupResult> {
  const identity = up.identity!
  up.meter.finish(outcome.status === 'stored' ? up.way : 'none')
  if (up.pointStored) await up.options.resume?.clear()
  return { ...outcome, assetId: identity.assetId, contentHash: identity.contentHash, contentMac: toHex(identity.contentMac) }
}

async function albumProtocol(target: BackupTarget): Promise<string> {
  if (target.protocolVersion !== undefined) return target.protocolVersion
  const found = await albumPinOf(target.client, target.albumId)
  if (found === undefined) throw new Error(`album ${target.albumId} is neither one of this account's nor shared with it`)
  return found
}

// --- resume points ------------------------------------------------------------------------------

/**
 * The resume point stored for this file, when it opens and still describes it (the same chunk
 * size and size; a source held in memory, the same content: a point of a one-pass upload, whose
 * content is not known, does not fit one). One that does not is dropped, and its session aborted.
 */
async function resumedUpload(target: BackupTarget, source: FileSource, store: ResumeStore | undefined): Promise<Resumed | null> {
  const stored = await store?.load()
  if (store === undefined || stored === null || stored === undefined) return null
  const chunkSize = target.chunkSize ?? DEFAULT_CHUNK_SIZE
  const point = await openResumePoint(target.masterKey, stored.uploadId, stored.sealed).catch(() => null)
  const content = point === null ? undefined : await source.digest?.()
  if (
    point !== null &&
    point.chunkSize === chunkSize &&
    point.ciphertextSize === ciphertextSize(source.size, chunkSize) &&
    (content === undefined || (point.contentHash !== null && equalBytes(content, point.contentHash)))
  ) {
    return { ...point, uploadId: stored.uploadId }
  }
  await target.client.abortUploadSession(stored.uploadId).catch(() => {})
  await store.clear()
  return null
}

/** `originals` that finds none: what an upload whose stored original is gone starts again with (the new one is remembered). */
const forgetful = (originals: StoredOriginals): StoredOriginals => ({ find: async () => null, remember: (...args) => originals.remember(...args) })

/** A stored original (BackupOptions.originals) the server no longer holds. storeFile starts again without it. */
class OriginalGone extends Error {
  override readonly name = 'OriginalGone'
}

/** A resume point that no longer holds: the file is not what the interrupted upload sent. storeFile starts it again. */
class StaleResumePoint extends Error {
  override readonly name = 'StaleResumePoint'
}

/** True when an error of `kind` is in `error`'s cause chain. */
export function causedBy(error: unknown, kind: new (...args: never[]) => Error): boolean {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = (at as Error).cause, depth++) if (at instanceof kind) return true
  return false
}

/** An answer saying the upload cannot go on as it was: its session ended, or the server refused the bytes sent from a resume point. */
function uploadRefused(error: unknown): boolean {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    if (at instanceof StaleResumePoint) return true
    if (at instanceof CofferProblem)
      return at.code === 'error.not_found' || at.code === 'error.upload.hash_mismatch' || at.code === 'error.upload.offset_mismatch'
  }
  return false
}

// --- parts ---------------------------------------------------------------------------------------

/**
 * Ciphertext bytes per part of an original sent in parts (about 8 MiB; whole chunks): an
 * original larger than one part goes in parts, so that an interrupted upload continues from the
 * last part the server stored rather than from the start (the server keeps parts of open
 * sessions; PUT with Content-Range, docs/client-library.md, "Resume inside a file").
 */
export const UPLOAD_PART_BYTES = 8 * 1024 * 1024

/** The stream's chunk that begins at ciphertext byte `start` (a part's start); throws when `start` is not where a chunk begins. */
function chunkAt(start: number, chunkSize: number): number {
  if (start === 0) return 0
  const chunk = (start - HEADER_BYTES) / (chunkSize + GCM_TAG_BYTES)
  if (!Number.isInteger(chunk) || chunk < 0) throw new Error(`the server holds ${start} bytes of the original, which is not where a chunk begins`)
  return chunk
}

/** Where the part that starts at ciphertext byte `start` ends (exclusive): whole chunks, about UPLOAD_PART_BYTES on, or the end. */
export function partEnd(start: number, total: number, chunkSize: number): number {
  const sealedChunk = chunkSize + GCM_TAG_BYTES
  return Math.min(total, HEADER_BYTES + (chunkAt(start, chunkSize) + Math.max(1, Math.floor(UPLOAD_PART_BYTES / sealedChunk))) * sealedChunk)
}

/**
 * Cuts a ciphertext stream that starts at byte `start` of `total` into the parts partEnd draws.
 * Every part is a view of one buffer, filled again for the next part: the caller is done with a
 * part (it was sent) before it asks for the next. A buffer per part would be 8 MiB of garbage
 * each time, which V8 frees only in a full collection.
 */
async function* partsOf(
  ciphertext: AsyncIterable<Uint8Array>,
  start: number,
  total: number,
  chunkSize: number,
): AsyncGenerator<{ readonly start: number; readonly bytes: Uint8Array }> {
  let at = start
  // Nothing to send when the server holds it all (a one-pass upload that only hashes the file again).
  let end = at < total ? partEnd(at, total, chunkSize) : total
  // The first part of a stream is the longest (it has the header).
  const buffer = new Uint8Array(Math.min(total, partEnd(0, total, chunkSize)))
  let filled = 0
  for await (const piece of ciphertext) {
    for (let rest = piece; rest.length > 0; ) {
      if (at === total) throw new Error(`encrypted to more than the expected ${total} bytes`)
      const used = Math.min(rest.length, end - at - filled)
      buffer.set(rest.subarray(0, used), filled)
      filled += used
      rest = rest.subarray(used)
      if (at + filled === end) {
        yield { start: at, bytes: buffer.subarray(0, filled) }
        at = end
        if (at < total) end = partEnd(at, total, chunkSize)
        filled = 0
      }
    }
  }
  if (at !== total) throw new Error(`encrypted to ${at + filled} bytes, expected ${total}`)
}

/** `stream` without its first `count` bytes (read all the same: a pass that hashes what it does not send). */
async function* dropFirst(stream: AsyncIterable<Uint8Array>, count: number): AsyncGenerator<Uint8Array> {
  let left = count
  for await (const piece of stream) {
    if (left >= piece.length) left -= piece.length
    else {
      yield left === 0 ? piece : piece.subarray(left)
      left = 0
    }
  }
}

/**
 * Before a part leaves: a part an earlier try handed to the network at this place (its resume
 * point's inFlight) may have reached anyone, so it must be the same bytes, or one key and nonce
 * would seal two plaintexts (the file changed since, keeping its size and mtime): the upload then
 * starts again under a new key (StaleResumePoint). This part is stored as in flight first, so
 * that the next try can tell (decision 0049).
 */
async function beforePart(up: Upload, start: number, digest: string): Promise<void> {
  const earlier = up.resumed?.inFlight
  if (earlier?.start === start && earlier.digest !== digest)
    throw new StaleResumePoint('the file changed since its upload was cut: the part sent then is not this one')
  const store = up.options.resume
  if (up.point === null || store === undefined || !up.pointStored) return
  const uploadId = up.session!.uploadId
  up.point = { ...up.point, inFlight: { start, digest } }
  await store.save(uploadId, await sealResumePoint(up.target.masterKey, uploadId, up.point))
}

/**
 * Sends an original's parts to the session, each counted once the server took it. A part's
 * Content-Digest is hashed by the platform's WebCrypto (native, off the page's thread in a
 * browser; the part is whole in memory). A part the server stored though its answer was lost
 * (the request was sent again) is refused as already received: the server is past it, and that
 * is the answer that was lost.
 */
async function sendParts(
  up: Upload,
  hash: string,
  parts: AsyncIterable<{ readonly start: number; readonly bytes: Uint8Array }>,
  blobDigest?: () => Uint8Array,
): Promise<void> {
  const client: CofferClient = up.target.client
  const uploadId = up.session!.uploadId
  const total = up.ciphertextSize
  for await (const part of parts) {
    const end = part.start + part.bytes.length
    const digest = await digestSha256(part.bytes)
    await beforePart(up, part.start, toHex(digest))
    try {
      await client.putBlobPart(uploadId, hash, part.start, total, part.bytes, {
        digest,
        ...(end === total && blobDigest !== undefined ? { blobDigest: blobDigest() } : {}),
      })
    } catch (error) {
      if (!(error instanceof CofferProblem && error.code === 'error.upload.offset_mismatch' && Number(error.headers.get('upload-offset')) === end)) throw error
    }
    up.meter.add('sent', part.bytes.length)
  }
}
