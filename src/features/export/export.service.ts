// The account export (issue 17, decision 0028): everything the server holds about the caller's
// account, as one JSON document (contract/export.ts) written while it is read. Albums, feeds and
// receipts are read a page at a time and handed out a page at a time, as the reader takes them:
// an account of 100,000 assets exports in a bounded amount of memory.
import { EXPORT_FORMAT } from '../../contract/export.ts'
import { chainOfReceipt } from '../../contract/signing.ts'
import { timestamp } from '../../contract/common.ts'
import type { Deps } from '../../deps.ts'
import { budgetBlockedForS } from '../../domain/attempt-budget.ts'
import { AppError } from '../../errors.ts'
import type { AlbumsCut } from '../../storage/port/albums.ts'
import type { ReceiptCursor } from '../../storage/port/custody.ts'
import { albumView, feedEntryView } from '../albums/albums.service.ts'
import type { Caller } from '../context.ts'
import { receiptView } from '../custody/receipts.ts'
import { moderationRecordView, ownModerationRecord } from '../moderation/moderation.service.ts'
import { profileView } from '../profile/profile.service.ts'
import { cohortView, listDevices, listSecurityEvents, securityEventView, sessionView } from '../sessions/sessions.service.ts'
import { secondFactorView } from '../totp/totp.service.ts'

/**
 * Rows per read of a feed or of receipts. A feed entry or a receipt carries a hybrid signature
 * (about 5 KB as JSON): a page is about half a megabyte, read, written and let go.
 */
export const EXPORT_PAGE_ROWS = 100

/** The name the answer suggests for the saved file. */
export function exportFileName(userId: string): string {
  return `coffer-export-${userId}.json`
}

/**
 * Counts an export against the account's budget before anything is read; every export counts,
 * finished or not (the cost is in starting one). 429 with Retry-After once it is spent.
 */
async function reserveExport(deps: Deps, userId: string, now: number): Promise<void> {
  const { maxPerWindow, windowS } = deps.config.accountExport
  if ((await deps.storage.reserveAttempt('export', userId, now, { maxFailures: maxPerWindow, windowMs: windowS * 1000 })) !== undefined) return
  // The window may have ended between the two statements: then retry at once.
  const retryAfterS = budgetBlockedForS(await deps.storage.findAttemptBudget('export', userId), now, maxPerWindow) ?? 1
  throw new AppError(
    'error.rate_limited',
    `This account has started the ${maxPerWindow} exports its ${windowS}-second window allows; the next may start in ${retryAfterS} seconds`,
    { retryAfterS },
  )
}

/** An object's members without its braces, to be continued by members written later. */
function members(value: object): string {
  return JSON.stringify(value).slice(1, -1)
}

/**
 * The export of the caller's account, as chunks of one JSON document. The budget, the small
 * sections and the cut of the albums are read before the first chunk, so that what fails there
 * is a problem answer; the albums are read as the chunks are taken.
 */
export async function exportAccount(deps: Deps, caller: Caller): Promise<AsyncIterable<string>> {
  const now = deps.clock.now()
  await reserveExport(deps, caller.userId, now)
  const [cut, secondFactor, devices, securityEvents, record] = await Promise.all([
    deps.storage.cutAlbums(caller.userId),
    secondFactorView(deps.storage, caller.userId),
    listDevices(deps, caller),
    listSecurityEvents(deps, caller),
    ownModerationRecord(deps, caller),
  ])
  const opening = members({
    format: EXPORT_FORMAT,
    exported_at: timestamp(now),
    profile: profileView(caller.account),
    second_factor: secondFactor,
    sessions: devices.sessions.map((session) => sessionView(session, caller)),
    cohorts: devices.cohorts.map(cohortView),
    security_events: securityEvents.map(securityEventView),
    moderation: moderationRecordView(record),
  })
  return documentChunks(deps, opening, cut)
}

async function* documentChunks(deps: Deps, opening: string, cut: AlbumsCut): AsyncGenerator<string> {
  yield `{${opening},"albums":[`
  for (const [i, { album, lastSyncSeq }] of cut.albums.entries()) {
    yield `${i === 0 ? '' : ','}{${members(albumView(album))},"feed":[`
    yield* feedChunks(deps, album.albumId, lastSyncSeq)
    yield '],"receipts":{'
    yield* receiptChunks(deps, album.albumId, cut.receiptHeads)
    yield '}}'
  }
  yield ']}'
}

/** The album's feed entries up to `lastSyncSeq`, a page per chunk, comma-separated. */
async function* feedChunks(deps: Deps, albumId: string, lastSyncSeq: number): AsyncGenerator<string> {
  for (let after = 0; after < lastSyncSeq; ) {
    // Entries past the cut were written after the export began: left out.
    const page = (await deps.storage.feed(albumId, after, EXPORT_PAGE_ROWS)).filter((op) => op.syncSeq <= lastSyncSeq)
    if (page.length === 0) return
    yield `${after === 0 ? '' : ','}${page.map((op) => JSON.stringify(feedEntryView(op))).join(',')}`
    after = page.at(-1)!.syncSeq
  }
}

/**
 * The members `"<asset_id>":[receipts...]` of the album's receipts numbered up to their chain's
 * head in `heads`, a page per chunk. Pages follow (asset_id, receipt_seq) order, so an asset's
 * receipts may continue on the next page: its array stays open until another asset, or the end, comes.
 */
async function* receiptChunks(deps: Deps, albumId: string, heads: readonly number[]): AsyncGenerator<string> {
  let cursor: ReceiptCursor | null = null
  /** The asset whose array is open. */
  let open: string | null = null
  for (;;) {
    const page = await deps.storage.albumReceipts(albumId, Math.max(0, ...heads), cursor, EXPORT_PAGE_ROWS)
    let chunk = ''
    // A receipt beyond its own chain's head was appended after the cut (chains move apart).
    for (const receipt of page.filter((r) => r.receiptSeq <= (heads[chainOfReceipt(r.receiptSeq, heads.length) - 1] ?? 0))) {
      if (receipt.assetId === open) chunk += ','
      else chunk += `${open === null ? '' : '],'}${JSON.stringify(receipt.assetId)}:[`
      open = receipt.assetId
      chunk += JSON.stringify(receiptView(receipt))
    }
    if (chunk !== '') yield chunk
    const last = page.at(-1)
    if (last === undefined || page.length < EXPORT_PAGE_ROWS) break
    cursor = { assetId: last.assetId, receiptSeq: last.receiptSeq }
  }
  if (open !== null) yield ']'
}
