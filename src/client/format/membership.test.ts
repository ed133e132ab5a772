import { describe, expect, it } from 'vitest'
import { manifestContent, mayWrite, membershipContent, recordedMembership, UNSHARED, type Membership } from './membership.ts'

const bea = '11111111-1111-4111-8111-111111111111'
const cal = '22222222-2222-4222-8222-222222222222'
const owner = '33333333-3333-4333-8333-333333333333'
const membership: Membership = {
  epoch: 3,
  members: new Map([
    [cal, { userId: cal, role: 'viewer', keyHash: new Uint8Array(32).fill(2), since: 3 }],
    [bea, { userId: bea, role: 'contributor', keyHash: new Uint8Array(32).fill(1), since: 1 }],
  ]),
}

describe('the membership record', () => {
  it('round-trips beside the chain commitment, members in user id order', () => {
    const content = manifestContent({ chain: { seq: 4 } }, membership) as { chain: unknown; membership: { members: { user: string }[] } }
    expect(content.chain).toEqual({ seq: 4 })
    expect(content.membership.members.map((member) => member.user)).toEqual([bea, cal])
    expect(recordedMembership(content)).toEqual(membership)
    expect(manifestContent(undefined, undefined)).toBeUndefined()
  })

  it('reads none from content without one, or with one not exactly its shape', () => {
    const { membership: record } = membershipContent(membership) as { membership: { epoch: number; members: Record<string, unknown>[] } }
    const variants: unknown[] = [
      undefined,
      { chain: {} },
      { membership: { ...record, extra: 1 } },
      { membership: { ...record, epoch: 0 } },
      { membership: { ...record, members: [...record.members].reverse() } },
      { membership: { ...record, members: [{ ...record.members[0], role: 'owner' }] } },
      { membership: { ...record, members: [{ ...record.members[0], key: new Uint8Array(31) }] } },
      { membership: { ...record, members: [{ ...record.members[0], since: 4 }] } },
      { membership: { ...record, members: [{ ...record.members[0], user: 'not-a-uuid' }] } },
    ]
    for (const content of variants) expect(recordedMembership(content)).toBeNull()
  })

  it('lets the owner and contributors write, not viewers or strangers', () => {
    expect(mayWrite(UNSHARED, owner, owner)).toBe(true)
    expect(mayWrite(membership, owner, bea)).toBe(true)
    expect(mayWrite(membership, owner, cal)).toBe(false)
    expect(mayWrite(UNSHARED, owner, bea)).toBe(false)
  })
})
