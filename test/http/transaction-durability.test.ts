// The relay's mailbox writes (decisions 0025 and 0036) skip the wait for the disk for
// themselves only: every other commit, after them or after one that failed, still waits (SQLite
// synchronous FULL, PostgreSQL synchronous_commit on).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { CamelCasePlugin, Kysely, sql, type Transaction } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/http/logging.ts'
import { commitWithoutFlushWait, postgresRelayMailboxes, transactionWithoutFsync } from '../../src/storage/kysely/relay-mailbox.ts'
import { openDialect, openStorage } from '../../src/storage/kysely/storage.ts'
import type { Tables } from '../../src/storage/kysely/tables.ts'
import { freshDatabase, testEngine, type TestDatabase } from '../support/database.ts'

let directory: string
let database: TestDatabase
let db: Kysely<Tables>
beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'coffer-durability-'))
  database = await freshDatabase(directory)
  const options = { waitTimeoutS: 5, log: createLogger('silent') }
  const storage = openStorage(database.target, options)
  await storage.migrate()
  await storage.close()
  db = new Kysely<Tables>({ dialect: openDialect(database.target, options), plugins: [new CamelCasePlugin()] })
})
afterAll(async () => {
  await db.destroy()
  await database.drop()
  await rm(directory, { recursive: true, force: true })
})

const engine = () => database.target.engine

/** Whether a commit made here waits for the disk. */
async function waitsForDisk(on: Kysely<Tables> | Transaction<Tables>): Promise<boolean> {
  if (engine() === 'postgres') return (await sql<{ setting: string }>`select current_setting('synchronous_commit') as setting`.execute(on)).rows[0]?.setting === 'on'
  // 2 is FULL, 1 NORMAL.
  return (await sql<{ synchronous: number }>`pragma synchronous`.execute(on)).rows[0]?.synchronous === 2
}

const durably = <T>(work: (trx: Transaction<Tables>) => Promise<T>) => db.transaction().execute(work)

if (testEngine === 'sqlite') describe('a SQLite transaction without fsync', () => {
  it('commits without waiting for the disk, and every transaction after it waits', async () => {
    expect(await durably(waitsForDisk)).toBe(true)
    expect(await transactionWithoutFsync(db, waitsForDisk)).toBe(false)
    expect(await durably(waitsForDisk)).toBe(true)
    expect(await waitsForDisk(db)).toBe(true)
  })

  it('leaves durability as it was when its work throws', async () => {
    await expect(transactionWithoutFsync(db, async () => {
      throw new Error('the work failed')
    })).rejects.toThrow('the work failed')
    expect(await durably(waitsForDisk)).toBe(true)
    expect(await waitsForDisk(db)).toBe(true)
  })

  it('leaves every concurrent transaction durable', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 1 ? durably(waitsForDisk) : transactionWithoutFsync(db, waitsForDisk))))
    expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => i % 2 === 1))
  })
})

if (testEngine === 'postgres') describe('a PostgreSQL statement that commits without waiting for the WAL flush', () => {
  it('does so for its own transaction only: the connection’s next one waits again', async () => {
    await db.connection().execute(async (connection) => {
      const within = await sql<{ setting: string }>`with cfg as (select 1 where ${commitWithoutFlushWait}) select current_setting('synchronous_commit') as setting from cfg`.execute(connection)
      expect(within.rows).toEqual([{ setting: 'off' }])
      expect(await waitsForDisk(connection)).toBe(true)
    })
  })

  it('leaves every connection of the pool durable while relay writes run beside durable transactions', async () => {
    const relay = postgresRelayMailboxes(db)
    const channelHash = 'durability-channel'
    await sql`insert into accounts (user_id, email, email_key, password_hash, created_at, session_epoch, moderation_seq) values ('u-relay', 'r@example.com', 'r@example.com', 'x', 1, 0, 0)`.execute(db)
    await sql`insert into relay_channels (channel_hash, initiator_id, created_at, expires_at, next_seq) values (${channelHash}, 'u-relay', 1, 5000000000000, 0)`.execute(db)
    const work = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? durably(waitsForDisk) : i % 4 === 1 ? relay.appendToMailbox(channelHash, 'to_enrollee', `p${i}`, 2, 64).then(() => 'relay') : relay.drainMailbox(channelHash, 'to_enrollee', 2).then(() => 'relay'),
    )
    expect(await Promise.all(work)).toEqual(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? true : 'relay')))
    expect(await Promise.all(Array.from({ length: 10 }, () => waitsForDisk(db)))).toEqual(Array.from({ length: 10 }, () => true))
  })
})
