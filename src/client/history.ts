// An album's history, checked against what this device and the account's other devices saw
// (docs/client-format.md, "The album chain"; decision 0065). The server orders and serves the
// feed; nothing in it is trusted that a signature or a digest can check:
// - every entry is a manifest the account signed, for this album, and the feed's own fields
//   (asset_id, action, envelope_hash) say what the signed manifest says ("forged");
// - no manifest twice ("replayed"), sync_seq increasing ("reordered"), and each asset's versions
//   in their chain (each names the one before: a missing one is "omitted", one out of place
//   "reordered", two continuing the same version "forked");
// - at each entry that commits to the prefix its writer read (format/album-chain.ts), the reader's
//   digest of that prefix is the writer's: fewer entries than it saw is "omitted", more is
//   "forked" (the writer was shown a history without some of them), as many but others or in
//   another order is "reordered";
// - in an album with several writers, each entry's writer was the owner or a contributor in the
//   membership the owner recorded last before it (format/membership.ts; "forged" otherwise);
// - the head this device remembers from its last check is still there, the same way, and the
//   feed reaches it ("rolled_back" when it ends before), and every write this device made since
//   is at the sync_seq the server answered it with.
import type { CofferClient, Feed } from '../sdk/client.ts'
import { equalBytes, fromBase64, toHex } from '../sdk/bytes.ts'
import type { HybridVerifier } from '../sdk/hybrid.ts'
import type { ReadManifest, WriterKeys } from '../sdk/manifest.ts'
import { advanceHead, chainContent, committedHead, EMPTY_HEAD, type AlbumHandOver, type ChainHead, type OwnWrite } from './format/album-chain.ts'
import { readSignedManifest, sha256Of, type Sha256Hasher } from './files.ts'
import { mayWrite, recordedMembership, UNSHARED, type Membership } from './format/membership.ts'
import { AlbumTamperedError, type TamperingKind } from './tampering.ts'

export type { OwnWrite } from './format/album-chain.ts'

/** What a device remembers of an album: the head of its last passing check, the entries through it, and its writes since. */
export interface AlbumMemory {
  readonly head: ChainHead
  /**
   * The manifest hash of each entry through `head` by its sync_seq, as checked: an entry served
   * again at its place with its hash is not verified again (its signature was, by this device).
   */
  readonly checkedEntries: ReadonlyMap<number, string>
  readonly ownWrites: readonly OwnWrite[]
}

/** Where a device keeps its AlbumMemory of each album (node/album-memory.ts in coffer-photos). */
export interface AlbumMemoryStore {
  load(albumId: string): Promise<AlbumMemory | null>
  /**
   * A check passed at `head`: it replaces the remembered head, `entries` (those after the head
   * remembered before, by sync_seq) join the checked ones, and the own writes it covers are dropped.
   */
  checked(albumId: string, head: ChainHead, entries: ReadonlyMap<number, string>): Promise<void>
  wrote(albumId: string, write: OwnWrite): Promise<void>
  /** Every album remembered: its head and its own writes since, as pairing hands them to a new device. */
  handOver(): Promise<AlbumHandOver>
  /**
   * Takes on what another device of the account handed over (pairing): an album this device
   * remembers nothing of gets that head, and the writes become ones its next check must find.
   */
  adopt(albums: AlbumHandOver): Promise<void>
}

/** An album's history as checked: its head, every entry's manifest hash by sync_seq, and those not remembered before. */
export interface CheckedHistory {
  readonly head: ChainHead
  readonly entries: ReadonlyMap<number, string>
  readonly newEntries: ReadonlyMap<number, string>
  /** The membership the owner recorded last (UNSHARED when it recorded none). */
  readonly membership: Membership
}

