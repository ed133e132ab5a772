// The device-enrollment relay (SPEC.md "Device-enrollment channel", API.md section 5): a
// one-time code with two spellings opens a channel with two mailboxes.
import { randomBytes, randomInt } from 'node:crypto'
import { hashToken } from '../../crypto/tokens.ts'
import type { Deps } from '../../deps.ts'
import { budgetBlockedForS } from '../../domain/attempt-budget.ts'
import { MAILBOX_MAX_PAYLOADS, RELAY_PAYLOAD_MAX_BYTES, TEXT_FALLBACK_DIGITS, codeSpelling } from '../../domain/enrollment.ts'
import { isFresh } from '../../domain/session.ts'
import { AppError } from '../../errors.ts'
import type { RelayDirection } from '../../storage/port/relay-mailbox.ts'
import type { Caller } from '../context.ts'

export interface IssuedCode {
  readonly code: string
  readonly textFallback: string
  readonly expiresAt: number
}

export interface OpenedChannel {
  readonly channelId: string
  readonly expiresAt: number
}

const channelNotFound = () => new AppError('error.enroll.channel_not_found', 'No open channel has this id')

function textFallback(): string {
  return Array.from({ length: TEXT_FALLBACK_DIGITS }, () => randomInt(10)).join('')
}

export async function issueEnrollmentCode(deps: Deps, caller: Caller): Promise<IssuedCode> {
  const now = deps.clock.now()
  if (!isFresh(caller.authenticatedAt, now, deps.config.freshnessWindowS)) {
    throw new AppError('error.auth.reauthentication_required', 'Prove the password again (reauthenticate) before adding a device')
  }
  const expiresAt = now + deps.config.enrollment.codeTtlS * 1000
  const code = randomBytes(32).toString('base64url')
  // Ten digits can collide with another live code's; draw again until they do not.
  for (;;) {
    const text = textFallback()
    if (await deps.storage.insertEnrollmentCode({ codeHash: hashToken(code), textHash: hashToken(text), userId: caller.userId, expiresAt })) {
      return { code, textFallback: text, expiresAt }
    }
  }
}

export async function redeemEnrollmentCode(deps: Deps, code: string, clientAddress: string): Promise<OpenedChannel> {
  const { redeemMaxFailures, redeemWindowS, channelTtlS } = deps.config.enrollment
  const now = deps.clock.now()
  // Counted before the code is looked at (and uncounted on success), so that racing
  // redemptions cannot get more codes looked at than the limit allows.
  if ((await deps.storage.reserveAttempt('redeem', clientAddress, now, { maxFailures: redeemMaxFailures, windowMs: redeemWindowS * 1000 })) === undefined) {
    // The window may have ended between the two statements: then retry at once.
    const blockedForS = budgetBlockedForS(await deps.storage.findAttemptBudget('redeem', clientAddress), now, redeemMaxFailures) ?? 1
    throw new AppError('error.rate_limited', 'Too many refused codes from this address; wait and retry', { retryAfterS: blockedForS })
  }
  const channelId = randomBytes(32).toString('base64url')
  const expiresAt = now + channelTtlS * 1000
  const opened = await deps.storage.transaction(async (tx) => {
    const initiatorId = await tx.redeemEnrollmentCode(hashToken(codeSpelling(code)), now)
    if (initiatorId === undefined) return false
    await tx.openChannel({ channelHash: hashToken(channelId), initiatorId, createdAt: now, expiresAt })
    return true
  })
  if (!opened) throw new AppError('error.enroll.code_refused', 'The code is unknown, used or expired')
  await deps.storage.releaseAttempt('redeem', clientAddress)
  return { channelId, expiresAt }
}

export async function relayPayload(deps: Deps, channelId: string, direction: RelayDirection, payload: string): Promise<void> {
  if (Buffer.byteLength(payload, 'utf8') > RELAY_PAYLOAD_MAX_BYTES) {
    throw new AppError('error.request.invalid', `payload must be at most ${RELAY_PAYLOAD_MAX_BYTES} bytes of UTF-8`)
  }
  // Mailbox writes do not wait for the disk (decision 0025): a ceremony that loses a message starts over.
  const outcome = await deps.storage.appendToMailbox(hashToken(channelId), direction, payload, deps.clock.now(), MAILBOX_MAX_PAYLOADS)
  if (outcome === 'no_channel') throw channelNotFound()
  if (outcome === 'full')
    throw new AppError('error.enroll.mailbox_full', `The ${direction} mailbox already holds ${MAILBOX_MAX_PAYLOADS} payloads; let the other side drain it`)
}

export async function drainMailbox(deps: Deps, channelId: string, direction: RelayDirection): Promise<string[]> {
  const payloads = await deps.storage.drainMailbox(hashToken(channelId), direction, deps.clock.now())
  if (payloads === undefined) throw channelNotFound()
  return payloads
}

/** Only the initiator closes; another account's channel answers exactly like an unknown one. */
export async function closeChannel(deps: Deps, caller: Caller, channelId: string): Promise<void> {
  if (!(await deps.storage.closeChannel(hashToken(channelId), caller.userId, deps.clock.now()))) throw channelNotFound()
}
