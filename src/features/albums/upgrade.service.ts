// The upgrade ceremony (SPEC.md "Album upgrade ceremony", API.md section 6): an intent opens
// a window in which writes and new uploads are refused; once nothing is in flight the
// proposer commits its tombstone and the album is pinned to the newer protocol.
import { readTopLevelFields, textField } from '../../codec/cbor.ts'
import type { Deps } from '../../deps.ts'
import { isProtocolDate } from '../../domain/protocol.ts'
import { acceptableTarget, decideAbort, decideCommit, decideStart, liveCeremony, type Ceremony } from '../../domain/upgrade.ts'
import { AppError } from '../../errors.ts'
import type { Album, AlbumStore } from '../../storage/port/albums.ts'
import type { Caller } from '../context.ts'
import { ensureNotSuspended } from '../moderation/moderation.service.ts'
import { ownAlbum, readableAlbum } from './albums.service.ts'

export interface UpgradePhase {
  readonly albumId: string
  /** The live ceremony, or null in normal operation (including after the window expired). */
  readonly ceremony: Ceremony | null
  readonly inFlight: number
}

const inFlightConflict = (detail: string) => new AppError('error.upgrade.in_flight', detail)

async function phase(store: AlbumStore, albumId: string, recorded: Ceremony | null, now: number): Promise<UpgradePhase> {
  return { albumId, ceremony: liveCeremony(recorded, now), inFlight: await store.countInFlight(albumId, now) }
}

/** The album's row, locked for the transaction (upload opens and writes queue behind it). */
async function lockedAlbum(tx: AlbumStore, albumId: string): Promise<Album> {
  const album = await tx.lockAlbum(albumId)
  if (album === undefined) throw new AppError('error.not_found', 'No album of this account has that id')
  return album
}

export async function readUpgrade(deps: Deps, caller: Caller, albumId: string): Promise<UpgradePhase> {
  // A member reads it too: its client must know the album's protocol before it writes.
  const { album } = await readableAlbum(deps.storage, caller, albumId)
  return phase(deps.storage, albumId, album.upgrade, deps.clock.now())
}

function intentOf(body: Buffer): { intentId: string; toVersion: string } {
  const fields = readTopLevelFields(body, ['intent_id', 'to_protocol_version'])
  const intentId = fields === null ? null : textField(fields, 'intent_id')
  const toVersion = fields === null ? null : textField(fields, 'to_protocol_version')
  if (intentId === null || intentId === '' || toVersion === null || !isProtocolDate(toVersion)) {
    throw new AppError('error.request.malformed', 'The intent must be a CBOR map with text intent_id and to_protocol_version (YYYY-MM-DD)')
  }
  return { intentId, toVersion }
}

export async function startUpgrade(deps: Deps, caller: Caller, albumId: string, body: Buffer): Promise<UpgradePhase> {
  await ownAlbum(deps.storage, caller, albumId)
  ensureNotSuspended(caller)
  const intent = intentOf(body)
  const now = deps.clock.now()
  return deps.storage.transaction(async (tx) => {
    const album = await lockedAlbum(tx, albumId)
    const live = liveCeremony(album.upgrade, now)
    switch (decideStart(live, intent.intentId)) {
      case 'same':
        return phase(tx, albumId, live, now)
      case 'conflict':
        throw inFlightConflict('Another upgrade ceremony is in flight on this album')
      case 'start': {
        // The same intent never produces two forks: a committed one is spent.
        if (await tx.isCommittedIntent(albumId, intent.intentId))
          throw inFlightConflict('This intent_id was already committed on this album; propose a new intent')
        if (!acceptableTarget(intent.toVersion, album.protocolVersion, deps.config.protocol.max)) {
          throw new AppError('error.request.invalid', `to_protocol_version must be later than ${album.protocolVersion} and at most ${deps.config.protocol.max}`)
        }
        const ceremony = { ...intent, expiresAt: now + deps.config.upgradeWindowS * 1000 }
        await tx.setUpgrade(albumId, { ...ceremony, intent: body })
        return phase(tx, albumId, ceremony, now)
      }
    }
  })
}

export async function abortUpgrade(deps: Deps, caller: Caller, albumId: string, intentId: string): Promise<UpgradePhase> {
  await ownAlbum(deps.storage, caller, albumId)
  ensureNotSuspended(caller)
  const now = deps.clock.now()
  return deps.storage.transaction(async (tx) => {
    const album = await lockedAlbum(tx, albumId)
    if (decideAbort(liveCeremony(album.upgrade, now), intentId) === 'conflict') throw inFlightConflict('No live upgrade ceremony has this intent_id')
    await tx.setUpgrade(albumId, null)
    return phase(tx, albumId, null, now)
  })
}

export async function commitUpgrade(deps: Deps, caller: Caller, albumId: string, intentId: string, tombstone: Buffer): Promise<UpgradePhase> {
  await ownAlbum(deps.storage, caller, albumId)
  ensureNotSuspended(caller)
  const now = deps.clock.now()
  return deps.storage.transaction(async (tx) => {
    // Upload opens take the same album lock, so in_flight cannot grow under this check.
    const album = await lockedAlbum(tx, albumId)
    const live = liveCeremony(album.upgrade, now)
    const decision = decideCommit(live, intentId, await tx.countInFlight(albumId, now))
    if (decision === 'not_quiescent')
      throw new AppError('error.upgrade.not_quiescent', 'Upload sessions are still in flight against this album; wait until in_flight is 0')
    if (decision === 'conflict' || live === null) throw inFlightConflict('No live upgrade ceremony has this intent_id')
    await tx.commitUpgrade(albumId, { intentId, fromVersion: album.protocolVersion, toVersion: live.toVersion, tombstone, committedAt: now })
    return phase(tx, albumId, null, now)
  })
}
