// verifyReceipts (SDK) refuses a receipt_cbor with any single byte flipped, whichever byte: the
// outer map, the body, either half of the hybrid signature. The check runs on the bytes as the
// server served them, whatever stored them, so this file runs once (vitest.config.ts
// engineNeutral): 3,871 hybrid verifications take 20-45 s on CI's busy cores.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { verifyReceipts } from '../../src/sdk/receipts.ts'
import { album, uploader } from '../support/albums.ts'
import { openBundle, writeFor } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
afterAll(() => server.close())
beforeAll(async () => {
  server = await startServer()
})

it('fails when any single byte of a receipt_cbor is flipped, whichever byte', async () => {
  const alice = await uploader(server, 'alice')
  const albumId = await album(alice)
  const written = await alice.client.applyManifest(albumId, (await writeFor(alice, await openBundle(alice, albumId))).request)
  const { receipts } = await alice.client.assetReceipts(written.asset_id)
  const document = await alice.client.attestationKeys()
  const target = receipts[1]!
  expect(await verifyReceipts([target], document, written.asset_id)).toEqual({ valid: true, problems: [] })
  const bytes = Buffer.from(target.receipt_cbor, 'base64')
  expect(bytes.length).toBeGreaterThan(3373)
  const passing: number[] = []
  for (let at = 0; at < bytes.length; at++) {
    const flipped = Buffer.from(bytes)
    flipped[at]! ^= at % 2 === 0 ? 0xff : 0x01
    const check = await verifyReceipts([{ ...target, receipt_cbor: flipped.toString('base64') }], document, written.asset_id)
    if (check.valid) passing.push(at)
  }
  expect(passing).toEqual([])
}, 120_000)
