// Runs a format test on each of the client format's symmetric primitives (format/primitives.ts):
// WebCrypto's, as browsers run it, and node:crypto's, which coffer-photos installs.
import { afterAll, beforeAll, describe } from 'vitest'
import { installPrimitives, webCryptoPrimitives, type SymmetricPrimitives } from '../../src/client/format/primitives.ts'
import { nativePrimitives } from '../../src/client/node/primitives.ts'

const EVERY: ReadonlyArray<readonly [string, SymmetricPrimitives]> = [
  ['WebCrypto', webCryptoPrimitives],
  ["node:crypto's", nativePrimitives],
]

/** `body` in a describe block per set of primitives, each installed for its block (WebCrypto's again after). */
export function onEachPrimitives(name: string, body: () => void): void {
  describe.each(EVERY)(`${name}, on %s primitives`, (_, chosen) => {
    beforeAll(() => installPrimitives(chosen))
    afterAll(() => installPrimitives(webCryptoPrimitives))
    body()
  })
}
