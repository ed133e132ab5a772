// The devices listing and revoking one session (SPEC.md "Sessions").
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { Caller } from '../context.ts'
import type { Cohort, Session } from '../../storage/port.ts'

export interface Devices {
  readonly sessions: Session[]
  readonly cohorts: Cohort[]
}

export async function listDevices(deps: Deps, caller: Caller): Promise<Devices> {
  const [sessions, cohorts] = await Promise.all([
    deps.storage.listLiveSessions(caller.userId, deps.clock.now()),
    deps.storage.listCohorts(caller.userId),
  ])
  return { sessions, cohorts }
}

/** Any live token may end any of the caller's own sessions; another account's id is unknown. */
export async function revokeSession(deps: Deps, caller: Caller, sessionId: string): Promise<void> {
  if (!(await deps.storage.closeLiveSessionOf(caller.userId, sessionId, deps.clock.now()))) {
    throw new AppError('error.not_found', 'No live session of this account has that id')
  }
}
