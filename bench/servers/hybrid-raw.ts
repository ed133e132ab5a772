// Raw hybrid signatures (src/crypto/hybrid.ts), `concurrency` independent loops in one process,
// so on every core the libuv pool reaches. Same process shape as the servers: its own child,
// default UV_THREADPOOL_SIZE.
// - verify: the ceiling of the revoke-all scenario. hybridVerify of revoke-all proofs (16 keys):
//   key parsing on the event loop, Ed25519 and ML-DSA-65 on the pool.
// - sign: the ceiling of the receipts scenario. hybridSign of custody receipt bodies (the
//   signing bytes of receipts shaped as the server issues them) with one key, as the server
//   signs with its one active attestation key: both halves on the pool.
// - chain: the ceiling of the receipts scenario since round 2 (the chain bound). Receipts signed
//   strictly one after another in one loop, each body carrying the SHA-256 of the previous
//   signed receipt_cbor (API.md section 7), as fast as one process can: what the chain allows
//   a server that does nothing else. With `concurrency` above 1, that many independent chains,
//   each under its own key, one loop each: what chains per shard would allow (docs/scale.md).
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { timestamp } from '../../src/contract/common.ts'
import { encodeReceiptBody, encodeSignedReceipt, receiptSigningBytes, revokeAllSigningBytes } from '../../src/contract/signing.ts'
import { generateHybridKeyPair, hybridSign, hybridVerify, type HybridPrivateKey } from '../../src/crypto/hybrid.ts'
import { serveParent, startOrDie, timedLoops, type LoopRun } from '../lib/child-side.ts'

export interface HybridRun extends LoopRun {
  readonly operation: 'verify' | 'sign' | 'chain'
}

/** The body of a custody receipt like those the server issues (API.md section 7). */
function receiptBody(seq: number, priorReceiptHash: string): Uint8Array {
  return encodeReceiptBody({
    receipt_seq: seq,
    server_id: 'http://127.0.0.1:8080',
    server_key_id: randomBytes(32).toString('hex'),
    prior_receipt_hash: priorReceiptHash,
    upload_id: randomUUID(),
    asset_id: randomUUID(),
    blob_role: 'derivative',
    ciphertext_hash: randomBytes(32).toString('hex'),
    size: 2048,
    envelope_hash: null,
    received_at: timestamp(Date.now()),
  })
}

await startOrDie(async () => {
  // A few keys and proofs, as the server sees them: a public key per account, a proof per challenge.
  const proofs = await Promise.all(Array.from({ length: 16 }, async () => {
    const pair = generateHybridKeyPair()
    const message = revokeAllSigningBytes(randomUUID(), randomBytes(32).toString('base64url'))
    return { publicKey: pair.publicKey, message, signature: await hybridSign(pair.privateKey, message) }
  }))
  const attestationKey = generateHybridKeyPair().privateKey
  const receipts = Array.from({ length: 16 }, (_, i) => receiptSigningBytes(receiptBody(i + 1, randomBytes(32).toString('hex'))))
  const chains: Array<{ key: HybridPrivateKey; seq: number; head: string }> = []

  const run = ({ operation, ...loops }: HybridRun) => {
    const turns = Array.from({ length: loops.concurrency }, (_, i) => i)
    const next = (loop: number) => (turns[loop] = (turns[loop] ?? 0) + loops.concurrency)
    if (operation === 'chain') {
      return timedLoops(loops, async (loop) => {
        const chain = (chains[loop] ??= { key: generateHybridKeyPair().privateKey, seq: 0, head: randomBytes(32).toString('hex') })
        chain.seq += 1
        const body = receiptBody(chain.seq, chain.head)
        const receiptCbor = encodeSignedReceipt(body, await hybridSign(chain.key, receiptSigningBytes(body)))
        chain.head = createHash('sha256').update(receiptCbor).digest('hex')
      })
    }
    if (operation === 'sign') {
      return timedLoops(loops, async (loop) => {
        await hybridSign(attestationKey, receipts[next(loop) % receipts.length] as Uint8Array)
      })
    }
    return timedLoops(loops, async (loop) => {
      const proof = proofs[next(loop) % proofs.length]
      if (proof === undefined) throw new Error('no proof')
      if (!(await hybridVerify(proof.publicKey, proof.message, proof.signature))) throw new Error('raw hybridVerify refused a good proof')
    })
  }

  serveParent({ proofs: proofs.length, receipts: receipts.length }, { onRequest: (body) => run(body as HybridRun) })
})
