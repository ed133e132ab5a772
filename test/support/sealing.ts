// Sealing and opening under one key, as the web app's lib/store.ts does under the sign-in's
// storage key: what the browser indexes' pure records (photo index, date index) are given.
import { openBytes, sealBytes, type AesKey, type Sealed } from '../../web/src/lib/sealed.ts'

export const sealUnder =
  (key: AesKey) =>
  (name: string, plaintext: Uint8Array): Promise<Sealed> =>
    sealBytes(key, name, plaintext)

/** Null where it does not open (another key, another name, altered), as openWithStorageKey answers. */
export const openUnder =
  (key: AesKey) =>
  (name: string, sealed: Sealed): Promise<Uint8Array | null> =>
    openBytes(key, name, sealed).catch(() => null)
