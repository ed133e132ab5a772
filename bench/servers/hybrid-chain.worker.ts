// One chain of the receipts scenario's ceiling (hybrid-raw.ts `chain`), on a thread of its own as
// the server's receipt signer is (decision 0035): receipts signed strictly one after another on
// this thread, each body carrying the SHA-256 of the previous signed receipt_cbor, under this
// chain's own key, for `seconds`. Posts the latency of every receipt (ms) and the seconds they took.
import { createHash, randomBytes } from 'node:crypto'
import { parentPort, workerData } from 'node:worker_threads'
import { encodeSignedReceipt, receiptSigningBytes } from '../../src/contract/signing.ts'
import { generateHybridKeyPair, hybridSignOnThisThread } from '../../src/crypto/hybrid.ts'
import { receiptBody } from './hybrid-raw-bodies.ts'

const { seconds } = workerData as { readonly seconds: number }
const key = generateHybridKeyPair().privateKey
let head = randomBytes(32).toString('hex')
const latencies: number[] = []
const started = performance.now()
const deadline = started + seconds * 1000
for (let seq = 1; performance.now() < deadline; seq++) {
  const started = performance.now()
  const body = receiptBody(seq, head)
  const receiptCbor = encodeSignedReceipt(body, hybridSignOnThisThread(key, receiptSigningBytes(body)))
  head = createHash('sha256').update(receiptCbor).digest('hex')
  latencies.push(performance.now() - started)
}
parentPort?.postMessage({ latencies, seconds: (performance.now() - started) / 1000 })
