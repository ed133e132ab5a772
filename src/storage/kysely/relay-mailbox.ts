// The relay's mailbox writes (decisions 0025, 0036 and 0037). Each post and each drain is one
// atomic write. The mailbox bound is counted on the channel row, which
// an append locks anyway to take its sequence number, so racing appends never pass it. On
// PostgreSQL each write is one statement, one round trip: its commit skips the WAL flush through
// `set_config(..., true)`, which holds for the statement's own transaction only. SQLite cannot
// write inside WITH, and runs the same steps as statements of one ordinary transaction: its
// commit's fsync runs off the event loop, shared with the other commits (decision 0037).
import { sql, type Kysely, type QueryCreator, type Transaction } from 'kysely'
import type { RelayDirection, RelayMailboxes } from '../port/relay-mailbox.ts'
import { affected, type Executor } from './executor.ts'
import type { Tables } from './tables.ts'

// A payload is any JSON string, which may hold U+0000 (PostgreSQL text refuses it) or a lone
// surrogate (UTF-8 binding on either engine turns it into U+FFFD). Stored as its JSON
// encoding, which is plain well-formed text, it comes back exactly as it was posted.
const storedPayload = (payload: string): string => JSON.stringify(payload)
const postedPayload = (stored: string): string => JSON.parse(stored) as string

const heldColumn = (direction: RelayDirection) => (direction === 'to_initiator' ? 'heldToInitiator' : 'heldToEnrollee')

/** True, and this statement's transaction then commits without waiting for the WAL flush. */
export const commitWithoutFlushWait = sql<boolean>`set_config('synchronous_commit', 'off', true) = 'off'`

/** The channel if it is live. */
function liveChannel(db: QueryCreator<Tables>, channelHash: string, now: number) {
  return db.selectFrom('relayChannels').select('channelHash').where('channelHash', '=', channelHash).where('expiresAt', '>', now)
}

/** Takes the channel's next sequence number for a payload, unless the channel is not live or the mailbox is full. */
function takeSlot(db: QueryCreator<Tables>, channelHash: string, direction: RelayDirection, now: number, maxPayloads: number) {
  const held = heldColumn(direction)
  return db
    .updateTable('relayChannels')
    .set((eb) => ({ nextSeq: eb('nextSeq', '+', 1), [held]: eb(held, '+', 1) }))
    .where('channelHash', '=', channelHash)
    .where('expiresAt', '>', now)
    .where(held, '<', maxPayloads)
}

/** Deletes the mailbox's payloads if the channel is live. */
function takePayloads(db: QueryCreator<Tables>, channelHash: string, direction: RelayDirection, now: number) {
  return db
    .deleteFrom('relayMessages')
    .where('channelHash', '=', channelHash)
    .where('direction', '=', direction)
    .where((eb) => eb.exists(liveChannel(db, channelHash, now)))
}

/** Why nothing was appended: the channel is not live, or the mailbox is full. */
async function refusal(db: Executor, channelHash: string, now: number): Promise<'no_channel' | 'full'> {
  return (await liveChannel(db, channelHash, now).executeTakeFirst()) === undefined ? 'no_channel' : 'full'
}

/** The drained payloads in arrival order; undefined when nothing was drained and the channel is not live. */
async function inArrivalOrder(
  db: Executor,
  channelHash: string,
  now: number,
  drained: ReadonlyArray<{ readonly seq: number; readonly payload: string }>,
): Promise<string[] | undefined> {
  if (drained.length === 0 && (await liveChannel(db, channelHash, now).executeTakeFirst()) === undefined) return undefined
  return [...drained].sort((a, b) => a.seq - b.seq).map((m) => postedPayload(m.payload))
}

export function postgresRelayMailboxes(db: Kysely<Tables>): RelayMailboxes {
  return {
    async appendToMailbox(channelHash, direction, payload, now, maxPayloads) {
      // The UPDATE re-checks the bound on the row's newest version once a racing append commits.
      const appended = await db
        .with('taken', (qb) => takeSlot(qb, channelHash, direction, now, maxPayloads).where(commitWithoutFlushWait).returning(['channelHash', 'nextSeq']))
        .insertInto('relayMessages')
        .columns(['channelHash', 'seq', 'direction', 'payload'])
        .expression((eb) =>
          eb.selectFrom('taken').select((eb) => ['channelHash', 'nextSeq', eb.val(direction).as('direction'), eb.val(storedPayload(payload)).as('payload')]),
        )
        .executeTakeFirst()
      return affected(appended) === 1 ? 'appended' : refusal(db, channelHash, now)
    },

    async drainMailbox(channelHash, direction, now) {
      const held = heldColumn(direction)
      // The count goes down by what this statement deleted: a payload a racing drain took, or one
      // appended after this statement's snapshot, is not counted off here.
      const drained = await db
        .with('drained', (qb) => takePayloads(qb, channelHash, direction, now).where(commitWithoutFlushWait).returning(['seq', 'payload']))
        .with('counted', (qb) =>
          qb
            .updateTable('relayChannels')
            .set((eb) => ({
              [held]: eb(
                held,
                '-',
                eb.selectFrom('drained').select((eb) => eb.fn.countAll<number>().as('taken')),
              ),
            }))
            .where('channelHash', '=', channelHash)
            .where((eb) => eb.exists(eb.selectFrom('drained').select('seq')))
            .returning('channelHash'),
        )
        .selectFrom('drained')
        .select(['seq', 'payload'])
        .execute()
      return inArrivalOrder(db, channelHash, now, drained)
    },
  }
}

export function sqliteRelayMailboxes(db: Kysely<Tables>): RelayMailboxes {
  const inTransaction = <T>(work: (trx: Transaction<Tables>) => Promise<T>) => db.transaction().execute(work)
  return {
    appendToMailbox: (channelHash, direction, payload, now, maxPayloads) =>
      inTransaction(async (trx) => {
        const taken = await takeSlot(trx, channelHash, direction, now, maxPayloads).returning('nextSeq').executeTakeFirst()
        if (taken === undefined) return refusal(trx, channelHash, now)
        await trx
          .insertInto('relayMessages')
          .values({ channelHash, seq: taken.nextSeq, direction, payload: storedPayload(payload) })
          .execute()
        return 'appended'
      }),

    drainMailbox: (channelHash, direction, now) =>
      inTransaction(async (trx) => {
        const held = heldColumn(direction)
        const drained = await takePayloads(trx, channelHash, direction, now).returning(['seq', 'payload']).execute()
        if (drained.length > 0) {
          await trx
            .updateTable('relayChannels')
            .set((eb) => ({ [held]: eb(held, '-', drained.length) }))
            .where('channelHash', '=', channelHash)
            .execute()
        }
        return inArrivalOrder(trx, channelHash, now, drained)
      }),
  }
}
