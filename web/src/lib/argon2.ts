// The escrow's argon2id in a worker of its own (workers/argon2.worker.ts), for the account flows'
// `argon2id` option. A worker per call, ended after it: its 64 MiB are given back at once, and a
// setup or recovery needs it once.
import * as Comlink from 'comlink'
import type { Argon2id } from '../../../src/client/format/recovery.ts'
import type { Argon2Worker } from '../workers/argon2.worker.ts'

export const workerArgon2id: Argon2id = async (password, salt, params) => {
  const worker = new Worker(new URL('../workers/argon2.worker.ts', import.meta.url), { type: 'module', name: 'argon2id' })
  try {
    return await Comlink.wrap<Argon2Worker>(worker).argon2id(password, salt, params)
  } finally {
    worker.terminate()
  }
}
