// A batch answers each hash as a single download would, and serves bytes only while their sizes
// fit in what is left of the budget, in request order; refused hashes cost nothing.
import { describe, expect, it } from 'vitest'
import { decideBatch, type BatchBlobFacts } from './blob-batch.ts'

const live = (size: number): BatchBlobFacts => ({ size, withheld: false })
const withheld = (size: number): BatchBlobFacts => ({ size, withheld: true })

describe('decideBatch', () => {
  it.each<[string, [string, BatchBlobFacts | undefined][], number, (number | string)[]]>([
    [
      'every blob fits',
      [
        ['a', live(10)],
        ['b', live(20)],
      ],
      30,
      [200, 200],
    ],
    ['nothing known', [['a', undefined]], 30, ['404 error.not_found']],
    ['withheld, however small', [['a', withheld(1)]], 30, ['451 error.moderation.taken_down']],
    [
      'the one that goes past the budget',
      [
        ['a', live(20)],
        ['b', live(11)],
      ],
      30,
      [200, '413 error.request.too_large'],
    ],
    [
      'a later, smaller one still fits',
      [
        ['a', live(20)],
        ['b', live(11)],
        ['c', live(10)],
      ],
      30,
      [200, '413 error.request.too_large', 200],
    ],
    [
      'one larger than the whole budget, first',
      [
        ['a', live(31)],
        ['b', live(5)],
      ],
      30,
      ['413 error.request.too_large', 200],
    ],
    [
      'refused hashes cost nothing',
      [
        ['a', undefined],
        ['b', withheld(25)],
        ['c', live(30)],
      ],
      30,
      ['404 error.not_found', '451 error.moderation.taken_down', 200],
    ],
    [
      'empty blobs always fit',
      [
        ['a', live(30)],
        ['b', live(0)],
      ],
      30,
      [200, 200],
    ],
  ])('%s', (_case, requested, budget, expected) => {
    const facts = new Map(requested.flatMap(([hash, blob]) => (blob === undefined ? [] : [[hash, blob] as const])))
    const decisions = decideBatch(
      requested.map(([hash]) => hash),
      facts,
      budget,
    )
    expect(decisions.map((d) => d.hash)).toEqual(requested.map(([hash]) => hash))
    expect(decisions.map((d) => (d.status === 200 ? 200 : `${d.status} ${d.code}`))).toEqual(expected)
    for (const d of decisions) if (d.status === 200) expect(d.size).toBe(facts.get(d.hash)?.size)
  })
})
