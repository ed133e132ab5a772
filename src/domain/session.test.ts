// The refresh decision follows SPEC's Session table and API.md section 3 row by row.
import { describe, expect, it } from 'vitest'
import { bearerIsLive, decideRefresh, sessionLifetimes, type RefreshFacts } from './session.ts'

const now = 1_800_000_000_000
const GRACE_S = 30
const live: RefreshFacts = { rotatedAt: null, refreshExpiresAt: now + 1000 }

describe('decideRefresh', () => {
  it.each<[string, RefreshFacts, RefreshFacts | undefined, ReturnType<typeof decideRefresh>]>([
    ['unused and unexpired: rotate', live, undefined, 'rotate'],
    ['unused but expired: expired', { rotatedAt: null, refreshExpiresAt: now }, undefined, 'expired'],
    ['used 10 s ago, successor live and unused: repeat it', { rotatedAt: now - 10_000, refreshExpiresAt: now + 1000 }, live, 'repeat_successor'],
    ['used exactly at the grace limit: repeat it', { rotatedAt: now - 30_000, refreshExpiresAt: now + 1000 }, live, 'repeat_successor'],
    ['used past the grace window: reuse', { rotatedAt: now - 30_001, refreshExpiresAt: now + 1000 }, live, 'reuse_detected'],
    ['used, successor already used: reuse', { rotatedAt: now - 1000, refreshExpiresAt: now + 1000 }, { rotatedAt: now - 500, refreshExpiresAt: now + 1000 }, 'reuse_detected'],
    ['used, successor closed (gone): reuse', { rotatedAt: now - 1000, refreshExpiresAt: now + 1000 }, undefined, 'reuse_detected'],
    ['used, successor expired: reuse', { rotatedAt: now - 1000, refreshExpiresAt: now + 1000 }, { rotatedAt: null, refreshExpiresAt: now }, 'reuse_detected'],
  ])('%s', (_row, presented, successor, decision) => {
    expect(decideRefresh(presented, successor, now, GRACE_S)).toBe(decision)
  })
})

describe('sessionLifetimes', () => {
  it('puts the access expiry on a whole second so expires_by is exact', () => {
    const lifetimes = sessionLifetimes(now + 1234, 900, 2_592_000)
    expect(lifetimes.expiresBy).toBe(Math.floor((now + 1234) / 1000) + 900)
    expect(lifetimes.accessExpiresAt).toBe(lifetimes.expiresBy * 1000)
    expect(lifetimes.refreshExpiresAt).toBe(now + 1234 + 2_592_000_000)
  })
})

describe('bearerIsLive', () => {
  it.each([
    ['unexpired, unrotated', { accessExpiresAt: now + 1, rotatedAt: null }, true],
    ['at its expiry instant', { accessExpiresAt: now, rotatedAt: null }, false],
    ['rotated by a refresh', { accessExpiresAt: now + 1000, rotatedAt: now - 1 }, false],
  ])('%s -> %s', (_case, facts, expected) => {
    expect(bearerIsLive(facts, now)).toBe(expected)
  })
})
