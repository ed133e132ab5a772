// The album chain (docs/client-format.md, "The album chain"; decision 0065): a running SHA-256
// over an album's feed in the server's order, and the commitment to it that every manifest a
// device writes carries in its signed `content`. The server orders the feed (sync_seq), so any
// number of devices write at once without a merge: each commits to the prefix it read, and
// a writer that had not read a concurrent entry simply commits to an earlier prefix. A reader
// recomputes the digest over the feed it is served and compares it at each commitment, and at the
// point its own device last checked: an entry left out, moved, or a history shown differently to
// two devices changes the digest there.
import { sha256 } from '@noble/hashes/sha2.js'
import { decodeCanonical, encodeCanonical } from '../../codec/cbor.ts'
import { concatBytes, fromHex, toHex, utf8 } from '../../sdk/bytes.ts'

const DIGEST_LABEL = utf8('coffer/v1/album-chain\u0000')
export const DIGEST_BYTES = 32
/** The digest of an empty feed: 32 zero bytes. */
export const EMPTY_DIGEST = new Uint8Array(DIGEST_BYTES)

/** A point of an album's feed: the last entry's sync_seq, the entries through it, and their digest. */
export interface ChainHead {
  /** sync_seq of the last entry through it; 0 for none. */
  readonly seq: number
  /** Entries from the feed's start through `seq`. */
  readonly count: number
  /** The running digest through `seq` (albumChainStep); EMPTY_DIGEST for none. */
  readonly digest: Uint8Array
}

export const EMPTY_HEAD: ChainHead = { seq: 0, count: 0, digest: EMPTY_DIGEST }

/**
 * The running digest after one more entry:
 * SHA-256("coffer/v1/album-chain" || 0x00 || previous digest || sync_seq (u64) || SHA-256 of its manifest_cbor).
 */
export function albumChainStep(previous: Uint8Array, syncSeq: number, manifestHash: string): Uint8Array {
  if (!Number.isSafeInteger(syncSeq) || syncSeq < 1) throw new TypeError(`sync_seq: expected a whole number from 1, got ${syncSeq}`)
  const seq = new Uint8Array(8)
  new DataView(seq.buffer).setBigUint64(0, BigInt(syncSeq))
  return sha256(concatBytes(DIGEST_LABEL, previous, seq, fromHex(manifestHash)))
}

/** The head after one more entry. */
export const advanceHead = (head: ChainHead, syncSeq: number, manifestHash: string): ChainHead => ({
  seq: syncSeq,
  count: head.count + 1,
  digest: albumChainStep(head.digest, syncSeq, manifestHash),
})

/** A manifest's `content` committing to `head`: {"chain": {"seq", "count", "digest"}}. */
export const chainContent = (head: ChainHead): { readonly chain: { readonly seq: number; readonly count: number; readonly digest: Uint8Array } } => ({
  chain: { seq: head.seq, count: head.count, digest: head.digest },
})

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0

/**
 * The head a manifest's `content` commits to, or null when it carries none: no content, content
 * without `chain` (written before the chain, or by a client that writes none), or a `chain` not
 * exactly {seq, count, digest} (a writer's error, not a server's: the manifest is signed). Other
 * keys of `content` are left to whoever defines them.
 */
export function committedHead(content: unknown): ChainHead | null {
  if (typeof content !== 'object' || content === null || !('chain' in content)) return null
  const chain = (content as { chain: unknown }).chain
  if (typeof chain !== 'object' || chain === null) return null
  const keys = Object.keys(chain).sort()
  const { seq, count, digest } = chain as Record<string, unknown>
  if (keys.join() !== 'count,digest,seq' || !isCount(seq) || !isCount(count) || !(digest instanceof Uint8Array) || digest.length !== DIGEST_BYTES) return null
  if ((seq === 0) !== (count === 0) || count > seq) return null
  return { seq, count, digest }
}

/** A write of a device that the server applied (its answer's sync_seq), until a check finds it in the feed. */
export interface OwnWrite {
  readonly seq: number
  /** SHA-256 of its manifest_cbor, lowercase hex. */
  readonly manifestHash: string
  readonly assetId: string
  readonly action: string
}

/** What a device hands a new one of an album (docs/client-format.md, "Handing over the album history"): its last checked head, and its writes since. */
export interface HandedOverAlbum {
  readonly head: ChainHead
  readonly writes: readonly OwnWrite[]
}

/** Each album a device remembers, by album id. */
export type AlbumHandOver = ReadonlyMap<string, HandedOverAlbum>

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const WRITE_ACTIONS: readonly string[] = ['create', 'replace', 'delete']

/**
 * The hand-over's canonical CBOR: {"albums": {album id: {"seq", "count", "digest",
 * "writes": [{"seq", "hash" (bstr 32), "asset", "action"}, ...]}}}, writes in sync_seq order.
 */
export function encodeHandOver(albums: AlbumHandOver): Uint8Array {
  const map: Record<string, unknown> = {}
  for (const [albumId, { head, writes }] of albums) {
    map[albumId] = {
      seq: head.seq,
      count: head.count,
      digest: head.digest,
      writes: [...writes]
        .sort((a, b) => a.seq - b.seq)
        .map((write) => ({ seq: write.seq, hash: fromHex(write.manifestHash), asset: write.assetId, action: write.action })),
    }
  }
  return encodeCanonical({ albums: map })
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
const exactly = (value: unknown, keys: string): value is Record<string, unknown> => isMap(value) && Object.keys(value).sort().join() === keys

/** The hand-over of canonical CBOR bytes; TypeError for anything that is not exactly encodeHandOver's shape. */
export function decodeHandOver(bytes: Uint8Array): AlbumHandOver {
  const value = decodeCanonical(bytes)
  if (!exactly(value, 'albums') || !isMap(value.albums)) throw new TypeError('not {"albums": map}')
  const albums = new Map<string, HandedOverAlbum>()
  for (const [albumId, album] of Object.entries(value.albums)) {
    if (!CANONICAL_UUID.test(albumId) || !exactly(album, 'count,digest,seq,writes') || !Array.isArray(album.writes))
      throw new TypeError(`album ${JSON.stringify(albumId)}: not {seq, count, digest, writes}`)
    const head = committedHead({ chain: { seq: album.seq, count: album.count, digest: album.digest } })
    if (head === null) throw new TypeError(`album ${albumId}: not a head`)
    const writes = album.writes.map((write: unknown): OwnWrite => {
      if (
        !exactly(write, 'action,asset,hash,seq') ||
        !isCount(write.seq) ||
        write.seq === 0 ||
        !(write.hash instanceof Uint8Array) ||
        write.hash.length !== DIGEST_BYTES
      )
        throw new TypeError(`album ${albumId}: a write is not {seq, hash, asset, action}`)
      if (typeof write.asset !== 'string' || !CANONICAL_UUID.test(write.asset) || typeof write.action !== 'string' || !WRITE_ACTIONS.includes(write.action))
        throw new TypeError(`album ${albumId}: a write names no asset or action`)
      return { seq: write.seq, manifestHash: toHex(write.hash), assetId: write.asset, action: write.action }
    })
    albums.set(albumId, { head, writes })
  }
  return albums
}
