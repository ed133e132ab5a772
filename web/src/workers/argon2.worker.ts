// argon2id off the page's thread, so that the page keeps answering while setup seals the
// recovery escrow (64 MiB, 3 passes: a few seconds), recovery opens it, or a sign-in makes the
// password key that seals the device keys (lib/sealed.ts). The portable implementation: the same
// code src/client runs everywhere.
import * as Comlink from 'comlink'
import { portableArgon2id } from '#photos/format/recovery.ts'

const api = { argon2id: portableArgon2id }
export type Argon2Worker = typeof api

Comlink.expose(api)
