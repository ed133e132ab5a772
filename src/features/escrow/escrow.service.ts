// Key escrow (SPEC.md "Escrow"): one opaque wrapped master key per account, returned exactly.
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { Escrow } from '../../storage/port/escrow.ts'
import type { Caller } from '../context.ts'
import { ensureNotSuspended } from '../moderation/moderation.service.ts'

export const ESCROW_MAX_BYTES = 64 * 1024

export async function storeEscrow(deps: Deps, caller: Caller, blob: Buffer): Promise<{ storedAt: number; replaced: boolean }> {
  ensureNotSuspended(caller)
  if (blob.length === 0) throw new AppError('error.escrow.malformed', 'The escrow body must hold 1 byte to 64 KiB')
  const storedAt = deps.clock.now()
  const { replaced } = await deps.storage.storeEscrow(caller.userId, blob, storedAt)
  return { storedAt, replaced }
}

export async function fetchEscrow(deps: Deps, caller: Caller): Promise<Escrow> {
  const escrow = await deps.storage.findEscrow(caller.userId)
  if (escrow === undefined) throw new AppError('error.not_found', 'No escrow is stored for this account')
  return escrow
}
