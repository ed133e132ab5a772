// argon2id in a worker of its own (workers/argon2.worker.ts): the escrow's, for the account
// flows' `argon2id` option, and the password key's at sign-in (lib/sealed.ts). A worker per call,
// ended after it: its memory is given back at once, and a flow needs it once or twice.
import * as Comlink from 'comlink'
import type { Argon2id } from '#photos/format/recovery.ts'
import type { Argon2Worker } from '../workers/argon2.worker.ts'

export const workerArgon2id: Argon2id = async (password, salt, params) => {
  const worker = new Worker(new URL('../workers/argon2.worker.ts', import.meta.url), { type: 'module', name: 'argon2id' })
  try {
    return await Comlink.wrap<Argon2Worker>(worker).argon2id(password, salt, params)
  } finally {
    worker.terminate()
  }
}
