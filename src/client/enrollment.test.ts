// The enrollment protocol end to end over an in-memory relay: a clean run, each person saying
// no, and a relay that alters, replaces or drops payloads (a man in the middle) — every one of
// which stops both ends before B holds a key.
import { describe, expect, it } from 'vitest'
import { encodeCanonical } from '../codec/cbor.ts'
import { IdentityKey } from '../sdk/identity.ts'
import { EnrollmentError, runEnrollee, runInitiator, type ChannelEnd, type InitiatorOptions, type EnrolleeOptions } from './enrollment.ts'
import {
  commitment,
  confirmMac,
  decodePayload,
  encodePayload,
  fromBase64Url,
  generateNonce,
  payloadBytes,
  payloadText,
  PAYLOAD_TEXT_MAX,
  transcriptHash,
  type EnrollmentPayload,
  type Hello,
} from './format/enrollment.ts'
import { advanceHead, decodeHandOver, EMPTY_HEAD, encodeHandOver, type AlbumHandOver } from './format/album-chain.ts'
import { generateXWingKeyPair } from './format/xwing.ts'
import { randomBytes } from './format/bytes.ts'

type Direction = 'to_initiator' | 'to_enrollee'
/** Sees each relay text on its way; returns what arrives instead (null: nothing). */
type Tamper = (direction: Direction, text: string) => string | null

function relay(tamper: Tamper = (_d, text) => text) {
  const boxes: Record<Direction, string[]> = { to_initiator: [], to_enrollee: [] }
  const end = (inbound: Direction, outbound: Direction): ChannelEnd => ({
    send: async (text) => {
      const arriving = tamper(outbound, text)
      if (arriving !== null) boxes[outbound].push(arriving)
    },
    receive: async () => boxes[inbound].splice(0),
  })
  return { boxes, a: end('to_initiator', 'to_enrollee'), b: end('to_enrollee', 'to_initiator') }
}

const CHANNEL = `${'A'.repeat(42)}g`
const USER = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0'
const DEVICE = '1111abcd-2222-4333-8444-555555555555'
const identity = IdentityKey.generate()
const accountKeys = { masterKey: randomBytes(32), identitySeeds: identity.exportSeeds() }
const poll = { intervalMs: 1 }
/** A person asked whether the codes match: each code shown is kept in `shown`, and the answer is `verdict`. */
const answering =
  (shown: string[], verdict: boolean) =>
  async (sas: string): Promise<boolean> => {
    shown.push(sas)
    return verdict
  }

const decode = (text: string): EnrollmentPayload => decodePayload(fromBase64Url(text))
const flip = (bytes: Uint8Array, at: number): Uint8Array => {
  const copy = bytes.slice()
  copy[at]! ^= 0x01
  return copy
}

function ends(channel: ReturnType<typeof relay>, overrides: { a?: Partial<InitiatorOptions>; b?: Partial<EnrolleeOptions> } = {}) {
  const shown: { a: string[]; b: string[] } = { a: [], b: [] }
  const added: Hello[] = []
  const a = runInitiator({
    channelId: CHANNEL,
    end: channel.a,
    identityKey: identity.publicKey,
    userId: USER,
    keys: accountKeys,
    poll,
    confirmSas: answering(shown.a, true),
    addDevice: async (hello) => void added.push(hello),
    ...overrides.a,
  })
  const b = runEnrollee({
    channelId: CHANNEL,
    end: channel.b,
    deviceId: DEVICE,
    deviceName: 'New phone',
    xwing: generateXWingKeyPair(),
    userId: USER,
    poll,
    confirmSas: answering(shown.b, true),
    accept: async () => {},
    ...overrides.b,
  })
  return { a: a.catch((error: unknown) => error), b: b.catch((error: unknown) => error), shown, added }
}

const stopOf = (outcome: unknown): string => (outcome instanceof EnrollmentError ? outcome.stop : `not stopped: ${String(outcome)}`)

