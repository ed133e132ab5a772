// Verdict rules: retrievable needs stored and not withheld; durable needs every declared blob
// stored, indexed, retrievable and not corrupt.
import { describe, expect, it } from 'vitest'
import { blobVerdict, isDurable, UNKNOWN_BLOB, type BlobFacts } from './verification.ts'

const good: BlobFacts = { role: 'original', stored: true, indexed: true, withheld: false }

describe('blobVerdict', () => {
  it.each<[string, BlobFacts, ReturnType<typeof blobVerdict>]>([
    ['all good', good, { role: 'original', stored: true, indexed: true, retrievable: true }],
    ['a hash the asset does not hold', { ...good, role: null }, { role: 'unknown', stored: true, indexed: true, retrievable: true }],
    ['not stored', { ...good, stored: false }, { role: 'original', stored: false, indexed: true, retrievable: false }],
    ['withheld by a takedown', { ...good, withheld: true }, { role: 'original', stored: true, indexed: true, retrievable: false }],
    ['scanned intact', { ...good, deep: 'intact' }, { role: 'original', stored: true, indexed: true, retrievable: true, deep: 'intact' }],
  ])('%s', (_case, facts, verdict) => {
    expect(blobVerdict(facts)).toEqual(verdict)
  })
})

describe('isDurable', () => {
  const ok = blobVerdict(good)
  it.each([
    ['every blob good', [ok, ok], true],
    ['one not indexed', [ok, { ...ok, indexed: false }], false],
    ['one not retrievable', [ok, { ...ok, retrievable: false }], false],
    ['one found corrupt', [ok, { ...ok, deep: 'corrupt' as const }], false],
    ['one not scanned for lack of budget', [ok, { ...ok, deep: 'rate_limited' as const }], true],
    ['nothing declared', [], false],
    ['an unknown asset', [UNKNOWN_BLOB], false],
  ])('%s -> %s', (_case, verdicts, durable) => {
    expect(isDurable(verdicts)).toBe(durable)
  })
})
