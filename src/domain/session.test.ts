// The refresh decision follows SPEC's Session table and API.md section 3 row by row.
import { describe, expect, it } from 'vitest'
import { bearerIsLive, decideRefresh, isFresh, sessionLifetimes, type RefreshFacts } from './session.ts'

const now = 1_800_000_000_000
const GRACE_S = 30
const live: RefreshFacts = { rotatedAt: null, refreshExpiresAt: now + 1000, epoch: 3, accountEpoch: 3 }
const used = (agoMs: number): RefreshFacts => ({ ...live, rotatedAt: now - agoMs })

describe('decideRefresh', () => {
  it.each<[string, RefreshFacts, RefreshFacts | undefined, ReturnType<typeof decideRefresh>]>([
    ['unused and unexpired: rotate', live, undefined, 'rotate'],
    ['unused but expired: expired', { ...live, refreshExpiresAt: now }, undefined, 'expired'],
    ['unused, every session of the account ended since (epoch moved): expired', { ...live, accountEpoch: 4 }, undefined, 'expired'],
    ['used 10 s ago, successor live and unused: repeat it', used(10_000), live, 'repeat_successor'],
    ['used exactly at the grace limit: repeat it', used(30_000), live, 'repeat_successor'],
    ['used past the grace window: reuse', used(30_001), live, 'reuse_detected'],
    ['used, successor already used: reuse', used(1000), used(500), 'reuse_detected'],
    ['used, successor closed (gone): reuse', used(1000), undefined, 'reuse_detected'],
    ['used, successor expired: reuse', used(1000), { ...live, refreshExpiresAt: now }, 'reuse_detected'],
    ['used within grace, but the epoch moved: expired', { ...used(1000), accountEpoch: 4 }, { ...live, accountEpoch: 4 }, 'expired'],
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
    ['unexpired, unrotated', { accessExpiresAt: now + 1, rotatedAt: null, epoch: 0, accountEpoch: 0 }, true],
    ['at its expiry instant', { accessExpiresAt: now, rotatedAt: null, epoch: 0, accountEpoch: 0 }, false],
    ['rotated by a refresh', { accessExpiresAt: now + 1000, rotatedAt: now - 1, epoch: 0, accountEpoch: 0 }, false],
    ['of an epoch the account has left', { accessExpiresAt: now + 1000, rotatedAt: null, epoch: 0, accountEpoch: 1 }, false],
  ])('%s -> %s', (_case, facts, expected) => {
    expect(bearerIsLive(facts, now)).toBe(expected)
  })
})

describe('isFresh', () => {
  it.each([
    ['just authenticated', now, true],
    ['exactly at the window', now - 600_000, true],
    ['1 ms past the window', now - 600_001, false],
  ])('%s -> %s', (_case, authenticatedAt, expected) => {
    expect(isFresh(authenticatedAt, now, 600)).toBe(expected)
  })
})
