// SPEC's "Album upgrade ceremony" table, row by row, plus the commit and the window.
import { describe, expect, it } from 'vitest'
import { acceptableTarget, decideAbort, decideCommit, decideStart, liveCeremony } from './upgrade.ts'

const now = 1_800_000_000_000
const live = { intentId: 'i-1', toVersion: '2026-10-01', expiresAt: now + 1 }

describe('upgrade ceremony', () => {
  it('is live until its window passes', () => {
    expect(liveCeremony(live, now)).toBe(live)
    expect(liveCeremony({ ...live, expiresAt: now }, now)).toBeNull()
    expect(liveCeremony(null, now)).toBeNull()
  })

  it.each([
    ['normal + start', null, 'i-1', 'start'],
    ['quiescence + start, same intent', live, 'i-1', 'same'],
    ['quiescence + start, other intent', live, 'i-2', 'conflict'],
  ] as const)('%s -> %s', (_row, ceremony, intent, outcome) => {
    expect(decideStart(ceremony, intent)).toBe(outcome)
  })

  it.each([
    ['quiescence + abort, matching', live, 'i-1', 'abort'],
    ['quiescence + abort, not matching', live, 'i-2', 'conflict'],
    ['normal + abort', null, 'i-1', 'conflict'],
  ] as const)('%s -> %s', (_row, ceremony, intent, outcome) => {
    expect(decideAbort(ceremony, intent)).toBe(outcome)
  })

  it.each([
    ['matching, nothing in flight', live, 'i-1', 0, 'commit'],
    ['matching, 2 in flight', live, 'i-1', 2, 'not_quiescent'],
    ['not matching', live, 'i-2', 0, 'conflict'],
    ['no live ceremony', null, 'i-1', 0, 'conflict'],
  ] as const)('commit %s -> %s', (_row, ceremony, intent, inFlight, outcome) => {
    expect(decideCommit(ceremony, intent, inFlight)).toBe(outcome)
  })

  it.each([
    ['2026-10-01', '2026-06-01', true],
    ['2026-06-01', '2026-06-01', false],
    ['2026-05-01', '2026-06-01', false],
    ['2026-11-01', '2026-06-01', true],
    ['2026-11-02', '2026-06-01', false],
  ])('target %s from %s acceptable: %s', (to, from, expected) => {
    expect(acceptableTarget(to, from, '2026-11-01')).toBe(expected)
  })
})
