// The two ends of device enrollment (docs/client-format.md, "Device enrollment"; decision 0019)
// over the server's relay: the enrolled device A (the initiator, which issued and redeemed the
// code and holds the channel) and the new device B (the enrollee, which knows the channel id
// from the pairing code). Each end runs the v1 exchange in order, refuses any payload out of
// place or failing a check (and tells the other end with `abort`), and lets the caller show the
// short authentication string and ask the person. Browser-safe: the channel is anything that
// sends and receives relay texts, e.g. CofferClient.enrollmentChannel().
import { equalBytes } from '../sdk/bytes.ts'
import { IdentityKey } from '../sdk/identity.ts'
import {
  commitment,
  confirmMac,
  confirmMacValid,
  decodePayload,
  encodePayload,
  generateNonce,
  openKeys,
  payloadBytes,
  payloadText,
  revealMatches,
  sealKeys,
  shortAuthenticationString,
  transcriptHash,
  type AbortReason,
  type EnrolledKeys,
  type EnrollmentPayload,
  type Hello,
  type PayloadType,
} from './format/enrollment.ts'
import { xwingDecapsulate, xwingEncapsulate, type XWingKeyPair } from './format/xwing.ts'

/** One end of the relay channel (CofferClient.enrollmentChannel() fits). */
export interface ChannelEnd {
  /** Posts a relay text to the other end's mailbox. */
  send(payload: string): Promise<void>
  /** Takes every relay text the other end posted since the last call, in order (possibly none). */
  receive(): Promise<string[]>
}

export type EnrollmentStop =
  /** The person at this end said the codes do not match. */
  | 'declined'
  /** The other end sent `abort` (its person said no, or it found something wrong). */
  | 'aborted'
  /** A payload out of place or failing a check: a wrong reveal, confirmation or keys, a tampered payload. */
  | 'invalid'
  /** The channel's time ran out before the other end answered. */
  | 'expired'
  /** Stopped here (Ctrl-C). */
  | 'stopped'

export class EnrollmentError extends Error {
  override readonly name = 'EnrollmentError'
  readonly stop: EnrollmentStop
  /** For 'aborted': the reason the other end gave. */
  readonly reason: AbortReason | null
  constructor(stop: EnrollmentStop, message: string, reason: AbortReason | null = null) {
    super(message)
    this.stop = stop
    this.reason = reason
  }
}

export interface PollOptions {
  /** Pause between empty drains (default 500 ms). */
  readonly intervalMs?: number
  /** Give up at this time (ms since the epoch, on `now`'s clock): the channel's expires_at. */
  readonly deadline?: number
  readonly now?: () => number
  readonly signal?: AbortSignal
}

const ABORT_SENT: Record<Exclude<EnrollmentStop, 'aborted' | 'expired'>, AbortReason> = { declined: 'declined', invalid: 'invalid', stopped: 'stopped' }

const OTHER_SAID: Record<AbortReason, string> = {
  declined: 'the person there said the codes do not match',
  invalid: 'it found something wrong in what this device sent, or could not keep the keys',
  stopped: 'it was stopped',
}

/** Reads the other end's payloads in order, polling the mailbox; keeps each payload's exact bytes. */
class Inbox {
  readonly #end: ChannelEnd
  readonly #poll: PollOptions
  readonly #other: string
  readonly #queue: string[] = []

  constructor(end: ChannelEnd, poll: PollOptions, other: string) {
    this.#end = end
    this.#poll = poll
    this.#other = other
  }

  /** The next payload, which must be of type `type` (an `abort` stops with 'aborted'). */
  async next<T extends PayloadType>(type: T): Promise<{ payload: Extract<EnrollmentPayload, { type: T }>; bytes: Uint8Array }> {
    const text = await this.#nextText()
    let bytes: Uint8Array
    let payload: EnrollmentPayload
    try {
      bytes = payloadBytes(text)
      payload = decodePayload(bytes)
    } catch (error) {
      throw new EnrollmentError('invalid', `the ${this.#other} sent something that is not an enrollment payload (${(error as Error).message})`)
    }
    if (payload.type === 'abort') throw new EnrollmentError('aborted', `the ${this.#other} cancelled: ${OTHER_SAID[payload.reason]}`, payload.reason)
    if (payload.type !== type) throw new EnrollmentError('invalid', `the ${this.#other} sent "${payload.type}" where "${type}" was due`)
    return { payload: payload as Extract<EnrollmentPayload, { type: T }>, bytes }
  }

  async #nextText(): Promise<string> {
    const { intervalMs = 500, deadline, now = Date.now, signal } = this.#poll
    for (;;) {
      const queued = this.#queue.shift()
      if (queued !== undefined) return queued
      if (signal?.aborted) throw new EnrollmentError('stopped', 'stopped')
      if (deadline !== undefined && now() >= deadline) throw new EnrollmentError('expired', `the ${this.#other} did not answer before the pairing code expired`)
      const received = await this.#end.receive()
      this.#queue.push(...received)
      if (received.length === 0) await pause(intervalMs, signal)
    }
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}

async function send(end: ChannelEnd, payload: EnrollmentPayload): Promise<Uint8Array> {
  const bytes = encodePayload(payload)
  await end.send(payloadText(bytes))
  return bytes
}

/** Runs `steps`; on a failure tells the other end (`abort`, best effort) unless it was the one that stopped. */
async function tellingTheOtherEnd<T>(end: ChannelEnd, steps: () => Promise<T>): Promise<T> {
  try {
    return await steps()
  } catch (error) {
    const stop = error instanceof EnrollmentError ? error.stop : 'stopped'
    if (stop !== 'aborted' && stop !== 'expired') await send(end, { type: 'abort', reason: ABORT_SENT[stop] }).catch(() => {})
    throw error
  }
}

