// Public links (decision 0068; docs/sharing.md "Public links"). The owner's client makes a link's
// secret and keys; the server keeps the hash of the access token they derive and an envelope
// sealed under the link's key, and answers the link's holder (no account) the album's feed and
// blobs, read only, while the link works. Nothing here can open a photo: the key is in the URL's
// fragment, which no browser sends.
import { createHash, timingSafeEqual } from 'node:crypto'
import { hashToken, newToken } from '../../crypto/tokens.ts'
import type { Deps } from '../../deps.ts'
import { budgetBlockedForS } from '../../domain/attempt-budget.ts'
import { linkReads, linkState, type LinkState } from '../../domain/link.ts'
import { AppError } from '../../errors.ts'
import type { AppliedOp } from '../../storage/port/lifecycle.ts'
import type { BudgetScope } from '../../storage/port/budgets.ts'
import type { AlbumLink, LinkPassword } from '../../storage/port/links.ts'
import { ownAlbum } from '../albums/albums.service.ts'
import type { Caller } from '../context.ts'
import { ensureNotSuspended } from '../moderation/moderation.service.ts'

export interface LinkRequest {
  readonly linkId: string
  readonly tokenHash: string
  readonly envelope: Buffer
  readonly ownerCopy: Buffer
  readonly assetIds: readonly string[] | null
  readonly downloads: boolean
  readonly password: LinkPassword | null
  readonly expiresInS: number | null
  readonly maxOpens: number | null
}

/** A link with its selection, as its owner and the operator list it. */
export interface ListedLink extends AlbumLink {
  readonly assetIds: readonly string[] | null
  readonly state: LinkState
}

/** A link whose state stops what was asked: 410 with the state's code. */
function stopped(state: Exclude<LinkState, 'active'>): AppError {
  switch (state) {
    case 'expired':
      return new AppError('error.link.expired', 'The link has expired')
    case 'revoked':
      return new AppError('error.link.revoked', 'The link was revoked by its owner')
    case 'disabled':
      return new AppError('error.link.disabled', 'The link was disabled by the operator')
    case 'used_up':
      return new AppError('error.link.used_up', 'The link was opened as many times as its owner allowed')
  }
}

const unknownLink = () => new AppError('error.not_found', 'No link has that id')

export async function createLink(deps: Deps, caller: Caller, albumId: string, request: LinkRequest): Promise<ListedLink> {
  ensureNotSuspended(caller)
  await ownAlbum(deps.storage, caller, albumId)
  if (request.assetIds !== null) {
    const live = await deps.storage.liveAssetsOf(albumId, request.assetIds)
    const missing = request.assetIds.find((assetId) => !live.has(assetId))
    if (missing !== undefined) throw new AppError('error.request.invalid', `asset_ids: ${missing} is no live photo of this album`)
  }
  const now = deps.clock.now()
  const { expiresInS, ...rest } = request
  const link = { ...rest, albumId, ownerId: caller.userId, createdAt: now, expiresAt: expiresInS === null ? null : now + expiresInS * 1000 }
  const outcome = await deps.storage.transaction((tx) => tx.createLink(link, now, deps.config.links.max))
  if (outcome === 'exists') throw new AppError('error.link.exists', 'A link has that id already: make another id')
  if (outcome === 'limit') throw new AppError('error.link.too_many', `This account has ${deps.config.links.max} links that still work: revoke some first`)
  const assetIds = request.assetIds === null ? null : [...request.assetIds].sort()
  return {
    ...link,
    assetIds,
    selection: assetIds !== null,
    opens: 0,
    lastOpenedAt: null,
    revokedAt: null,
    disabledAt: null,
    disabledReason: null,
    state: 'active',
  }
}

/** Links (an owner's, or any for the operator), newest first, each with its selection and state. */
export async function listLinks(deps: Deps, options: { readonly ownerId?: string; readonly albumId?: string; readonly limit: number }): Promise<ListedLink[]> {
  return listed(deps, await deps.storage.listLinks(options))
}

