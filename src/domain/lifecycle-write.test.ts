// The chain rule of check 7: creates start chains, replaces continue them from the head,
// deletes end them there, and nothing continues a deleted asset. The retention floor of a delete.
import { describe, expect, it } from 'vitest'
import { checkChain, retainedUntil, type ChainClaim, type ChainFacts } from './lifecycle-write.ts'

const head = 'a'.repeat(64)
const original = 'b'.repeat(64)
const asset: ChainFacts = { albumId: 'album-1', chainHead: head, originalHash: original, deletedAt: null }
const deleted: ChainFacts = { ...asset, deletedAt: 1 }
const create: ChainClaim = { action: 'create', albumId: 'album-1', priorProvenanceHash: null, originalBlobHash: null, ciphertextHash: 'e'.repeat(64) }
const replace: ChainClaim = { action: 'replace', albumId: 'album-1', priorProvenanceHash: head, originalBlobHash: original, ciphertextHash: 'e'.repeat(64) }
const remove: ChainClaim = { action: 'delete', albumId: 'album-1', priorProvenanceHash: head, originalBlobHash: original, ciphertextHash: original }

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
    ['replace of a deleted asset, from its head', replace, deleted, { kind: 'stale', chainHead: head }],
    ['create of a deleted asset', create, deleted, { kind: 'stale', chainHead: head }],
    ['delete from the head, naming the original twice', remove, asset, { kind: 'continues' }],
    ['delete from a stale head', { ...remove, priorProvenanceHash: 'c'.repeat(64) }, asset, { kind: 'stale', chainHead: head }],
    ['delete with no prior hash', { ...remove, priorProvenanceHash: null }, asset, { kind: 'stale', chainHead: head }],
    ['delete naming another original', { ...remove, originalBlobHash: 'd'.repeat(64) }, asset, { kind: 'stale', chainHead: head }],
    ['delete whose ciphertext_hash is not the original', { ...remove, ciphertextHash: 'd'.repeat(64) }, asset, { kind: 'stale', chainHead: head }],
    ['delete without original_blob_hash', { ...remove, originalBlobHash: null }, asset, { kind: 'original_required' }],
    ['delete of a missing asset', remove, undefined, { kind: 'stale', chainHead: null }],
    ['delete of an asset of another album', remove, { ...asset, albumId: 'album-2' }, { kind: 'stale', chainHead: null }],
    ['delete of a deleted asset, from its head', remove, deleted, { kind: 'stale', chainHead: head }],
  ])('%s', (_case, claim, facts, verdict) => {
    expect(checkChain(claim, facts)).toEqual(verdict)
  })
})

describe('retainedUntil', () => {
  it.each<[string, number | null, number | null]>([
    ['no floor', null, null],
    ['a floor in the past', 999, null],
    ['a floor at this very instant (no longer in the future)', 1000, null],
    ['a floor in the future', 1001, 1001],
  ])('%s', (_case, retentionUntil, verdict) => {
    expect(retainedUntil({ retentionUntil }, 1000)).toBe(verdict)
  })
})