/** What checking an album's history needs: the client, and the key every entry must be signed with. */
export interface HistorySource {
  readonly client: CofferClient
  readonly identityPublicKey: Uint8Array
  readonly verify?: HybridVerifier
  /** In an album with several writers (shared), each writer's identity key (files.ts RestoreSource.writerKeys). */
  readonly writerKeys?: WriterKeys
  /**
   * The album's owner, with writerKeys: only its entries record the membership, and only it and
   * the contributors they name may write. Without writerKeys every entry is the account's own.
   */
  readonly ownerId?: string
  /**
   * Holds what the server lists of the album's members to the membership its history records
   * (sharing.ts membershipChecker): throws AlbumTamperedError (`membership`). Asked after each
   * check that passed, by AlbumHistoryKeeper; not asked unless given.
   */
  readonly checkMembers?: (albumId: string, membership: Membership) => Promise<void>
  /**
   * Awaited between slices of HISTORY_SLICE entries: a page's thread gives way there (the web
   * app: a task of its own per slice, so that decoding a page of manifests never holds a scroll
   * up). None unless given.
   */
  readonly pace?: () => Promise<void>
  /** Hashes the manifests a guarded client's feed serves (AlbumHistoryKeeper.guard); @noble/hashes' SHA-256 unless given. */
  readonly sha256?: Sha256Hasher
}

/** Entries read at once. */
const HISTORY_PAGE = 256
/** Entries decoded and verified together: their signatures are checked side by side (on the libuv pool, or in the web app's workers). */
const HISTORY_SLICE = 32

interface Position {
  readonly head: ChainHead
  readonly manifestHash: string
}

/** An asset's chain as read so far: its last version, and whether that was a delete. */
interface AssetChain {
  readonly head: string
  readonly deleted: boolean
}

/** fewer: omitted; more: forked; as many, other digest: reordered; null: the same. */
function compareHeads(mine: ChainHead, theirs: ChainHead): TamperingKind | null {
  if (mine.count < theirs.count) return 'omitted'
  if (mine.count > theirs.count) return 'forked'
  return equalBytes(mine.digest, theirs.digest) ? null : 'reordered'
}

/**
 * Reads the album's whole feed and checks it (see the top of this file) against `remembered`
 * (null: this device never checked it). Answers the feed's head; throws AlbumTamperedError at
 * the first thing that does not hold. Every entry's signature is checked once.
 */