async function listed(deps: Deps, links: readonly AlbumLink[]): Promise<ListedLink[]> {
  const assets = await deps.storage.linkAssets(links.filter((link) => link.selection).map((link) => link.linkId))
  const now = deps.clock.now()
  return links.map((link) => ({ ...link, assetIds: link.selection ? (assets.get(link.linkId) ?? []) : null, state: linkState(link, now) }))
}

/** The caller's own link; anyone else's, or none: 404. */
async function ownLink(deps: Deps, caller: Caller, linkId: string): Promise<AlbumLink> {
  const link = await deps.storage.findLink(linkId)
  if (link === undefined || link.ownerId !== caller.userId) throw unknownLink()
  return link
}

/** Revokes the caller's link at once: its sessions end, every read after this answers 410. Revoking it again changes nothing. */
export async function revokeLink(deps: Deps, caller: Caller, linkId: string): Promise<void> {
  await ownLink(deps, caller, linkId)
  await deps.storage.transaction((tx) => tx.revokeLink(linkId, deps.clock.now()))
}

/** Replaces what the owner's client sealed for the link (the album moved to a new key epoch). */
export async function replaceLinkEnvelope(deps: Deps, caller: Caller, linkId: string, envelope: Buffer): Promise<void> {
  ensureNotSuspended(caller)
  await ownLink(deps, caller, linkId)
  await deps.storage.replaceLinkEnvelope(linkId, envelope)
}

/** The operator's disabling (the audit line is the route's): the link as it is now; 409 when it was disabled already. */
export async function disableLink(deps: Deps, linkId: string, reason: string | null): Promise<ListedLink> {
  if ((await deps.storage.findLink(linkId)) === undefined) throw unknownLink()
  if (!(await deps.storage.transaction((tx) => tx.disableLink(linkId, deps.clock.now(), reason))))
    throw new AppError('error.moderation.state_conflict', 'The link is disabled already')
  const [link] = await listed(deps, [(await deps.storage.findLink(linkId))!])
  return link!
}

/**
 * Counts one attempt of this kind against the link and the client's address, or throws 429 when
 * either has used its window's budget; every attempt is counted before it is looked at, so a
 * burst on any instance gets no more. Answers what undoes the count (a right password).
 */
async function spend(
  deps: Deps,
  scopes: { readonly link: BudgetScope; readonly address: BudgetScope },
  subjects: { readonly linkId: string; readonly address: string | null },
  limits: { readonly perLink: number; readonly perAddress: number; readonly windowS: number },
): Promise<() => Promise<void>> {
  const now = deps.clock.now()
  const windowMs = limits.windowS * 1000
  // The address's first: an address past its own budget is refused without counting against the
  // link's, so one client cannot spend the budget every other visitor of the link shares.
  const budgets: [BudgetScope, string, number][] = subjects.address === null ? [] : [[scopes.address, subjects.address, limits.perAddress]]
  budgets.push([scopes.link, subjects.linkId, limits.perLink])
  for (const [scope, subject, max] of budgets) {
    if ((await deps.storage.reserveAttempt(scope, subject, now, { maxFailures: max, windowMs })) === undefined) {
      const retryAfterS = budgetBlockedForS(await deps.storage.findAttemptBudget(scope, subject), now, max) ?? 1
      throw new AppError('error.rate_limited', 'Too many requests for this link; wait and retry', { retryAfterS })
    }
  }
  return async () => {
    for (const [scope, subject] of budgets) await deps.storage.releaseAttempt(scope, subject)
  }
}

/** What the link's page needs before it can derive the access token: whether a password is asked, and how it is stretched. */
export async function probeLink(deps: Deps, linkId: string, address: string | null): Promise<AlbumLink> {
  await spendRead(deps, linkId, address)
  const link = await deps.storage.findLink(linkId)
  if (link === undefined) throw unknownLink()
  const state = linkState(link, deps.clock.now())
  if (state !== 'active') throw stopped(state)
  return link
}

