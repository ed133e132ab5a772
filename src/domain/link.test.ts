import { describe, expect, it } from 'vitest'
import { linkReads, linkState, type LinkFacts } from './link.ts'

const open: LinkFacts = { expiresAt: null, maxOpens: null, opens: 0, revokedAt: null, disabledAt: null }

describe('a link’s state', () => {
  it('is active with no limit, whatever the opens', () => {
    expect(linkState({ ...open, opens: 1_000_000 }, 5)).toBe('active')
  })

  it('expires at its instant, not a millisecond before', () => {
    expect(linkState({ ...open, expiresAt: 100 }, 99)).toBe('active')
    expect(linkState({ ...open, expiresAt: 100 }, 100)).toBe('expired')
  })

  it('is used up at its last open, and its sessions read on', () => {
    expect(linkState({ ...open, maxOpens: 3, opens: 2 }, 0)).toBe('active')
    expect(linkState({ ...open, maxOpens: 3, opens: 3 }, 0)).toBe('used_up')
    expect(linkReads('used_up')).toBe(true)
  })

  it('says disabled before revoked, revoked before expired, expired before used up', () => {
    const all = { expiresAt: 1, maxOpens: 1, opens: 1, revokedAt: 1, disabledAt: 1 }
    expect(linkState(all, 10)).toBe('disabled')
    expect(linkState({ ...all, disabledAt: null }, 10)).toBe('revoked')
    expect(linkState({ ...all, disabledAt: null, revokedAt: null }, 10)).toBe('expired')
    expect(linkState({ ...all, disabledAt: null, revokedAt: null, expiresAt: null }, 10)).toBe('used_up')
  })

  it('stops every read once revoked, disabled or expired', () => {
    expect(['active', 'expired', 'used_up', 'revoked', 'disabled'].filter((state) => linkReads(state as never))).toEqual(['active', 'used_up'])
  })
})