export async function checkAlbumHistory(source: HistorySource, albumId: string, remembered: AlbumMemory | null): Promise<CheckedHistory> {
  const tampered = (kind: TamperingKind, seq: number, detail: string): AlbumTamperedError => new AlbumTamperedError(albumId, kind, seq, detail)
  if (source.writerKeys !== undefined && source.ownerId === undefined) throw new TypeError('an album of several writers is checked knowing its owner (ownerId)')
  let head = EMPTY_HEAD
  let membership = UNSHARED
  const positions = new Map<number, Position>()
  const seenAt = new Map<string, number>()
  const assets = new Map<string, AssetChain>()
  // Versions named as the one before by an entry that came first: found later, the feed was reordered; never, omitted.
  const awaited = new Map<string, number>()
  // The first entry missing that a writer had read: thrown at the end, unless the walk meets a
  // reordering first (an entry served before one it follows also looks like one missing there).
  let missing: AlbumTamperedError | null = null
  const step = (entry: Feed['entries'][number], read: ReadManifest | null): void => {
    const seq = entry.sync_seq
    if (read === null) throw tampered('forged', seq, `entry ${seq} is not a manifest this account signed`)
    const { envelope, manifestHash } = read
    if (envelope.album_id !== albumId || envelope.file_id !== entry.asset_id || envelope.action !== entry.action || entry.envelope_hash !== manifestHash)
      throw tampered('forged', seq, `entry ${seq} says other than its signed manifest (album, asset, action or hash)`)
    if (seq <= head.seq) throw tampered('reordered', seq, `entry ${seq} comes after entry ${head.seq}`)
    const writer = envelope.created_by_user
    const owner = source.ownerId ?? writer
    if (!mayWrite(membership, owner, writer))
      throw tampered('forged', seq, `entry ${seq} is written by account ${writer}, which the album's membership did not let write then`)
    const earlier = seenAt.get(manifestHash)
    if (earlier !== undefined) throw tampered('replayed', seq, `entry ${seq} is entry ${earlier} again`)
    const waiting = awaited.get(manifestHash)
    if (waiting !== undefined) throw tampered('reordered', seq, `entry ${seq} is the version entry ${waiting} continues, served after it`)
    const asset = assets.get(envelope.file_id)
    const prior = envelope.prior_provenance_hash ?? null
    if (asset === undefined ? prior !== null : asset.deleted || prior !== asset.head) {
      if (asset !== undefined && (prior === null || asset.deleted || seenAt.has(prior)))
        throw tampered('forked', seq, `entry ${seq} continues a version of asset ${envelope.file_id} that is not its latest`)
      if (prior !== null) awaited.set(prior, seq)
    }
    const committed = committedHead(read.content)
    if (committed !== null) {
      if (committed.seq >= seq) throw tampered('reordered', seq, `entry ${seq} was written after reading entry ${committed.seq}`)
      const mine = committed.seq === 0 ? EMPTY_HEAD : positions.get(committed.seq)?.head
      const detail = `entry ${seq}'s writer had read ${committed.count} entries through entry ${committed.seq}; this feed has ${mine?.count ?? 'no entry'} there`
      const kind = mine === undefined ? 'omitted' : compareHeads(mine, committed)
      if (kind === 'omitted') missing ??= tampered(kind, seq, detail)
      else if (kind !== null) throw tampered(kind, seq, detail)
    }
    if (writer === owner) membership = recordedMembership(read.content) ?? membership
    head = advanceHead(head, seq, manifestHash)
    positions.set(seq, { head, manifestHash })
    seenAt.set(manifestHash, seq)
    assets.set(envelope.file_id, { head: manifestHash, deleted: envelope.action === 'delete' })
  }
  // Entries whose signatures need no check: those this device checked at their places, and its
  // own writes (it signed those bytes itself), each named by its manifest hash.
  const known = new Map(remembered?.checkedEntries)
  for (const write of remembered?.ownWrites ?? []) if (!known.has(write.seq)) known.set(write.seq, write.manifestHash)
  let after = 0
  for (;;) {
    const page = await source.client.feed(albumId, after, HISTORY_PAGE)
    for (let start = 0; start < page.entries.length; start += HISTORY_SLICE) {
      const slice = page.entries.slice(start, start + HISTORY_SLICE)
      const reads = await Promise.all(
        slice.map((entry) => {
          // Known at this place, as the feed names it. The name is the server's, but step() holds it to the hash of the bytes served.
          const checkedBefore = known.get(entry.sync_seq) === entry.envelope_hash
          return readSignedManifest(source, fromBase64(entry.manifest_cbor), checkedBefore ? () => true : source.verify).catch(() => null)
        }),
      )
      for (const [i, entry] of slice.entries()) step(entry, reads[i]!)
      await source.pace?.()
    }
    if (page.entries.length === 0 || page.next_after === after) break
    after = page.next_after
  }
  if (missing !== null) throw missing
  const [version] = awaited
  if (version !== undefined) throw tampered('omitted', version[1], `the version entry ${version[1]} continues (${version[0].slice(0, 12)}…) is not in the feed`)
  if (remembered !== null) checkRemembered(remembered, head, positions, tampered)
  const entries = new Map<number, string>()
  const newEntries = new Map<number, string>()
  for (const [seq, position] of positions) {
    entries.set(seq, position.manifestHash)
    // After the remembered head, and before it on a device that took the head over from another (pairing) and remembers no entries yet.
    if (remembered?.checkedEntries.get(seq) !== position.manifestHash) newEntries.set(seq, position.manifestHash)
  }
  return { head, entries, newEntries, membership }
}

