// SPEC.md's "Album upgrade ceremony" table with API.md section 6 (commit, the window).

export interface Ceremony {
  readonly intentId: string
  readonly toVersion: string
  readonly expiresAt: number
}

/** The ceremony in force: a recorded one whose window has not passed. */
export function liveCeremony<C extends Ceremony>(recorded: C | null, now: number): C | null {
  return recorded !== null && recorded.expiresAt > now ? recorded : null
}

/** normal -> quiescence; the same intent again is idempotent; another intent is refused. */
export function decideStart(live: Ceremony | null, intentId: string): 'start' | 'same' | 'conflict' {
  if (live === null) return 'start'
  return live.intentId === intentId ? 'same' : 'conflict'
}

/** Only the live ceremony's own intent aborts it; with no live ceremony there is nothing to abort. */
export function decideAbort(live: Ceremony | null, intentId: string): 'abort' | 'conflict' {
  return live !== null && live.intentId === intentId ? 'abort' : 'conflict'
}

/** Commit needs the live ceremony's intent and no upload session in flight. */
export function decideCommit(live: Ceremony | null, intentId: string, inFlight: number): 'commit' | 'conflict' | 'not_quiescent' {
  if (live === null || live.intentId !== intentId) return 'conflict'
  return inFlight === 0 ? 'commit' : 'not_quiescent'
}

/** The target is later than the album's version and no later than PROTOCOL_MAX. */
export function acceptableTarget(toVersion: string, albumVersion: string, protocolMax: string): boolean {
  return toVersion > albumVersion && toVersion <= protocolMax
}
