// The device-enrollment vectors (test/vectors/device-enrollment-v1.json, written by
// generate-enrollment.ts): this implementation reproduces every byte, and an independent one
// (node:crypto's SHA-256, HKDF, HMAC and AES-256-GCM, following docs/client-format.md "Device
// enrollment" only) derives the same transcript, SAS, confirmation and keys.
import { createDecipheriv, createHash, createHmac, hkdfSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  commitment,
  confirmMac,
  decodePayload,
  encodePayload,
  openHistory,
  openKeys,
  payloadText,
  sealHistory,
  sealKeys,
  shortAuthenticationString,
  transcriptHash,
  type History,
  type Keys,
} from '../../src/client/format/enrollment.ts'
import { decodeHandOver, encodeHandOver } from '../../src/client/format/album-chain.ts'
import { generateXWingKeyPair, xwingDecapsulate, xwingEncapsulate } from '../../src/client/format/xwing.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'

const file = JSON.parse(readFileSync(path.join(import.meta.dirname, 'device-enrollment-v1.json'), 'utf8')) as {
  inputs: Record<string, string> & {
    history_head: { seq: number; count: number; digest: string }
    history_write: { seq: number; manifest_hash: string; asset_id: string; action: string }
  }
  outputs: Record<string, string> & { history: string[] }
}
const { inputs, outputs } = file
const bytes = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, 'hex'))
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex')