/** The remembered head and own writes against the feed as read (checkAlbumHistory). */
function checkRemembered(
  remembered: AlbumMemory,
  head: ChainHead,
  positions: ReadonlyMap<number, Position>,
  tampered: (kind: TamperingKind, seq: number, detail: string) => AlbumTamperedError,
): void {
  const points: { readonly seq: number; readonly what: string; readonly check: (at: Position) => TamperingKind | null }[] = [
    {
      seq: remembered.head.seq,
      what: `the album as this device last checked it (${remembered.head.count} entries)`,
      check: (at) => compareHeads(at.head, remembered.head),
    },
    ...remembered.ownWrites.map((write) => ({
      seq: write.seq,
      what: `the ${write.action} of asset ${write.assetId} that this device knows the server applied`,
      check: (at: Position) => (at.manifestHash === write.manifestHash ? null : ('reordered' as const)),
    })),
  ]
  for (const point of points) {
    if (point.seq === 0) continue
    if (point.seq > head.seq) throw tampered('rolled_back', point.seq, `the feed ends at entry ${head.seq}, before ${point.what} at entry ${point.seq}`)
    const at = positions.get(point.seq)
    const kind = at === undefined ? 'omitted' : point.check(at)
    if (kind !== null) throw tampered(kind, point.seq, `${point.what} at entry ${point.seq} is not in the feed as it was`)
  }
}

/**
 * What a writer needs of an album's history (BackupTarget.history): the head its manifests
 * commit to, and where to note the writes the server applied. AlbumHistoryKeeper is one.
 */
export interface AlbumHistory {
  /** Checks the album's history against what this device saw and wrote; throws AlbumTamperedError (named `name` when given). */
  check(albumId: string, name?: string | null): Promise<ChainHead>
  /** The `content` a manifest written to the album now carries (chainContent of the head last checked), or undefined: this device never checked it. */
  content(albumId: string): Promise<ReturnType<typeof chainContent> | undefined>
  wrote(albumId: string, write: OwnWrite): Promise<void>
  /** The membership the album's history records, as this process last checked it; undefined before a check. */
  membership(albumId: string): Membership | undefined
}

/** Checks albums against a device's memory of them (AlbumMemoryStore), and keeps what writers commit to. */
export class AlbumHistoryKeeper implements AlbumHistory {
  readonly #source: HistorySource
  readonly #memory: AlbumMemoryStore
  readonly #heads = new Map<string, ChainHead>()
  readonly #memberships = new Map<string, Membership>()
  /** What this keeper checked of each album in this process: the sync_seqs through the head, in order, and each manifest hash. */
  readonly #checked = new Map<string, { readonly seqs: readonly number[]; readonly hashes: ReadonlyMap<number, string> }>()
  constructor(source: HistorySource, memory: AlbumMemoryStore) {
    this.#source = source
    this.#memory = memory
  }

