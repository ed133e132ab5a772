// Sharing an album's keys (share.ts): a share opens on each of the member's devices to the album
// key of every epoch it carries, and on nothing else; a server that swaps a recipient's part,
// re-signs the share, hands it to another member or to a device it was not made for is caught;
// the safety number is the same for both people and changes with either identity key.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { decodeCanonical, encodeCanonical } from '../../codec/cbor.ts'
import { IdentityKey } from '../../sdk/identity.ts'
import { randomBytes } from './bytes.ts'
import { ClientFormatError } from './errors.ts'
import { openKeyring, openShare, safetyHalf, safetyNumber, sealKeyring, sealShare, shareFacts, type SealShare } from './share.ts'
import { generateXWingKeyPair } from './xwing.ts'

const owner = IdentityKey.generate()
const member = IdentityKey.generate()
const ids = { albumId: crypto.randomUUID(), ownerId: crypto.randomUUID(), memberId: crypto.randomUUID() }
const devices = [0, 1, 2].map(() => ({ deviceId: crypto.randomUUID(), pair: generateXWingKeyPair() }))
const keys = new Map([1, 2, 3].map((epoch) => [epoch, randomBytes(32)] as const))
const sha256 = (bytes: Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(bytes).digest())

const share = (overrides: Partial<SealShare> = {}): Promise<Uint8Array> =>
  sealShare(owner, {
    ...ids,
    role: 'contributor',
    memberKeyHash: sha256(member.publicKey),
    firstEpoch: 1,
    lastEpoch: 3,
    albumKeys: keys,
    recipients: devices.slice(0, 2).map((d) => ({ deviceId: d.deviceId, encryptionKey: d.pair.publicKey })),
    ...overrides,
  })

const opening = (device: (typeof devices)[number], overrides: Partial<Parameters<typeof openShare>[1]> = {}) => ({
  ownerIdentityKey: owner.publicKey,
  memberId: ids.memberId,
  memberIdentityKey: member.publicKey,
  deviceId: device.deviceId,
  xwingSecret: device.pair.secretKey,
  ...overrides,
})

const refusal = async (promise: Promise<unknown>): Promise<string> => {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ClientFormatError)
  return `${(error as ClientFormatError).code}: ${(error as Error).message}`
}

