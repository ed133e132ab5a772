import type { EnrollmentStore } from '../port.ts'
import { affected, type Executor } from './executor.ts'

// A payload is any JSON string, which may hold U+0000 (PostgreSQL text refuses it) or a lone
// surrogate (UTF-8 binding on either engine turns it into U+FFFD). Stored as its JSON
// encoding, which is plain well-formed text, it comes back exactly as it was posted.
const storedPayload = (payload: string): string => JSON.stringify(payload)
const postedPayload = (stored: string): string => JSON.parse(stored) as string

/** The channel if it is live: a query to run, or a subquery. */
function liveChannel(db: Executor, channelHash: string, now: number) {
  return db.selectFrom('relayChannels').select('channelHash').where('channelHash', '=', channelHash).where('expiresAt', '>', now)
}

export function enrollmentQueries(db: Executor): EnrollmentStore {
  return {
    async insertEnrollmentCode(code) {
      const result = await db.insertInto('enrollmentCodes').values(code).onConflict((oc) => oc.doNothing()).executeTakeFirst()
      return affected(result) === 1
    },

    async redeemEnrollmentCode(spellingHash, now) {
      const row = await db
        .deleteFrom('enrollmentCodes')
        .where((eb) => eb.or([eb('codeHash', '=', spellingHash), eb('textHash', '=', spellingHash)]))
        .where('expiresAt', '>', now)
        .returning('userId')
        .executeTakeFirst()
      return row?.userId
    },

    async openChannel(channel) {
      await db.insertInto('relayChannels').values({ ...channel, nextSeq: 0 }).execute()
    },

    async appendToMailbox(channelHash, direction, payload, now, maxPayloads) {
      // Taking the next sequence number locks the channel row: appends to one channel queue here,
      // and the count below, a statement of its own, sees every append committed before.
      const channel = await db
        .updateTable('relayChannels')
        .set((eb) => ({ nextSeq: eb('nextSeq', '+', 1) }))
        .where('channelHash', '=', channelHash)
        .where('expiresAt', '>', now)
        .returning('nextSeq')
        .executeTakeFirst()
      if (channel === undefined) return 'no_channel'
      const appended = await db
        .insertInto('relayMessages')
        .columns(['channelHash', 'seq', 'direction', 'payload'])
        .expression((eb) =>
          eb
            .selectFrom('relayChannels')
            .select((eb) => ['channelHash', 'nextSeq', eb.val(direction).as('direction'), eb.val(storedPayload(payload)).as('payload')])
            .where('channelHash', '=', channelHash)
            .where(
              (eb) => eb.selectFrom('relayMessages').select((eb) => eb.fn.countAll().as('held')).where('channelHash', '=', channelHash).where('direction', '=', direction),
              '<',
              maxPayloads,
            ),
        )
        .executeTakeFirst()
      return affected(appended) === 1 ? 'appended' : 'full'
    },

    async drainMailbox(channelHash, direction, now) {
      const drained = await db
        .deleteFrom('relayMessages')
        .where('channelHash', '=', channelHash)
        .where('direction', '=', direction)
        .where((eb) => eb.exists(liveChannel(db, channelHash, now)))
        .returning(['seq', 'payload'])
        .execute()
      // Nothing drained: an empty mailbox, or no live channel at all.
      if (drained.length === 0) {
        if ((await liveChannel(db, channelHash, now).executeTakeFirst()) === undefined) return undefined
      }
      return drained.sort((a, b) => a.seq - b.seq).map((m) => postedPayload(m.payload))
    },

    async closeChannel(channelHash, initiatorId, now) {
      const result = await db
        .deleteFrom('relayChannels')
        .where('channelHash', '=', channelHash)
        .where('initiatorId', '=', initiatorId)
        .where('expiresAt', '>', now)
        .executeTakeFirst()
      return affected(result) === 1
    },
  }
}
