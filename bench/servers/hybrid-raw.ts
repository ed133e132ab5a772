// Raw hybrid signatures (src/crypto/hybrid.ts), `concurrency` independent loops in one process,
// so on every core the libuv pool reaches. Same process shape as the servers: its own child,
// default UV_THREADPOOL_SIZE.
// - verify: the ceiling of the revoke-all scenario. hybridVerify of revoke-all proofs (16 keys):
//   key parsing on the event loop, Ed25519 and ML-DSA-65 on the pool.
// - sign: the ceiling of the receipts scenario. hybridSign of custody receipt bodies (the
//   signing bytes of receipts shaped as the server issues them) with one key, as the server
//   signs with its one active attestation key: both halves on the pool.
// - chain: the ceiling of the receipts scenario since round 2 (the chain bound). Receipts signed
//   strictly one after another, each body carrying the SHA-256 of the previous signed
//   receipt_cbor (API.md section 7), as fast as one process can: on a thread of its own, both
//   halves on that thread (hybrid-chain.worker.ts; on the pool, one hop per signature, the same
//   chain ran at about 0.8 of that speed). What the chain allows a server that does nothing else.
//   With `concurrency` above 1, that many independent chains, each under its own key on its own
//   thread: what chains per shard would allow (docs/scale.md).
import { randomBytes, randomUUID } from 'node:crypto'
import { Worker } from 'node:worker_threads'
import { receiptSigningBytes, revokeAllSigningBytes } from '../../src/contract/signing.ts'
import { generateHybridKeyPair, hybridSign, hybridVerify } from '../../src/crypto/hybrid.ts'
import { percentile } from '../lib/stats.ts'
import { serveParent, startOrDie, timedLoops, type LoopRun, type LoopRunResult } from '../lib/child-side.ts'
import { receiptBody } from './hybrid-raw-bodies.ts'

export interface HybridRun extends LoopRun {
  readonly operation: 'verify' | 'sign' | 'chain'
}

await startOrDie(async () => {
  // A few keys and proofs, as the server sees them: a public key per account, a proof per challenge.
  const proofs = await Promise.all(
    Array.from({ length: 16 }, async () => {
      const pair = generateHybridKeyPair()
      const message = revokeAllSigningBytes(randomUUID(), randomBytes(32).toString('base64url'))
      return { publicKey: pair.publicKey, message, signature: await hybridSign(pair.privateKey, message) }
    }),
  )
  const attestationKey = generateHybridKeyPair().privateKey
  const receipts = Array.from({ length: 16 }, (_, i) => receiptSigningBytes(receiptBody(i + 1, randomBytes(32).toString('hex'))))

  const run = ({ operation, ...loops }: HybridRun) => {
    const turns = Array.from({ length: loops.concurrency }, (_, i) => i)
    const next = (loop: number) => (turns[loop] = (turns[loop] ?? 0) + loops.concurrency)
    if (operation === 'chain') return chainThreads(loops)
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

/** `concurrency` chains, each on its own thread for `seconds` (timed by the threads: their start-up is not counted). */
async function chainThreads({ seconds, concurrency }: LoopRun): Promise<LoopRunResult> {
  const threads = await Promise.all(
    Array.from(
      { length: concurrency },
      () =>
        new Promise<{ latencies: number[]; seconds: number }>((resolve, reject) => {
          const thread = new Worker(new URL('./hybrid-chain.worker.ts', import.meta.url), { workerData: { seconds } })
          thread.once('message', resolve)
          thread.once('error', reject)
        }),
    ),
  )
  const latencies = threads.flatMap((thread) => thread.latencies).sort((a, b) => a - b)
  const elapsed = Math.max(...threads.map((thread) => thread.seconds))
  return { operations: latencies.length, units: latencies.length, seconds: elapsed, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) }
}
