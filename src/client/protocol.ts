// Protocol versions and the album upgrade ceremony, as the write paths meet them (backup,
// replace, delete; docs/client-library.md, "Protocol versions and album upgrades").
//
// A lifecycle write states a protocol_version; the server takes it when it lies within its
// range and is not older than the album's pinned version, else it answers 426 with the range it
// takes for this album (protocol_min, protocol_max). The client then writes again, once, with the
// newest version it speaks within that range, and when the album's pin is older than the range
// (the server no longer takes it), it moves the pin there with the upgrade ceremony (SPEC.md "Album upgrade ceremony", API.md section 6):
// an intent, a wait until no upload session of the album is open (in_flight 0), the commit. While
// any ceremony is live the server refuses writes and new upload sessions with 409
// error.upgrade.in_flight; a write that meets one waits for the window to close and tries again.
// Nothing of this asks the person anything.
import { encodeCanonical } from '../codec/cbor.ts'
import { CofferProblem, type CofferClient } from '../sdk/client.ts'

/**
 * The protocol versions client format v1 speaks (docs/client-format.md): every version from the
 * first to the newest this release knows. The envelope it signs is the same for all of them.
 */
export const CLIENT_PROTOCOL_MIN = '2025-01-01'
export const CLIENT_PROTOCOL_MAX = '2026-11-01'

/** The album needs a protocol version this client does not speak: the person must update the client. */
export class ProtocolUnsupportedError extends Error {
  override readonly name = 'ProtocolUnsupportedError'
  readonly protocolMin: string
  readonly protocolMax: string
  constructor(range: ProtocolRange) {
    super(
      `the album now takes protocol versions ${range.min} to ${range.max}, and this client speaks ${CLIENT_PROTOCOL_MIN} to ${CLIENT_PROTOCOL_MAX}: update it`,
    )
    this.protocolMin = range.min
    this.protocolMax = range.max
  }
}

export interface ProtocolRange {
  readonly min: string
  readonly max: string
}

/** The range a 426 ProtocolRangeProblem names; null for any other error. */
export function protocolRangeOf(error: unknown): ProtocolRange | null {
  if (!(error instanceof CofferProblem) || error.status !== 426) return null
  const { protocol_min: min, protocol_max: max } = error.problem as { protocol_min?: unknown; protocol_max?: unknown }
  return typeof min === 'string' && typeof max === 'string' ? { min, max } : null
}

/** The newest version this client speaks within `range`; ProtocolUnsupportedError when none. */
export function pickProtocol(range: ProtocolRange): string {
  const newest = range.max < CLIENT_PROTOCOL_MAX ? range.max : CLIENT_PROTOCOL_MAX
  if (newest < range.min || newest < CLIENT_PROTOCOL_MIN) throw new ProtocolUnsupportedError(range)
  return newest
}

/** True for the 409 a write or an upload session meets while an upgrade window is open. */
export const upgradeInFlight = (error: unknown): boolean => error instanceof CofferProblem && error.status === 409 && error.code === 'error.upgrade.in_flight'

