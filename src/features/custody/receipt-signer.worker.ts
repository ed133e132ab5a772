// The receipt signer's thread (receipt-signer.ts): signs each request's receipts on this thread,
// in the order requests arrive, keeping per chain the tip the last one left and per key id the
// private key. A request whose signing fails leaves its chain with no tip: the sequencer then
// asks again with the head read from the database.
import { parentPort } from 'node:worker_threads'
import { hybridSignOnThisThread, type HybridPrivateKey } from '../../crypto/hybrid.ts'
import type { ChainTip } from '../../storage/port/custody.ts'
import { signBundles } from './receipt-bundle.ts'
import type { SignReply, SignRequest } from './receipt-signer.ts'

const port = parentPort
if (port === null) throw new Error('receipt-signer.worker.ts runs as a worker thread')

const tips = new Map<number, ChainTip>()
const keys = new Map<string, HybridPrivateKey>()

async function signed(request: SignRequest): Promise<SignReply> {
  if (request.key !== null) keys.set(request.key.keyId, request.key.privateKey)
  const after = request.after ?? tips.get(request.chain)
  const key = after?.activeKeyId == null ? undefined : keys.get(after.activeKeyId)
  tips.delete(request.chain)
  if (after === undefined || key === undefined) return { id: request.id, kind: 'no-tip' }
  try {
    const bundle = await signBundles((message) => hybridSignOnThisThread(key, message), request.serverId, request.bundles, after, request.place, request.now)
    tips.set(request.chain, bundle.tip)
    return { id: request.id, kind: 'signed', signed: bundle }
  } catch (error) {
    return { id: request.id, kind: 'failed', message: error instanceof Error ? error.message : String(error) }
  }
}

// One request at a time, in arrival order: each continues the tip the one before it left.
let turn: Promise<void> = Promise.resolve()
port.on('message', (request: SignRequest) => {
  turn = turn.then(async () => port.postMessage(await signed(request)))
})
