// The ceiling of the revoke-all scenario: raw hybrid verification (src/crypto/hybrid.ts
// hybridVerify: key parsing on the event loop, Ed25519 and ML-DSA-65 on the libuv pool) of
// revoke-all proofs, `concurrency` independent loops in one process, so on every core the
// pool reaches. Same process shape as the servers: its own child, default UV_THREADPOOL_SIZE.
import { randomBytes, randomUUID } from 'node:crypto'
import { revokeAllSigningBytes } from '../../src/contract/signing.ts'
import { generateHybridKeyPair, hybridSign, hybridVerify } from '../../src/crypto/hybrid.ts'
import { serveParent, startOrDie } from '../lib/child-side.ts'

export interface HybridVerifyRun {
  readonly seconds: number
  readonly concurrency: number
}

export interface HybridVerifyRunResult {
  readonly completed: number
  readonly seconds: number
  readonly p50Ms: number
  readonly p99Ms: number
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0)
}

await startOrDie(async () => {
  // A few keys and proofs, as the server sees them: a public key per account, a proof per challenge.
  const proofs = await Promise.all(Array.from({ length: 16 }, async () => {
    const pair = generateHybridKeyPair()
    const message = revokeAllSigningBytes(randomUUID(), randomBytes(32).toString('base64url'))
    return { publicKey: pair.publicKey, message, signature: await hybridSign(pair.privateKey, message) }
  }))

  const run = async ({ seconds, concurrency }: HybridVerifyRun): Promise<HybridVerifyRunResult> => {
    const started = performance.now()
    const deadline = started + seconds * 1000
    const latencies: number[] = []
    const loop = async (index: number) => {
      for (let i = index; performance.now() < deadline; i++) {
        const proof = proofs[i % proofs.length]
        if (proof === undefined) throw new Error('no proof')
        const t0 = performance.now()
        if (!(await hybridVerify(proof.publicKey, proof.message, proof.signature))) throw new Error('raw hybridVerify refused a good proof')
        latencies.push(performance.now() - t0)
      }
    }
    await Promise.all(Array.from({ length: concurrency }, (_, i) => loop(i)))
    latencies.sort((a, b) => a - b)
    return { completed: latencies.length, seconds: (performance.now() - started) / 1000, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) }
  }

  serveParent({ proofs: proofs.length }, { onRequest: (body) => run(body as HybridVerifyRun) })
})
