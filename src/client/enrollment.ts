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
  openHistory,
  openKeys,
  payloadBytes,
  payloadText,
  revealMatches,
  sealHistory,
  sealKeys,
  shortAuthenticationString,
  transcriptHash,
  type AbortReason,
  type EnrolledKeys,
  type EnrollmentPayload,
  type Hello,
  type History,
  type PayloadType,
} from './format/enrollment.ts'
import type { AlbumHandOver } from './format/album-chain.ts'
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
  /**
   * After B's `done`: how long B waits for A's album history, and A for B's `kept` (default
   * HISTORY_WAIT_MS). An end of an older version never sends either; the wait is what it costs.
   */
  readonly historyWaitMs?: number
}

/** How long an end waits for the album history's hand-over, or its acknowledgement, once the keys are kept. */
export const HISTORY_WAIT_MS = 6000

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

  /** The next payload, which must be of type `type` (an `abort` stops with 'aborted'); 'expired' at `deadline` (the poll's unless given). */
  async next<T extends PayloadType>(type: T, deadline = this.#poll.deadline): Promise<{ payload: Extract<EnrollmentPayload, { type: T }>; bytes: Uint8Array }> {
    const text = await this.#nextText(deadline)
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

  async #nextText(deadline: number | undefined): Promise<string> {
    const { intervalMs = 500, now = Date.now, signal } = this.#poll
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
  /** This device's memory of the account's albums, handed to B after its `done` (none when not given, or when it throws). */
  readonly history?: () => Promise<AlbumHandOver>
  readonly poll?: PollOptions
}

export interface InitiatorResult {
  readonly device: Hello
  readonly sas: string
  /** kept: B said it kept the album history; unanswered: B did not say (an older version, or gone); not_sent: there was none to send. */
  readonly history: 'kept' | 'unanswered' | 'not_sent'
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
    const history =
      options.history === undefined ? 'not_sent' : await handOverHistory(options.history, end, inbox, options.poll ?? {}, sharedSecret, transcript)
    return { device: hello.payload, sas, history }
  })
}

/**
 * A's last step: the album history sealed to this exchange, then B's `kept` awaited for a few
 * seconds. B has the keys by now, so nothing here fails the enrollment: a memory that cannot be
 * read is not sent, and an end that does not answer is an older version, or gone.
 */
async function handOverHistory(
  history: () => Promise<AlbumHandOver>,
  end: ChannelEnd,
  inbox: Inbox,
  poll: PollOptions,
  sharedSecret: Uint8Array,
  transcript: Uint8Array,
): Promise<InitiatorResult['history']> {
  let parts: History[]
  try {
    parts = await sealHistory(sharedSecret, transcript, await history())
  } catch {
    return 'not_sent'
  }
  try {
    for (const part of parts) await send(end, part)
    await inbox.next('kept', (poll.now ?? Date.now)() + (poll.historyWaitMs ?? HISTORY_WAIT_MS))
    return 'kept'
  } catch {
    return 'unanswered'
  }
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
  readonly accept: (result: AcceptedKeys) => Promise<void>
  /** Keeps the album history A hands over after `done`; when not given, none is awaited (as by an older version). */
  readonly keepHistory?: (albums: AlbumHandOver) => Promise<void>
  readonly poll?: PollOptions
}

export interface AcceptedKeys {
  readonly keys: EnrolledKeys
  /** The identity public key of the offer, which the received seeds were checked to make. */
  readonly identityKey: Uint8Array
  readonly sas: string
}

/**
 * What came of A's album history: kept (`albums` of them); none (A sent none before the wait
 * ended or the channel closed: an older version, a device that remembers nothing, or a server
 * that kept it back); refused (it came but did not open, or could not be kept).
 */
export type HistoryHandOver =
  | { readonly status: 'kept'; readonly albums: number }
  | { readonly status: 'none' }
  | { readonly status: 'refused'; readonly reason: string }

export interface EnrolleeResult extends AcceptedKeys {
  readonly history: HistoryHandOver
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
    const accepted = { keys, identityKey: offer.payload.identity_key, sas }
    try {
      await options.accept(accepted)
    } catch (error) {
      throw error instanceof EnrollmentError ? error : new EnrollmentError('invalid', (error as Error).message)
    }
    // Best effort: the keys are kept and this device is listed, whatever happens to this last word.
    await send(end, { type: 'done' }).catch(() => {})
    const history: HistoryHandOver =
      options.keepHistory === undefined
        ? { status: 'none' }
        : await receiveHistory(options.keepHistory, end, inbox, options.poll ?? {}, sharedSecret, transcript)
    return { ...accepted, history }
  })
}

/** B's last step: A's album history, in parts, opened and kept, then `kept` said. Never fails the enrollment (the keys are kept). */
async function receiveHistory(
  keepHistory: (albums: AlbumHandOver) => Promise<void>,
  end: ChannelEnd,
  inbox: Inbox,
  poll: PollOptions,
  sharedSecret: Uint8Array,
  transcript: Uint8Array,
): Promise<HistoryHandOver> {
  const deadline = (poll.now ?? Date.now)() + (poll.historyWaitMs ?? HISTORY_WAIT_MS)
  const parts: History[] = []
  try {
    do parts.push((await inbox.next('history', deadline)).payload)
    while (parts.length < parts[0]!.parts)
  } catch (error) {
    // Nothing more within the wait, or the channel closed (A stopped after `done`): none was sent. Anything else is a payload that is not a part.
    if (parts.length === 0 && (!(error instanceof EnrollmentError) || error.stop === 'expired')) return { status: 'none' }
    return { status: 'refused', reason: (error as Error).message }
  }
  try {
    const albums = await openHistory(sharedSecret, transcript, parts)
    await keepHistory(albums)
    await send(end, { type: 'kept' }).catch(() => {})
    return { status: 'kept', albums: albums.size }
  } catch (error) {
    return { status: 'refused', reason: (error as Error).message }
  }
}