describe('device enrollment over the relay', () => {
  it('hands the account keys to the new device when both people confirm the same SAS; A adds B before sending them', async () => {
    const run = ends(relay())
    const [a, b] = await Promise.all([run.a, run.b])
    expect(run.shown.a).toHaveLength(1)
    expect(run.shown.a).toEqual(run.shown.b)
    expect(run.shown.a[0]).toMatch(/^\d{3} \d{3}$/)
    expect(run.added.map((h) => [h.device_id, h.device_name])).toEqual([[DEVICE, 'New phone']])
    expect(b).toMatchObject({ keys: accountKeys, identityKey: identity.publicKey })
    expect(a).toMatchObject({ sas: run.shown.a[0] })
  })

  it("B's person says no: B sends abort, A stops without adding B", async () => {
    const run = ends(relay(), { b: { confirmSas: async () => false } })
    const [a, b] = await Promise.all([run.a, run.b])
    expect(stopOf(b)).toBe('declined')
    expect(stopOf(a)).toBe('aborted')
    expect((a as EnrollmentError).reason).toBe('declined')
    expect(run.added).toEqual([])
  })

  it("A's person says no: A sends abort instead of keys, B stops with nothing", async () => {
    const run = ends(relay(), { a: { confirmSas: async () => false } })
    const [a, b] = await Promise.all([run.a, run.b])
    expect(stopOf(a)).toBe('declined')
    expect(stopOf(b)).toBe('aborted')
    expect(run.added).toEqual([])
  })

  it("a reveal that does not match the hello's commitment is refused by A", async () => {
    const run = ends(
      relay((direction, text) =>
        direction === 'to_initiator' && decode(text).type === 'reveal' ? payloadText(encodePayload({ type: 'reveal', nonce: generateNonce() })) : text,
      ),
    )
    const [a, b] = await Promise.all([run.a, run.b])
    expect(stopOf(a)).toBe('invalid')
    expect((a as Error).message).toMatch(/does not match the commitment/)
    expect(stopOf(b)).toBe('aborted')
    expect(run.shown.a).toEqual([])
  })

  it("an offer altered on the way gives different SAS; if both people still say yes, A refuses B's confirmation", async () => {
    const run = ends(
      relay((_direction, text) => {
        const payload = decode(text)
        return payload.type === 'offer' ? payloadText(encodePayload({ ...payload, ciphertext: flip(payload.ciphertext, 5) })) : text
      }),
    )
    const [a, b] = await Promise.all([run.a, run.b])
    expect(run.shown.a[0]).not.toBe(run.shown.b[0])
    expect(stopOf(a)).toBe('invalid')
    expect((a as Error).message).toMatch(/confirmation does not verify/)
    expect(stopOf(b)).toBe('aborted')
    expect(run.added).toEqual([])
  })

  it('a forged confirm MAC is refused', async () => {
    const run = ends(
      relay((_direction, text) => (decode(text).type === 'confirm' ? payloadText(encodePayload({ type: 'confirm', mac: randomBytes(32) })) : text)),
    )
    const [a, b] = await Promise.all([run.a, run.b])
    expect(stopOf(a)).toBe('invalid')
    expect(stopOf(b)).toBe('aborted')
    expect(run.added).toEqual([])
  })

  it('keys altered on the way do not open, and B keeps nothing', async () => {
    const run = ends(
      relay((_direction, text) => {
        const payload = decode(text)
        return payload.type === 'keys' ? payloadText(encodePayload({ ...payload, sealed: flip(payload.sealed, 40) })) : text
      }),
    )
    const [, b] = await Promise.all([run.a, run.b])
    expect(stopOf(b)).toBe('invalid')
    expect((b as Error).message).toMatch(/do not open/)
  })

  it('keys whose identity key is not the offered one are refused', async () => {
    const run = ends(relay(), { a: { keys: { masterKey: accountKeys.masterKey, identitySeeds: IdentityKey.generate().exportSeeds() } } })
    const [, b] = await Promise.all([run.a, run.b])
    expect(stopOf(b)).toBe('invalid')
    expect((b as Error).message).toMatch(/not the one it offered/)
  })

  it('B failing to keep the keys tells A (abort), which stops instead of reporting the device added', async () => {
    const run = ends(relay(), {
      b: {
        accept: async () => {
          throw new Error('the directory does not list this device')
        },
      },
    })
    const [a, b] = await Promise.all([run.a, run.b])
    expect(stopOf(b)).toBe('invalid')
    expect(stopOf(a)).toBe('aborted')
  })

  it('an offer for another account is refused by B', async () => {
    const run = ends(relay(), { b: { userId: '22222222-2222-4222-8222-222222222222' } })
    const [a, b] = await Promise.all([run.a, run.b])
    expect(stopOf(b)).toBe('invalid')
    expect(stopOf(a)).toBe('aborted')
  })

  it('a man in the middle, running an honest enrollee with A and an honest initiator with B, cannot make the two SAS equal', async () => {
    const toA = relay()
    const toB = relay()
    const seen: { withA: string[]; withB: string[] } = { withA: [], withB: [] }
    // The man in the middle: B's hello never reaches A; A meets it instead, and B meets it as A.
    const middle = Promise.all([
      runEnrollee({
        channelId: CHANNEL,
        end: toA.b,
        deviceId: DEVICE,
        deviceName: 'New phone',
        xwing: generateXWingKeyPair(),
        userId: USER,
        poll,
        confirmSas: answering(seen.withA, true),
        accept: async () => {},
      }).catch(() => null),
      runInitiator({
        channelId: CHANNEL,
        end: toB.a,
        identityKey: identity.publicKey,
        userId: USER,
        keys: { masterKey: randomBytes(32), identitySeeds: IdentityKey.generate().exportSeeds() },
        poll,
        confirmSas: answering(seen.withB, true),
        addDevice: async () => {},
      }).catch(() => null),
    ])
    const shown: { a: string[]; b: string[] } = { a: [], b: [] }
    const [a, b] = await Promise.all([
      runInitiator({
        channelId: CHANNEL,
        end: toA.a,
        identityKey: identity.publicKey,
        userId: USER,
        keys: accountKeys,
        poll,
        confirmSas: answering(shown.a, false),
        addDevice: async () => {},
      }).catch((e: unknown) => e),
      runEnrollee({
        channelId: CHANNEL,
        end: toB.b,
        deviceId: DEVICE,
        deviceName: 'New phone',
        xwing: generateXWingKeyPair(),
        userId: USER,
        poll,
        confirmSas: answering(shown.b, false),
        accept: async () => {},
      }).catch((e: unknown) => e),
    ])
    await middle
    expect(shown.a).toEqual(seen.withA)
    expect(shown.b).toEqual(seen.withB)
    expect(shown.a[0]).not.toBe(shown.b[0])
    expect(stopOf(a)).toBe('declined')
    expect(stopOf(b)).toBe('declined')
  })

  it('gives up when the other end does not answer before the deadline', async () => {
    let now = 0
    const channel = relay()
    const b = runEnrollee({
      channelId: CHANNEL,
      end: {
        ...channel.b,
        receive: async () => {
          now += 1000
          return []
        },
      },
      deviceId: DEVICE,
      deviceName: 'Phone',
      xwing: generateXWingKeyPair(),
      userId: USER,
      poll: { intervalMs: 1, deadline: 5000, now: () => now },
      confirmSas: async () => true,
      accept: async () => {},
    }).catch((e: unknown) => e)
    expect(stopOf(await b)).toBe('expired')
  })
})