export interface UpgradeTiming {
  /** Between two reads of the upgrade phase; 250 ms unless given. */
  readonly pollMs?: number
  /** How long to wait for a window to close, or for in_flight to reach 0; 16 minutes (the server's window is 15) unless given. */
  readonly timeoutMs?: number
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until the album is out of any upgrade window (the ceremony committed, was aborted or expired). */
export async function waitForUpgrade(client: CofferClient, albumId: string, timing: UpgradeTiming = {}): Promise<void> {
  const deadline = Date.now() + (timing.timeoutMs ?? 16 * 60_000)
  for (;;) {
    const phase = await client.readUpgrade(albumId)
    if (phase.intent_id === undefined || phase.intent_id === null) return
    if (Date.now() > deadline) throw new Error(`album ${albumId} stayed in an upgrade window (intent ${phase.intent_id}) for too long`)
    await pause(timing.pollMs ?? 250)
  }
}

/** What upgradeAlbum did. */
export type UpgradeOutcome = 'upgraded' | 'current' | 'other-ceremony' | 'not-quiescent'

/**
 * Pins the album to protocol version `to` with the upgrade ceremony, when its pin is older (and,
 * with `below`, only when the pin is older than that too: the server's range starts there):
 * starts an intent, waits until no upload session of the album is open, commits. Another
 * ceremony already live is waited for, not fought. When the album does not quiesce in time the
 * intent is aborted ('not-quiescent'): writes go on at `to` all the same, and a later write
 * tries again.
 */
export async function upgradeAlbum(
  client: CofferClient,
  albumId: string,
  to: string,
  timing: UpgradeTiming & { readonly below?: string } = {},
): Promise<UpgradeOutcome> {
  const pinned = (await client.listAlbums()).albums.find((a) => a.album_id === albumId)?.protocol_version
  if (pinned === undefined) throw new Error(`album ${albumId} is not one of this account's`)
  if (pinned >= to || (timing.below !== undefined && pinned >= timing.below)) return 'current'
  const intentId = globalThis.crypto.randomUUID()
  try {
    await client.startUpgrade(albumId, encodeCanonical({ intent_id: intentId, to_protocol_version: to, from_protocol_version: pinned }))
  } catch (error) {
    if (!upgradeInFlight(error)) throw error
    await waitForUpgrade(client, albumId, timing)
    return 'other-ceremony'
  }
  const deadline = Date.now() + (timing.timeoutMs ?? 16 * 60_000)
  for (;;) {
    const phase = await client.readUpgrade(albumId)
    if (phase.intent_id !== intentId) return 'other-ceremony' // expired meanwhile
    if (phase.in_flight === 0) {
      try {
        await client.commitUpgrade(albumId, intentId, encodeCanonical({ tombstone: intentId, to_protocol_version: to }))
        return 'upgraded'
      } catch (error) {
        // An upload session opened between the read and the commit: wait again.
        if (!(error instanceof CofferProblem && error.code === 'error.upgrade.not_quiescent')) throw error
      }
    }
    if (Date.now() > deadline) {
      await client.abortUpgrade(albumId, intentId).catch(() => {})
      return 'not-quiescent'
    }
    await pause(timing.pollMs ?? 250)
  }
}

/**
 * Runs a lifecycle write stated at `version`, carrying out what the server asks on the way:
 * a 426 writes again, once, at the newest version the client speaks within the range the server
 * named (ProtocolUnsupportedError when there is none), then moves the album's pin there when it
 * is older (upgradeAlbum; a ceremony that cannot finish now does not fail the write). A 409
 * error.upgrade.in_flight waits for the window to close and writes again, up to twice.
 * `write` must be safe to call again with a new version (a fresh signature each time).
 */
export async function writeWithProtocol<T>(
  client: CofferClient,
  albumId: string,
  version: string,
  write: (version: string) => Promise<T>,
  options: UpgradeTiming & {
    /** false: a 409 error.upgrade.in_flight is thrown, for a caller holding an upload session open (the ceremony waits for it to end). */
    readonly waitWhileUpgrading?: boolean
  } = {},
): Promise<T> {
  let moved: string | null = null
  let range: ProtocolRange | null = null
  version = knownVersion(client, albumId, version)
  for (let round = 0; ; round++) {
    try {
      const result = await write(moved ?? version)
      if (moved !== null && range !== null) {
        learnVersion(client, albumId, moved)
        // The pin needs moving when the server no longer takes it (its range starts above it);
        // when another device moved it already, the range starts at the pin and nothing is done.
        await upgradeAlbum(client, albumId, moved, { ...options, below: range.min }).catch(() => 'failed')
      }
      return result
    } catch (error) {
      const named = protocolRangeOf(error)
      if (named !== null && moved === null) {
        range = named
        moved = pickProtocol(named)
        continue
      }
      if (upgradeInFlight(error) && options.waitWhileUpgrading !== false && round < 3) {
        await waitForUpgrade(client, albumId, options)
        if (moved === null) version = await pinnedVersion(client, albumId, version)
        continue
      }
      throw error
    }
  }
}

/** The protocol version the server pins for an album this account owns or is a member of; undefined for any other. */
export async function albumPinOf(client: CofferClient, albumId: string): Promise<string | undefined> {
  const owned = (await client.listAlbums()).albums.find((a) => a.album_id === albumId)
  return (owned ?? (await client.listSharedAlbums()).albums.find((a) => a.album_id === albumId))?.protocol_version
}

/** The album's pinned version now, or `fallback` when it is older than that (a pin only moves forward). */
export async function pinnedVersion(client: CofferClient, albumId: string, fallback: string): Promise<string> {
  const pinned = await albumPinOf(client, albumId)
  const version = pinned !== undefined && pinned > fallback ? pinned : fallback
  learnVersion(client, albumId, version)
  return version
}

// Versions a client learned an album takes (a 426, a ceremony), so that the next write of the
// same run states it at once instead of meeting the 426 again.
const learned = new WeakMap<CofferClient, Map<string, string>>()

function learnVersion(client: CofferClient, albumId: string, version: string): void {
  const albums = learned.get(client) ?? new Map<string, string>()
  learned.set(client, albums)
  if ((albums.get(albumId) ?? '') < version) albums.set(albumId, version)
}

/** `version`, or the newer one this client learned the album takes. */
export function knownVersion(client: CofferClient, albumId: string, version: string): string {
  const newer = learned.get(client)?.get(albumId)
  return newer !== undefined && newer > version ? newer : version
}
