// The chain rule of check 7: creates start chains, replaces continue them from the head.
import { describe, expect, it } from 'vitest'
import { checkChain, type ChainClaim, type ChainFacts } from './lifecycle-write.ts'

const head = 'a'.repeat(64)
const original = 'b'.repeat(64)
const asset: ChainFacts = { albumId: 'album-1', chainHead: head, originalHash: original }
const create: ChainClaim = { action: 'create', albumId: 'album-1', priorProvenanceHash: null, originalBlobHash: null }
const replace: ChainClaim = { action: 'replace', albumId: 'album-1', priorProvenanceHash: head, originalBlobHash: original }

describe('checkChain', () => {
  it.each<[string, ChainClaim, ChainFacts | undefined, ReturnType<typeof checkChain>]>([
    ['create of a new asset', create, undefined, { kind: 'continues' }],
    ['create of an existing asset', create, asset, { kind: 'stale', chainHead: head }],
    ['create of an asset of another album', create, { ...asset, albumId: 'album-2' }, { kind: 'stale', chainHead: null }],
    ['create with a prior hash', { ...create, priorProvenanceHash: head }, undefined, { kind: 'stale', chainHead: null }],
    ['replace from the head', replace, asset, { kind: 'continues' }],
    ['replace from a stale head', { ...replace, priorProvenanceHash: 'c'.repeat(64) }, asset, { kind: 'stale', chainHead: head }],
    ['replace with no prior hash', { ...replace, priorProvenanceHash: null }, asset, { kind: 'stale', chainHead: head }],
    ['replace of another original', { ...replace, originalBlobHash: 'd'.repeat(64) }, asset, { kind: 'stale', chainHead: head }],
    ['replace without original_blob_hash', { ...replace, originalBlobHash: null }, asset, { kind: 'original_required' }],
    ['replace of a missing asset', replace, undefined, { kind: 'stale', chainHead: null }],
    ['replace of an asset of another album', replace, { ...asset, albumId: 'album-2' }, { kind: 'stale', chainHead: null }],
  ])('%s', (_case, claim, facts, verdict) => {
    expect(checkChain(claim, facts)).toEqual(verdict)
  })
})