describe('sharing an album’s keys', () => {
  it('opens on each recipient device to every epoch’s key, with the facts the owner signed', async () => {
    const bytes = await share()
    for (const device of devices.slice(0, 2)) {
      const opened = await openShare(bytes, opening(device))
      expect(opened).toMatchObject({ ...ids, role: 'contributor', firstEpoch: 1, lastEpoch: 3 })
      expect([...opened.albumKeys]).toEqual([...keys])
    }
    expect(shareFacts(bytes)).toMatchObject({ ...ids, role: 'contributor' })
  })

  it('a device it was not made for, another member, or another key of the member: refused', async () => {
    const bytes = await share()
    expect(await refusal(openShare(bytes, opening(devices[2]!)))).toMatch(/^authentication: .*no part for this device/)
    expect(await refusal(openShare(bytes, opening(devices[0]!, { memberId: crypto.randomUUID() })))).toMatch(/another member/)
    expect(await refusal(openShare(bytes, opening(devices[0]!, { memberIdentityKey: IdentityKey.generate().publicKey })))).toMatch(/another member/)
    // A device's part under another device's key does not open.
    expect(await refusal(openShare(bytes, opening(devices[0]!, { xwingSecret: devices[1]!.pair.secretKey })))).toMatch(/does not open/)
  })

  it('a server that swaps a recipient’s part, or re-signs the share with a key of its own, is caught by the owner’s pinned key', async () => {
    const bytes = await share()
    const outer = decodeCanonical(bytes) as { body: Uint8Array; sig: Uint8Array }
    const body = decodeCanonical(outer.body) as { recipients: Array<Record<string, unknown>> }
    // The server's own device key in place of the first recipient's, keeping the owner's signature.
    const intruder = generateXWingKeyPair()
    const swapped = await sealShare(IdentityKey.generate(), {
      ...ids,
      role: 'contributor',
      memberKeyHash: sha256(member.publicKey),
      firstEpoch: 1,
      lastEpoch: 3,
      albumKeys: new Map([1, 2, 3].map((epoch) => [epoch, randomBytes(32)] as const)),
      recipients: [{ deviceId: devices[0]!.deviceId, encryptionKey: intruder.publicKey }],
    })
    const swappedPart = (decodeCanonical((decodeCanonical(swapped) as { body: Uint8Array }).body) as typeof body).recipients[0]!
    const tamperedBody = encodeCanonical({ ...body, recipients: body.recipients.map((part) => (part.device_id === devices[0]!.deviceId ? swappedPart : part)) })
    expect(await refusal(openShare(encodeCanonical({ body: tamperedBody, sig: outer.sig }), opening(devices[0]!)))).toMatch(/^authentication: .*signature/)
    // Re-signed as a whole by another key: the member checks the owner's pinned key, not whatever signed.
    expect(await refusal(openShare(swapped, opening(devices[0]!)))).toMatch(/^authentication: .*signature/)
    // The signature of one share on another's body: refused.
    const other = decodeCanonical(await share({ role: 'viewer' })) as { body: Uint8Array }
    expect(await refusal(openShare(encodeCanonical({ body: other.body, sig: outer.sig }), opening(devices[0]!)))).toMatch(/signature/)
  })

  it('bytes that are not exactly a v1 share are refused as malformed', async () => {
    const bytes = await share()
    const outer = decodeCanonical(bytes) as { body: Uint8Array; sig: Uint8Array }
    const body = decodeCanonical(outer.body) as Record<string, unknown>
    const reframed = (changed: Record<string, unknown>) => encodeCanonical({ body: encodeCanonical(changed), sig: outer.sig })
    for (const bad of [
      Uint8Array.of(...bytes, 0),
      encodeCanonical({ body: outer.body }),
      reframed({ ...body, v: 2 }),
      reframed({ ...body, extra: 1 }),
      reframed({ ...body, role: 'owner' }),
      reframed({ ...body, epochs: [3, 1] }),
      reframed({ ...body, recipients: [] }),
      reframed({ ...body, album_id: 'not-a-uuid' }),
    ])
      expect(await refusal(openShare(bad, opening(devices[0]!)))).toMatch(/^malformed: /)
    await expect(share({ recipients: [] })).rejects.toThrow(TypeError)
    await expect(share({ lastEpoch: 4 })).rejects.toThrow(/epoch 4/)
  })

  it('the safety number: the same for both people, 60 digits, another on either side when an identity key changes', () => {
    const a = { userId: ids.ownerId, identityKey: owner.publicKey }
    const b = { userId: ids.memberId, identityKey: member.publicKey }
    const number = safetyNumber(a, b)
    expect(number).toMatch(/^(\d{5} ){11}\d{5}$/)
    expect(safetyNumber(b, a)).toBe(number)
    expect(number.replaceAll(' ', '')).toContain(safetyHalf(b.userId, b.identityKey))
    expect(safetyNumber(a, { ...b, identityKey: IdentityKey.generate().publicKey })).not.toBe(number)
    expect(safetyNumber(a, { ...b, userId: crypto.randomUUID() })).not.toBe(number)
  })

  it("a member's keyring opens under its master key for its album and owner, and under nothing else", async () => {
    const masterKey = randomBytes(32)
    const album = { albumId: ids.albumId, ownerId: ids.ownerId }
    const keyring = await sealKeyring(masterKey, album, keys)
    expect([...(await openKeyring(masterKey, album, keyring))]).toEqual([...keys])
    expect(await refusal(openKeyring(randomBytes(32), album, keyring))).toMatch(/^authentication: /)
    expect(await refusal(openKeyring(masterKey, { ...album, albumId: crypto.randomUUID() }, keyring))).toMatch(/^authentication: /)
    expect(await refusal(openKeyring(masterKey, { ...album, ownerId: crypto.randomUUID() }, keyring))).toMatch(/^authentication: /)
    expect(await refusal(openKeyring(masterKey, album, Uint8Array.of(2, ...keyring.subarray(1))))).toMatch(/^malformed: /)
    await expect(
      sealKeyring(
        masterKey,
        album,
        new Map([
          [1, randomBytes(32)],
          [3, randomBytes(32)],
        ]),
      ),
    ).rejects.toThrow(/consecutive/)
  })
})
