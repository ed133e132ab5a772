// The protocol range of a lifecycle write is [later of PROTOCOL_MIN and the album's version, PROTOCOL_MAX].
import { describe, expect, it } from 'vitest'
import { checkProtocol, isProtocolDate } from './protocol.ts'

const range = { min: '2025-01-01', max: '2026-11-01' }

describe('checkProtocol', () => {
  it.each([
    ['2026-06-01', '2026-06-01', { accepted: true }],
    ['2025-01-01', '2025-01-01', { accepted: true }],
    ['2026-11-01', '2026-06-01', { accepted: true }],
    ['2024-12-31', '2025-01-01', { accepted: false, protocolMin: '2025-01-01', protocolMax: '2026-11-01' }],
    ['2026-11-02', '2026-06-01', { accepted: false, protocolMin: '2026-06-01', protocolMax: '2026-11-01' }],
    ['2026-05-31', '2026-06-01', { accepted: false, protocolMin: '2026-06-01', protocolMax: '2026-11-01' }],
  ])('%s on an album at %s', (version, album, verdict) => {
    expect(checkProtocol(version, range, album)).toEqual(verdict)
  })
})

describe('isProtocolDate', () => {
  it.each([
    ['2026-06-01', true],
    ['2026-02-29', false],
    ['2024-02-29', true],
    ['2026-13-01', false],
    ['2026-6-1', false],
    ['20260601', false],
  ])('%s -> %s', (value, expected) => {
    expect(isProtocolDate(value)).toBe(expected)
  })
})
