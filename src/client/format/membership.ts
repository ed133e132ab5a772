// An album's membership as its owner signs it into the album's history (docs/client-format.md,
// "The membership record"; decision 0067): who the members are, the identity key the owner pinned
// for each, each one's role, and the album key's epoch. It rides in the signed `content` of a
// manifest the owner writes (beside the chain commitment), so a reader checks it with the history:
// the server cannot add a member, hide a removal or swap a key without a member's client seeing
// its listing disagree with the record.
import type { ShareRole } from './share.ts'

/** One member as the owner recorded it. */
export interface RecordedMember {
  readonly userId: string
  readonly role: ShareRole
  /** SHA-256 of the member's identity public key, as the owner pinned it. */
  readonly keyHash: Uint8Array
  /** The first epoch whose keys the member was given. */
  readonly since: number
}

/** The membership in force from the entry that carries it until the next that does. */
export interface Membership {
  /** The album key's newest epoch (amk_version): every writer wraps new files under it. */
  readonly epoch: number
  /** By user id. */
  readonly members: ReadonlyMap<string, RecordedMember>
}

/** An album never shared: epoch 1, nobody but the owner. */
export const UNSHARED: Membership = { epoch: 1, members: new Map() }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const KEY_HASH_BYTES = 32
const isEpoch = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= 0xffff_ffff
const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
const exactly = (value: unknown, keys: string): value is Record<string, unknown> => isMap(value) && Object.keys(value).sort().join() === keys

/**
 * The `membership` member of a manifest's content: {"epoch": n, "members": [{"user", "role",
 * "key" (bstr 32), "since"}, ...]}, members by user id.
 */
export function membershipContent(membership: Membership): { readonly membership: unknown } {
  const members = [...membership.members.values()]
    .sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0))
    .map((member) => ({ user: member.userId, role: member.role, key: member.keyHash, since: member.since }))
  return { membership: { epoch: membership.epoch, members } }
}

/**
 * The membership a manifest's content records, or null when it records none (no `membership`) or
 * one not exactly membershipContent's shape: that is a writer's error, not a server's (the
 * manifest is signed), and changes nothing.
 */
export function recordedMembership(content: unknown): Membership | null {
  if (!isMap(content) || !('membership' in content)) return null
  const record = content.membership
  if (!exactly(record, 'epoch,members') || !isEpoch(record.epoch) || !Array.isArray(record.members)) return null
  const members = new Map<string, RecordedMember>()
  let previous = ''
  for (const member of record.members as unknown[]) {
    if (!exactly(member, 'key,role,since,user')) return null
    const { user, role, key, since } = member
    if (typeof user !== 'string' || !UUID.test(user) || user <= previous) return null
    if ((role !== 'viewer' && role !== 'contributor') || !(key instanceof Uint8Array) || key.length !== KEY_HASH_BYTES) return null
    if (!isEpoch(since) || since > record.epoch) return null
    members.set(user, { userId: user, role, keyHash: key, since })
    previous = user
  }
  return { epoch: record.epoch, members }
}

/** May this account write in the album under this membership: the owner always, a member when it is a contributor. */
export const mayWrite = (membership: Membership, ownerId: string, userId: string): boolean =>
  userId === ownerId || membership.members.get(userId)?.role === 'contributor'

/** A manifest's `content`: the chain commitment it carries (album-chain.ts chainContent), with the membership when the owner records one; undefined for neither. */
export function manifestContent(chain: object | undefined, membership: Membership | undefined): object | undefined {
  if (membership === undefined) return chain
  return { ...chain, ...membershipContent(membership) }
}
