// Writes test/vectors/device-enrollment-v1.json from src/client/format/enrollment.ts with fixed
// keys and nonces (docs/client-format.md, "Device enrollment"). Run only when the format changes:
//   ./node_modules/.bin/node test/vectors/generate-enrollment.ts
// device-enrollment.test.ts checks the file against this implementation and an independent one.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import {
  commitment,
  confirmMac,
  encodePayload,
  payloadText,
  sealHistory,
  sealKeys,
  shortAuthenticationString,
  toBase64Url,
  transcriptHash,
} from '../../src/client/format/enrollment.ts'
import { advanceHead, EMPTY_HEAD, encodeHandOver } from '../../src/client/format/album-chain.ts'
import { generateXWingKeyPair, xwingEncapsulate } from '../../src/client/format/xwing.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')
const pattern = (length: number, start: number): Uint8Array => Uint8Array.from({ length }, (_, i) => (start + i) & 0xff)

const channelId = toBase64Url(pattern(32, 0x20))
const deviceId = '1111abcd-2222-4333-8444-555555555555'
const deviceName = 'Phone'
const xwingSeed = pattern(32, 0x07)
const nonceB = pattern(32, 0x50)
const encapsulationRandomness = pattern(64, 0x33)
const identitySeeds = pattern(64, 0x60)
const userId = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0'
const nonceA = pattern(32, 0x70)
const masterKey = pattern(32, 0x00)
const keysNonce = pattern(12, 0x80)
const historyNonce = pattern(12, 0x90)
const historyAlbumId = '2a2b2c2d-3e3f-4041-8243-444546474849'
const historyHead = advanceHead(advanceHead(EMPTY_HEAD, 1, hex(pattern(32, 0xa0))), 4, hex(pattern(32, 0xc0)))
const historyWrite = { seq: 6, manifestHash: hex(pattern(32, 0xe0)), assetId: '5a5b5c5d-6e6f-4071-8273-747576777879', action: 'replace' }
const handOver = new Map([[historyAlbumId, { head: historyHead, writes: [historyWrite] }]])

const pair = generateXWingKeyPair(xwingSeed)
const { cipherText, sharedSecret } = xwingEncapsulate(pair.publicKey, encapsulationRandomness)
const identityKey = IdentityKey.fromSeeds(identitySeeds).publicKey
const commit = await commitment(nonceB)
const hello = encodePayload({ type: 'hello', device_id: deviceId, device_name: deviceName, encryption_key: pair.publicKey, commitment: commit })
const offer = encodePayload({ type: 'offer', ciphertext: cipherText, identity_key: identityKey, user_id: userId, nonce: nonceA })
const reveal = encodePayload({ type: 'reveal', nonce: nonceB })
const transcript = await transcriptHash(channelId, hello, offer, reveal)
const mac = await confirmMac(sharedSecret, transcript)
const keys = encodePayload(await sealKeys(sharedSecret, transcript, { masterKey, identitySeeds }, keysNonce))
const history = (await sealHistory(sharedSecret, transcript, handOver, historyNonce)).map((part) => hex(encodePayload(part)))

const vectors = {
  description:
    'Coffer client format v1, device enrollment (docs/client-format.md, "Device enrollment"). Byte strings are lowercase hex; payloads are their canonical CBOR bytes.',
  inputs: {
    channel_id: channelId,
    device_id: deviceId,
    device_name: deviceName,
    xwing_seed: hex(xwingSeed),
    nonce_b: hex(nonceB),
    encapsulation_randomness: hex(encapsulationRandomness),
    identity_seeds: hex(identitySeeds),
    user_id: userId,
    nonce_a: hex(nonceA),
    master_key: hex(masterKey),
    keys_nonce: hex(keysNonce),
    history_nonce: hex(historyNonce),
    history_album_id: historyAlbumId,
    history_head: { seq: historyHead.seq, count: historyHead.count, digest: hex(historyHead.digest) },
    history_write: { seq: historyWrite.seq, manifest_hash: historyWrite.manifestHash, asset_id: historyWrite.assetId, action: historyWrite.action },
  },
  outputs: {
    commitment: hex(commit),
    shared_secret: hex(sharedSecret),
    hello: hex(hello),
    hello_relay_text: payloadText(hello),
    offer: hex(offer),
    reveal: hex(reveal),
    transcript: hex(transcript),
    sas: await shortAuthenticationString(sharedSecret, transcript),
    confirm: hex(encodePayload({ type: 'confirm', mac })),
    confirm_mac: hex(mac),
    keys: hex(keys),
    done: hex(encodePayload({ type: 'done' })),
    history_plain: hex(encodeHandOver(handOver)),
    history,
    kept: hex(encodePayload({ type: 'kept' })),
    abort_declined: hex(encodePayload({ type: 'abort', reason: 'declined' })),
  },
}
const file = path.join(import.meta.dirname, 'device-enrollment-v1.json')
await writeFile(file, `${JSON.stringify(vectors, null, 2)}\n`)
console.log(`wrote ${file}`)