/** An account's memory of `albums` albums, each with a head and `writes` writes after it. */
function memoryOf(albums: number, writes: number): AlbumHandOver {
  const hash = (): string => Buffer.from(randomBytes(32)).toString('hex')
  return new Map(
    Array.from({ length: albums }, () => {
      const head = advanceHead(advanceHead(EMPTY_HEAD, 3, hash()), 7, hash())
      const own = Array.from({ length: writes }, (_, i) => ({ seq: 8 + i, manifestHash: hash(), assetId: crypto.randomUUID(), action: 'create' }))
      return [crypto.randomUUID(), { head, writes: own }] as const
    }),
  )
}

describe("the album history handed over after B's done", () => {
  /** An exchange where A hands `memory` over (unless `older` is 'a': it sends none) and B keeps it (unless `older` is 'b': it waits for none). */
  const handingOver = (memory: AlbumHandOver, tamper?: Tamper, older?: 'a' | 'b') => {
    const kept: AlbumHandOver[] = []
    const quick = { poll: { ...poll, historyWaitMs: 300 } }
    const run = ends(relay(tamper), {
      a: older === 'a' ? quick : { ...quick, history: async () => memory },
      b: older === 'b' ? quick : { ...quick, keepHistory: async (albums) => void kept.push(albums) },
    })
    return { run, kept }
  }

  it("B keeps A's heads and writes exactly, in as many parts as they take, and says so", async () => {
    for (const memory of [memoryOf(2, 1), memoryOf(0, 0), memoryOf(120, 4)]) {
      const parts: number[] = []
      const { run, kept } = handingOver(memory, (direction, text) => {
        if (direction === 'to_enrollee' && decode(text).type === 'history') parts.push(text.length)
        return text
      })
      const [a, b] = await Promise.all([run.a, run.b])
      expect(a).toMatchObject({ history: 'kept' })
      expect(b).toMatchObject({ keys: accountKeys, history: { status: 'kept', albums: memory.size } })
      expect(kept).toEqual([memory])
      expect(parts.length).toBe(Math.ceil((encodeHandOver(memory).length + 28) / 6000))
      expect(Math.max(...parts)).toBeLessThanOrEqual(PAYLOAD_TEXT_MAX)
    }
  })

  it('an older B (which stops after done) leaves A unanswered after the wait; an older A (which sends none) leaves B with none', async () => {
    const olderB = handingOver(memoryOf(1, 0), undefined, 'b')
    const [a1, b1] = await Promise.all([olderB.run.a, olderB.run.b])
    expect([(a1 as { history: string }).history, (b1 as { history: unknown }).history]).toEqual(['unanswered', { status: 'none' }])
    const olderA = handingOver(memoryOf(1, 0), undefined, 'a')
    const [a2, b2] = await Promise.all([olderA.run.a, olderA.run.b])
    expect([(a2 as { history: string }).history, (b2 as { history: unknown }).history, olderA.kept]).toEqual(['not_sent', { status: 'none' }, []])
  })

  it('a part altered, dropped or moved on the way is refused, B keeps nothing, and the keys stay kept', async () => {
    const memory = memoryOf(120, 4)
    const tampers: Tamper[] = [
      (_direction, text) => {
        const payload = decode(text)
        return payload.type === 'history' && payload.part === 1 ? payloadText(encodePayload({ ...payload, data: flip(payload.data, 9) })) : text
      },
      (_direction, text) => (decode(text).type === 'history' && (decode(text) as { part: number }).part === 1 ? null : text),
      (_direction, text) => {
        const payload = decode(text)
        return payload.type === 'history' ? payloadText(encodePayload({ ...payload, part: (payload.part + 1) % payload.parts })) : text
      },
    ]
    for (const tamper of tampers) {
      const { run, kept } = handingOver(memory, tamper)
      const [a, b] = await Promise.all([run.a, run.b])
      expect(b).toMatchObject({ keys: accountKeys, history: { status: 'refused' } })
      expect(a).toMatchObject({ history: 'unanswered' })
      expect(kept).toEqual([])
    }
  })

  it('what does not have the hand-over shape is refused', () => {
    const [albumId, album] = [...memoryOf(1, 1)][0]!
    const good = decodeHandOver(encodeHandOver(new Map([[albumId, album]])))
    expect(good.get(albumId)).toEqual(album)
    const write = { seq: 9, hash: randomBytes(32), asset: crypto.randomUUID(), action: 'create' }
    const head = { seq: album.head.seq, count: album.head.count, digest: album.head.digest }
    for (const bad of [
      { albums: { [albumId]: { ...head, writes: [] } }, extra: 1 },
      { albums: { 'not-a-uuid': { ...head, writes: [] } } },
      { albums: { [albumId]: { ...head, count: head.seq + 1, writes: [] } } },
      { albums: { [albumId]: { ...head, digest: new Uint8Array(31), writes: [] } } },
      { albums: { [albumId]: { ...head, writes: [{ ...write, action: 'rename' }] } } },
      { albums: { [albumId]: { ...head, writes: [{ ...write, seq: 0 }] } } },
      { albums: { [albumId]: { ...head } } },
    ])
      expect(() => decodeHandOver(encodeCanonical(bad))).toThrow(TypeError)
  })
})

