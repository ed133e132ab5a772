// Frozen: each relay channel counts the payloads its two mailboxes hold (decision 0036), so
// that an append checks the mailbox bound on the channel row it locks anyway: on PostgreSQL one
// statement, whose snapshot could not see the payloads appended by the writers it waited for.
import { sql } from 'kysely'
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  for (const column of ['held_to_initiator', 'held_to_enrollee'] as const) {
    await db.schema
      .alterTable('relay_channels')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
  }
  await sql`
    update relay_channels set
      held_to_initiator = (select count(*) from relay_messages m where m.channel_hash = relay_channels.channel_hash and m.direction = 'to_initiator'),
      held_to_enrollee = (select count(*) from relay_messages m where m.channel_hash = relay_channels.channel_hash and m.direction = 'to_enrollee')
  `.execute(db)
}