describe('device enrollment v1 test vectors (test/vectors/device-enrollment-v1.json)', () => {
  it("this implementation makes exactly the vectors' payloads and derivations", async () => {
    const pair = generateXWingKeyPair(bytes(inputs.xwing_seed!))
    const { cipherText, sharedSecret } = xwingEncapsulate(pair.publicKey, bytes(inputs.encapsulation_randomness!))
    expect(hex(sharedSecret)).toBe(outputs.shared_secret)
    expect(hex(xwingDecapsulate(cipherText, pair.secretKey))).toBe(outputs.shared_secret)
    const commit = await commitment(bytes(inputs.nonce_b!))
    expect(hex(commit)).toBe(outputs.commitment)
    const hello = encodePayload({
      type: 'hello',
      device_id: inputs.device_id!,
      device_name: inputs.device_name!,
      encryption_key: pair.publicKey,
      commitment: commit,
    })
    const offer = encodePayload({
      type: 'offer',
      ciphertext: cipherText,
      identity_key: IdentityKey.fromSeeds(bytes(inputs.identity_seeds!)).publicKey,
      user_id: inputs.user_id!,
      nonce: bytes(inputs.nonce_a!),
    })
    const reveal = encodePayload({ type: 'reveal', nonce: bytes(inputs.nonce_b!) })
    expect([hex(hello), hex(offer), hex(reveal), payloadText(hello)]).toEqual([outputs.hello, outputs.offer, outputs.reveal, outputs.hello_relay_text])
    const transcript = await transcriptHash(inputs.channel_id!, hello, offer, reveal)
    expect(hex(transcript)).toBe(outputs.transcript)
    expect(await shortAuthenticationString(sharedSecret, transcript)).toBe(outputs.sas)
    const mac = await confirmMac(sharedSecret, transcript)
    expect(hex(encodePayload({ type: 'confirm', mac }))).toBe(outputs.confirm)
    const keys = await sealKeys(
      sharedSecret,
      transcript,
      { masterKey: bytes(inputs.master_key!), identitySeeds: bytes(inputs.identity_seeds!) },
      bytes(inputs.keys_nonce!),
    )
    expect(hex(encodePayload(keys))).toBe(outputs.keys)
    expect(await openKeys(sharedSecret, transcript, decodePayload(bytes(outputs.keys!)) as Keys)).toEqual({
      masterKey: bytes(inputs.master_key!),
      identitySeeds: bytes(inputs.identity_seeds!),
    })
    expect(hex(encodePayload({ type: 'done' }))).toBe(outputs.done)
    expect(hex(encodePayload({ type: 'abort', reason: 'declined' }))).toBe(outputs.abort_declined)
    const { history_head: head, history_write: write } = inputs
    const handOver = new Map([
      [
        inputs.history_album_id!,
        {
          head: { seq: head.seq, count: head.count, digest: bytes(head.digest) },
          writes: [{ seq: write.seq, manifestHash: write.manifest_hash, assetId: write.asset_id, action: write.action }],
        },
      ],
    ])
    expect(hex(encodeHandOver(handOver))).toBe(outputs.history_plain)
    const history = await sealHistory(sharedSecret, transcript, handOver, bytes(inputs.history_nonce!))
    expect(history.map((part) => hex(encodePayload(part)))).toEqual(outputs.history)
    const received = outputs.history.map((part) => decodePayload(bytes(part)) as History)
    expect(await openHistory(sharedSecret, transcript, received)).toEqual(decodeHandOver(bytes(outputs.history_plain!)))
    expect(hex(encodePayload({ type: 'kept' }))).toBe(outputs.kept)
  })

  it('an independent implementation derives the same transcript, SAS, confirmation MAC and opens the keys', () => {
    const channel = Buffer.from(inputs.channel_id!, 'base64url')
    expect(channel).toHaveLength(32)
    expect(createHash('sha256').update(bytes(inputs.nonce_b!)).digest('hex')).toBe(outputs.commitment)
    const framed = (payload: string): Buffer[] => {
      const length = Buffer.alloc(4)
      length.writeUInt32BE(payload.length / 2)
      return [length, Buffer.from(payload, 'hex')]
    }
    const transcript = createHash('sha256')
      .update(
        Buffer.concat([
          Buffer.from('coffer/v1/enroll/transcript\0'),
          channel,
          ...framed(outputs.hello!),
          ...framed(outputs.offer!),
          ...framed(outputs.reveal!),
        ]),
      )
      .digest()
    expect(transcript.toString('hex')).toBe(outputs.transcript)
    const ss = Buffer.from(outputs.shared_secret!, 'hex')
    const derive = (label: string, length: number): Buffer =>
      Buffer.from(hkdfSync('sha256', ss, Buffer.alloc(0), Buffer.concat([Buffer.from(`${label}\0`), transcript]), length))
    const digits = String(derive('coffer/v1/enroll/sas', 4).readUInt32BE(0) % 1_000_000).padStart(6, '0')
    expect(`${digits.slice(0, 3)} ${digits.slice(3)}`).toBe(outputs.sas)
    expect(createHmac('sha256', derive('coffer/v1/enroll/confirm', 32)).update(transcript).digest('hex')).toBe(outputs.confirm_mac)
    // keys = canonical CBOR {"type": "keys", "nonce": bstr 12, "sealed": bstr 112, "version": 1}, keys shortest first.
    const keys = Buffer.from(outputs.keys!, 'hex')
    expect(keys).toHaveLength(160)
    const nonce = keys.subarray(18, 30)
    const sealed = keys.subarray(39, 151)
    const text = (s: string): string => (0x60 + s.length).toString(16) + Buffer.from(s).toString('hex')
    expect(keys.toString('hex')).toBe(
      `a4${text('type')}${text('keys')}${text('nonce')}4c${nonce.toString('hex')}${text('sealed')}5870${sealed.toString('hex')}${text('version')}01`,
    )
    expect(nonce.toString('hex')).toBe(inputs.keys_nonce)
    const decipher = createDecipheriv('aes-256-gcm', derive('coffer/v1/enroll/keys', 32), nonce)
    decipher.setAAD(transcript)
    decipher.setAuthTag(sealed.subarray(96))
    const plain = Buffer.concat([decipher.update(sealed.subarray(0, 96)), decipher.final()])
    expect(plain.toString('hex')).toBe(inputs.master_key! + inputs.identity_seeds!)

    // history (one part here) = canonical CBOR {"data": bstr, "part": 0, "type": "history", "parts": 1, "version": 1};
    // data = nonce (12) || AES-256-GCM(derive("coffer/v1/enroll/history", 32), aad T, the hand-over) || tag (16).
    expect(outputs.history).toHaveLength(1)
    const part = Buffer.from(outputs.history[0]!, 'hex')
    expect(part.subarray(0, 6).toString('hex')).toBe(`a5${text('data')}`)
    expect([0x58, 0x59]).toContain(part[6]) // a byte string of 24 to 65535 bytes: its length in 1 or 2 bytes
    const dataStart = part[6] === 0x58 ? 8 : 9
    const data = part.subarray(dataStart, dataStart + (part[6] === 0x58 ? part[7]! : part.readUInt16BE(7)))
    expect(part.subarray(dataStart + data.length).toString('hex')).toBe(
      `${text('part')}00${text('type')}${text('history')}${text('parts')}01${text('version')}01`,
    )
    expect(data.subarray(0, 12).toString('hex')).toBe(inputs.history_nonce)
    const historyDecipher = createDecipheriv('aes-256-gcm', derive('coffer/v1/enroll/history', 32), data.subarray(0, 12))
    historyDecipher.setAAD(transcript)
    historyDecipher.setAuthTag(data.subarray(data.length - 16))
    const handOver = Buffer.concat([historyDecipher.update(data.subarray(12, data.length - 16)), historyDecipher.final()])
    expect(handOver.toString('hex')).toBe(outputs.history_plain)
    // The hand-over: {"albums": {album id: {"seq", "count", "digest", "writes": [{"seq", "hash", "asset", "action"}]}}}, canonical.
    const { history_head: head, history_write: write } = inputs
    const uint = (n: number): string => n.toString(16).padStart(2, '0') // below 24: one byte
    const album = `a4${text('seq')}${uint(head.seq)}${text('count')}${uint(head.count)}${text('digest')}5820${head.digest}${text('writes')}81a4${text('seq')}${uint(write.seq)}${text('hash')}5820${write.manifest_hash}${text('asset')}7824${Buffer.from(write.asset_id).toString('hex')}${text('action')}${text(write.action)}`
    expect(handOver.toString('hex')).toBe(`a1${text('albums')}a17824${Buffer.from(inputs.history_album_id!).toString('hex')}${album}`)
  })
})
