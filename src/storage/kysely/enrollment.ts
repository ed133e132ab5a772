import type { EnrollmentStore } from '../port.ts'
import { affected, type Executor } from './executor.ts'

// A payload is any JSON string, which may hold U+0000 (PostgreSQL text refuses it) or a lone
// surrogate (UTF-8 binding on either engine turns it into U+FFFD). Stored as its JSON
// encoding, which is plain well-formed text, it comes back exactly as it was posted.
const storedPayload = (payload: string): string => JSON.stringify(payload)
const postedPayload = (stored: string): string => JSON.parse(stored) as string

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
      // Taking the next sequence number locks the channel row: appends to one channel queue here.
      const channel = await db
        .updateTable('relayChannels')
        .set((eb) => ({ nextSeq: eb('nextSeq', '+', 1) }))
        .where('channelHash', '=', channelHash)
        .where('expiresAt', '>', now)
        .returning('nextSeq')
        .executeTakeFirst()
      if (channel === undefined) return 'no_channel'
      const held = await db
        .selectFrom('relayMessages')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('channelHash', '=', channelHash)
        .where('direction', '=', direction)
        .executeTakeFirstOrThrow()
      if (Number(held.count) >= maxPayloads) return 'full'
      await db.insertInto('relayMessages').values({ channelHash, seq: channel.nextSeq, direction, payload: storedPayload(payload) }).execute()
      return 'appended'
    },

    async drainMailbox(channelHash, direction, now) {
      const channel = await db.selectFrom('relayChannels').select('channelHash').where('channelHash', '=', channelHash).where('expiresAt', '>', now).executeTakeFirst()
      if (channel === undefined) return undefined
      const drained = await db
        .deleteFrom('relayMessages')
        .where('channelHash', '=', channelHash)
        .where('direction', '=', direction)
        .returning(['seq', 'payload'])
        .execute()
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