describe('enrollment payloads', () => {
  const hello = async () =>
    encodePayload({
      type: 'hello',
      device_id: DEVICE,
      device_name: 'Phone',
      encryption_key: generateXWingKeyPair().publicKey,
      commitment: await commitment(generateNonce()),
    })

  it('round-trip exactly, and anything else is refused as malformed', async () => {
    const bytes = await hello()
    expect(encodePayload(decodePayload(bytes))).toEqual(bytes)
    const map = (await import('../codec/cbor.ts')).decodeCanonical(bytes) as Record<string, unknown>
    const refused = [
      encodeCanonical({ ...map, version: 2 }),
      encodeCanonical({ ...map, type: 'welcome' }),
      encodeCanonical({ ...map, extra: 1 }),
      encodeCanonical({ ...map, commitment: new Uint8Array(31) }),
      encodeCanonical({ ...map, device_id: DEVICE.toUpperCase() }),
      encodeCanonical({ ...map, device_name: 'x'.repeat(101) }),
      encodeCanonical({ version: 1, type: 'abort', reason: 'because' }),
      Uint8Array.of(...bytes, 0),
      bytes.subarray(0, bytes.length - 1),
    ]
    for (const bad of refused) expect(() => decodePayload(bad)).toThrow(/enrollment payload/)
    expect(() => payloadBytes('A'.repeat(PAYLOAD_TEXT_MAX + 1))).toThrow(/longer than/)
    expect(() => payloadBytes('not base64url!')).toThrow(/not base64url/)
  })

  it('the confirmation MAC depends on the transcript', async () => {
    const ss = randomBytes(32)
    const t1 = await transcriptHash(CHANNEL, await hello(), Uint8Array.of(1), Uint8Array.of(2))
    const t2 = await transcriptHash(CHANNEL, await hello(), Uint8Array.of(1), Uint8Array.of(2))
    expect(await confirmMac(ss, t1)).not.toEqual(await confirmMac(ss, t2))
  })
})