/** What the person is shown and asked: do both screens show this SAS? */
export type ConfirmSas = (sas: string) => Promise<boolean>

export interface InitiatorOptions {
  readonly channelId: string
  readonly end: ChannelEnd
  /** The account's identity public key (1984 bytes) and user id, sent in the offer. */
  readonly identityKey: Uint8Array
  readonly userId: string
  /** What B gets once the person confirmed and B's confirmation verified. */
  readonly keys: EnrolledKeys
  /** Told when B's hello arrived (e.g. to say which device answered). */
  readonly onHello?: (hello: Hello) => void
  readonly confirmSas: ConfirmSas
  /** Lists B in the signed device directory; runs after B's confirmation verified, before `keys` is sent. */
  readonly addDevice: (hello: Hello) => Promise<void>
  readonly poll?: PollOptions
}

export interface InitiatorResult {
  readonly device: Hello
  readonly sas: string
}

/** A's side: hello in, offer out, reveal in, SAS, confirm in, the directory, keys out, done in. */
export function runInitiator(options: InitiatorOptions): Promise<InitiatorResult> {
  const { channelId, end } = options
  const inbox = new Inbox(end, options.poll ?? {}, 'new device')
  return tellingTheOtherEnd(end, async () => {
    const hello = await inbox.next('hello')
    options.onHello?.(hello.payload)
    const { cipherText, sharedSecret } = xwingEncapsulate(hello.payload.encryption_key)
    const offer = await send(end, { type: 'offer', ciphertext: cipherText, identity_key: options.identityKey, user_id: options.userId, nonce: generateNonce() })
    const reveal = await inbox.next('reveal')
    if (!(await revealMatches(hello.payload.commitment, reveal.payload.nonce))) {
      throw new EnrollmentError('invalid', "the new device's nonce does not match the commitment of its hello: someone else may be on the channel")
    }
    const transcript = await transcriptHash(channelId, hello.bytes, offer, reveal.bytes)
    const sas = await shortAuthenticationString(sharedSecret, transcript)
    if (!(await options.confirmSas(sas))) throw new EnrollmentError('declined', 'the codes do not match, so the keys were not sent')
    const confirm = await inbox.next('confirm')
    if (!(await confirmMacValid(sharedSecret, transcript, confirm.payload.mac))) {
      throw new EnrollmentError('invalid', "the new device's confirmation does not verify: it does not share this exchange")
    }
    await options.addDevice(hello.payload)
    await send(end, await sealKeys(sharedSecret, transcript, options.keys))
    // Closing the channel drops its mailboxes: wait until B says it has the keys.
    await inbox.next('done')
    return { device: hello.payload, sas }
  })
}

export interface EnrolleeOptions {
  readonly channelId: string
  readonly end: ChannelEnd
  readonly deviceId: string
  readonly deviceName: string
  /** This device's new X-Wing key pair (its device encryption key). */
  readonly xwing: XWingKeyPair
  /** The account this device signed in to: the offer must name it. */
  readonly userId: string
  readonly confirmSas: ConfirmSas
  /** Checks and keeps the keys (e.g. against the directory on the server); `done` is sent after it, `abort` when it throws. */
  readonly accept: (result: EnrolleeResult) => Promise<void>
  readonly poll?: PollOptions
}

export interface EnrolleeResult {
  readonly keys: EnrolledKeys
  /** The identity public key of the offer, which the received seeds were checked to make. */
  readonly identityKey: Uint8Array
  readonly sas: string
}

/** B's side: hello out, offer in, reveal out, SAS, confirm out, keys in (checked against the offer's identity key), accepted, done out. */
export function runEnrollee(options: EnrolleeOptions): Promise<EnrolleeResult> {
  const { channelId, end } = options
  const inbox = new Inbox(end, options.poll ?? {}, 'other device')
  return tellingTheOtherEnd(end, async () => {
    const nonce = generateNonce()
    const hello = await send(end, {
      type: 'hello',
      device_id: options.deviceId,
      device_name: options.deviceName,
      encryption_key: options.xwing.publicKey,
      commitment: await commitment(nonce),
    })
    const offer = await inbox.next('offer')
    if (offer.payload.user_id !== options.userId) {
      throw new EnrollmentError('invalid', 'the other device is signed in to another account than this one')
    }
    const sharedSecret = xwingDecapsulate(offer.payload.ciphertext, options.xwing.secretKey)
    const reveal = await send(end, { type: 'reveal', nonce })
    const transcript = await transcriptHash(channelId, hello, offer.bytes, reveal)
    const sas = await shortAuthenticationString(sharedSecret, transcript)
    if (!(await options.confirmSas(sas))) throw new EnrollmentError('declined', 'the codes do not match')
    await send(end, { type: 'confirm', mac: await confirmMac(sharedSecret, transcript) })
    const sealed = await inbox.next('keys')
    let keys: EnrolledKeys
    try {
      keys = await openKeys(sharedSecret, transcript, sealed.payload)
    } catch {
      throw new EnrollmentError('invalid', 'the keys the other device sent do not open: they were not sealed for this exchange')
    }
    if (!equalBytes(IdentityKey.fromSeeds(keys.identitySeeds).publicKey, offer.payload.identity_key)) {
      throw new EnrollmentError('invalid', 'the identity key the other device sent is not the one it offered')
    }
    const result = { keys, identityKey: offer.payload.identity_key, sas }
    try {
      await options.accept(result)
    } catch (error) {
      throw error instanceof EnrollmentError ? error : new EnrollmentError('invalid', (error as Error).message)
    }
    // Best effort: the keys are kept and this device is listed, whatever happens to this last word.
    await send(end, { type: 'done' }).catch(() => {})
    return result
  })
}