  /**
   * Checks the album's history (checkAlbumHistory) against what this device remembers, and
   * remembers its head. Throws AlbumTamperedError, naming the album by `name` when given; nothing
   * is remembered then, so every later check fails the same way until the server serves the history again.
   */
  async check(albumId: string, name: string | null = null): Promise<ChainHead> {
    let checked: CheckedHistory
    try {
      checked = await checkAlbumHistory(this.#source, albumId, await this.#memory.load(albumId))
    } catch (error) {
      throw named(error, name)
    }
    const { head } = checked
    await this.#memory.checked(albumId, head, checked.newEntries)
    this.#memberships.set(albumId, checked.membership)
    await this.#source.checkMembers?.(albumId, checked.membership).catch((error: unknown) => {
      throw named(error, name)
    })
    this.#heads.set(albumId, head)
    this.#checked.set(albumId, { seqs: [...checked.entries.keys()], hashes: checked.entries })
    return head
  }

  /**
   * `client` with its feed held to what this keeper checked: a command checks an album, then reads
   * its feed again (to plan a restore, to open each file), and a server could serve the check one
   * history and the command another. Through the checked head, every entry a page serves must be
   * the one checked at its sync_seq (its bytes' hash), and none checked may be missing from the
   * range a page covers, nor after the last page (AlbumTamperedError); entries written since pass.
   */
  guard(client: CofferClient): CofferClient {
    const feed = async (albumId: string, after?: number, limit?: number): Promise<Feed> => {
      const page = await client.feed(albumId, after, limit)
      const checked = this.#checked.get(albumId)
      if (checked !== undefined) this.#holdToChecked(albumId, checked, after ?? 0, page)
      return page
    }
    // Every other method of the client as it is, called on the client itself.
    return new Proxy(client, {
      get: (target, property) => {
        if (property === 'feed') return feed
        const value: unknown = Reflect.get(target, property, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  }

  #holdToChecked(
    albumId: string,
    checked: { readonly seqs: readonly number[]; readonly hashes: ReadonlyMap<number, string> },
    after: number,
    page: Feed,
  ): void {
    const changed = (kind: TamperingKind, seq: number, detail: string): AlbumTamperedError =>
      new AlbumTamperedError(albumId, kind, seq, `${detail}, moments after the album was checked`)
    const through = checked.seqs.at(-1) ?? 0
    let previous = after
    let served = 0
    for (const entry of page.entries) {
      if (entry.sync_seq <= previous) throw changed('reordered', entry.sync_seq, `entry ${entry.sync_seq} came after entry ${previous}`)
      previous = entry.sync_seq
      if (entry.sync_seq > through) continue
      served++
      const hash = toHex(sha256Of(fromBase64(entry.manifest_cbor), this.#source.sha256))
      if (checked.hashes.get(entry.sync_seq) !== hash) throw changed('forked', entry.sync_seq, `entry ${entry.sync_seq} is not the one checked there`)
    }
    // The checked entries the page's range covers (all after `after` when it is the feed's end) must all be there.
    const end = page.entries.length === 0 ? through : Math.min(previous, through)
    const expected = checked.seqs.filter((seq) => seq > after && seq <= end).length
    if (served < expected)
      throw changed(
        page.entries.length === 0 ? 'rolled_back' : 'omitted',
        end,
        `the feed left out ${expected - served} of the entries checked after entry ${after}`,
      )
  }

  /** The head checked in this process, else the one this device remembers from an earlier check: both are prefixes it read and checked. */
  async content(albumId: string): Promise<ReturnType<typeof chainContent> | undefined> {
    const head = this.#heads.get(albumId) ?? (await this.#memory.load(albumId))?.head
    return head === undefined || head.seq === 0 ? undefined : chainContent(head)
  }

  wrote(albumId: string, write: OwnWrite): Promise<void> {
    return this.#memory.wrote(albumId, write)
  }

  membership(albumId: string): Membership | undefined {
    return this.#memberships.get(albumId)
  }
}

/** An AlbumTamperedError named after its album (`name`, when known); any other error as it is. */
const named = (error: unknown, name: string | null): unknown =>
  error instanceof AlbumTamperedError && name !== null ? new AlbumTamperedError(error.albumId, error.kind, error.seq, error.detail, name) : error

/**
 * Applies a signed write with `apply` and notes it in `history` (when given) at the sync_seq the
 * server answered: the next check finds it there, or says the server dropped or moved it.
 */
export async function appliedWrite<R extends { readonly sync_seq: number }>(
  history: AlbumHistory | undefined,
  albumId: string,
  signed: { readonly manifestHash: string; readonly envelope: { readonly file_id: string; readonly action: string } },
  apply: () => Promise<R>,
): Promise<R> {
  const answer = await apply()
  await history?.wrote(albumId, { seq: answer.sync_seq, manifestHash: signed.manifestHash, assetId: signed.envelope.file_id, action: signed.envelope.action })
  return answer
}