/**
 * Opens the link with the access token its secret (and password) derive: a session, counted
 * against the link's opens. A wrong token counts against the link's and the address's refused
 * opens (LINK_OPEN_FAILURES_PER_LINK, _PER_ADDRESS per LINK_OPEN_FAILURE_WINDOW_S), so a
 * password can only be guessed online, that slowly.
 */
export async function openLink(
  deps: Deps,
  linkId: string,
  token: string,
  address: string | null,
): Promise<{ link: AlbumLink; session: string; sessionExpiresAt: number }> {
  const { openFailuresPerLink, openFailuresPerAddress, openFailureWindowS, sessionTtlS } = deps.config.links
  const release = await spend(
    deps,
    { link: 'link_open_link', address: 'link_open_address' },
    { linkId, address },
    { perLink: openFailuresPerLink, perAddress: openFailuresPerAddress, windowS: openFailureWindowS },
  )
  const link = await deps.storage.findLink(linkId)
  if (link === undefined) throw unknownLink()
  const presented = createHash('sha256').update(Buffer.from(token, 'base64url')).digest()
  if (!timingSafeEqual(presented, Buffer.from(link.tokenHash, 'hex'))) throw new AppError('error.link.denied', 'The link’s secret or its password is wrong')
  await release()
  const now = deps.clock.now()
  const state = linkState(link, now)
  if (state !== 'active') throw stopped(state)
  const session = newToken('link')
  const sessionExpiresAt = Math.min(now + sessionTtlS * 1000, link.expiresAt ?? Number.MAX_SAFE_INTEGER)
  const opened = await deps.storage.transaction((tx) => tx.openLink(linkId, { sessionHash: hashToken(session), expiresAt: sessionExpiresAt }, now))
  if (opened === 'used_up') throw stopped('used_up')
  return { link, session, sessionExpiresAt }
}

/** One read through a link, counted against the link's and the address's reads (LINK_READS_PER_LINK, _PER_ADDRESS per LINK_READ_WINDOW_S). */
async function spendRead(deps: Deps, linkId: string, address: string | null): Promise<void> {
  const { readsPerLink, readsPerAddress, readWindowS } = deps.config.links
  await spend(
    deps,
    { link: 'link_read_link', address: 'link_read_address' },
    { linkId, address },
    { perLink: readsPerLink, perAddress: readsPerAddress, windowS: readWindowS },
  )
}

/**
 * The link a session reads, when the link still lets it: a session unknown or ended, 401; a link
 * revoked, disabled or expired since, 410 (mid-view: the very next read). Each read is counted.
 */
export async function linkOfSession(deps: Deps, linkId: string, session: string, address: string | null): Promise<AlbumLink> {
  const link = await deps.storage.findLinkSession(hashToken(session), deps.clock.now())
  if (link === undefined || link.linkId !== linkId) {
    // The session ended with the link: say why, when the link is known to have stopped.
    const known = await deps.storage.findLink(linkId)
    const state = known === undefined ? 'active' : linkState(known, deps.clock.now())
    if (state !== 'active' && state !== 'used_up') throw stopped(state)
    throw new AppError('error.auth.unauthenticated', 'The link session is unknown or ended: open the link again')
  }
  const state = linkState(link, deps.clock.now())
  if (!linkReads(state)) throw stopped(state as Exclude<LinkState, 'active' | 'used_up'>)
  await spendRead(deps, linkId, address)
  return link
}

/** The album's feed through the link: of its selection's photos only, when it is one. */
export function linkFeed(deps: Deps, link: AlbumLink, after: number, limit: number): Promise<AppliedOp[]> {
  return deps.storage.feed(link.albumId, after, limit, link.selection ? link.linkId : undefined)
}
