// When a commit is answered. SQLite: once an fdatasync of the WAL file that began after it has
// returned, run off the event loop and shared by the commits made meanwhile (decision 0037); a
// read outside a transaction shows nothing before that. PostgreSQL: the relay's mailbox writes
// (decisions 0025 and 0036) skip the wait for the WAL flush for themselves only; every other
// commit still waits (synchronous_commit on).
import { mkdtemp, open, rm, stat, type FileHandle } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { CamelCasePlugin, Kysely, sql, type Transaction } from 'kysely'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest'
import { createLogger } from '../../src/http/logging.ts'
import { commitWithoutFlushWait, postgresRelayMailboxes } from '../../src/storage/kysely/relay-mailbox.ts'
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

/** Whether a PostgreSQL commit made here waits for the WAL flush. */
async function waitsForDisk(on: Kysely<Tables> | Transaction<Tables>): Promise<boolean> {
  return (await sql<{ setting: string }>`select current_setting('synchronous_commit') as setting`.execute(on)).rows[0]?.setting === 'on'
}

const durably = <T>(work: (trx: Transaction<Tables>) => Promise<T>) => db.transaction().execute(work)

if (testEngine === 'sqlite')
  describe('SQLite commits: answered once an fdatasync of the WAL made after them returns (decision 0037)', () => {
    /** What the WAL's fdatasyncs did, in order; each waits for `gate` before it runs. */
    let events: string[]
    let gate: Promise<void>
    let openGate: () => void
    let spy: MockInstance<FileHandle['datasync']>

    const closeGate = () => {
      gate = new Promise((resolve) => (openGate = resolve))
    }
    const walInode = async () => (await stat(`${(database.target as { file: string }).file}-wal`)).ino

    beforeAll(async () => {
      await sql`create table scratch (n integer not null)`.execute(db)
      const handle = await open(directory, 'r')
      const prototype = Object.getPrototypeOf(handle) as FileHandle
      await handle.close()
      const datasync = prototype.datasync
      spy = vi.spyOn(prototype, 'datasync').mockImplementation(async function (this: FileHandle) {
        const wal = (await this.stat()).ino === (await walInode())
        events.push(wal ? 'sync-start' : 'sync-start (not the WAL)')
        await gate
        await datasync.call(this)
        events.push('sync-end')
      })
    })
    beforeEach(() => {
      events = []
      openGate = () => {}
      gate = Promise.resolve()
    })
    afterAll(() => spy.mockRestore())

    const rows = async () => (await sql<{ n: number }>`select n from scratch order by n`.execute(db)).rows.map((row) => row.n)

    it('answers a write outside a transaction, and a transaction, only after a sync of the WAL that began after it', async () => {
      events.push('write')
      await sql`insert into scratch (n) values (1)`.execute(db)
      events.push('answered')
      await durably(async (trx) => {
        events.push('transaction')
        await sql`insert into scratch (n) values (2)`.execute(trx)
      })
      events.push('answered')
      expect(events).toEqual(['write', 'sync-start', 'sync-end', 'answered', 'transaction', 'sync-start', 'sync-end', 'answered'])
      expect(await (await sql<{ synchronous: number }>`pragma synchronous`.execute(db)).rows[0]?.synchronous).toBe(1)
    })

    it('answers a write that returns rows (RETURNING) outside a transaction only after a sync of the WAL that began after it', async () => {
      events.push('write')
      const returned = await sql<{ n: number }>`insert into scratch (n) values (3) returning n`.execute(db)
      events.push('answered')
      await sql`delete from scratch where n = 3 returning n`.execute(db)
      events.push('answered')
      expect(returned.rows).toEqual([{ n: 3 }])
      expect(events).toEqual(['write', 'sync-start', 'sync-end', 'answered', 'sync-start', 'sync-end', 'answered'])
    })

    it('covers many concurrent commits with a few syncs (a group commit)', async () => {
      await sql`delete from scratch`.execute(db)
      events = []
      closeGate()
      const commits = Array.from({ length: 20 }, (_, n) => durably((trx) => sql`insert into scratch (n) values (${n})`.execute(trx)))
      await expect.poll(() => events.includes('sync-start')).toBe(true)
      openGate()
      await Promise.all(commits)
      const syncs = events.filter((event) => event === 'sync-start').length
      expect(syncs).toBeGreaterThanOrEqual(1)
      expect(syncs).toBeLessThanOrEqual(3)
      expect(await rows()).toEqual(Array.from({ length: 20 }, (_, n) => n))
    })

    it('shows a committed row to a read only once its sync has returned', async () => {
      closeGate()
      let written = false
      const write = sql`insert into scratch (n) values (100)`.execute(db).then(() => (written = true))
      await expect.poll(() => events.includes('sync-start')).toBe(true)
      let read: number[] | undefined
      const reading = rows().then((seen) => (read = seen))
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect([written, read]).toEqual([false, undefined])
      openGate()
      await Promise.all([write, reading])
      expect(read).toContain(100)
    })

    it('answers a read outside a transaction from what is committed, without waiting for a transaction that holds the writer', async () => {
      closeGate()
      openGate()
      let proceed = () => {}
      const held = new Promise<void>((resolve) => (proceed = resolve))
      let inserted = () => {}
      const insertedYet = new Promise<void>((resolve) => (inserted = resolve))
      const transaction = durably(async (trx) => {
        await sql`insert into scratch (n) values (200)`.execute(trx)
        inserted()
        await held
      })
      await insertedYet
      expect(await rows()).not.toContain(200)
      proceed()
      await transaction
      expect(await rows()).toContain(200)
    })

    it('checkpoints on a thread of its own once the server is busy: the database file takes the WAL’s pages, the writer does not', async () => {
      const file = (database.target as { file: string }).file
      await sql`create table padding (b blob not null)`.execute(db)
      const before = (await stat(file)).size
      // 300 commits of 8 KiB each: past the 256 that start the thread, far below the writer's own 10,000 pages.
      await Promise.all(Array.from({ length: 300 }, () => sql`insert into padding (b) values (zeroblob(8192))`.execute(db)))
      const setting = (await sql<{ walAutocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows[0]
      expect(setting?.walAutocheckpoint).toBe(10_000)
      await expect.poll(async () => (await stat(file)).size).toBeGreaterThan(before + 300 * 8192)
    })
  })

if (testEngine === 'postgres')
  describe('a PostgreSQL statement that commits without waiting for the WAL flush', () => {
    it('does so for its own transaction only: the connection’s next one waits again', async () => {
      await db.connection().execute(async (connection) => {
        const within = await sql<{
          setting: string
        }>`with cfg as (select 1 where ${commitWithoutFlushWait}) select current_setting('synchronous_commit') as setting from cfg`.execute(connection)
        expect(within.rows).toEqual([{ setting: 'off' }])
        expect(await waitsForDisk(connection)).toBe(true)
      })
    })

    it('leaves every connection of the pool durable while relay writes run beside durable transactions', async () => {
      const relay = postgresRelayMailboxes(db)
      const channelHash = 'durability-channel'
      await sql`insert into accounts (user_id, email, email_key, password_hash, created_at, session_epoch, moderation_seq) values ('u-relay', 'r@example.com', 'r@example.com', 'x', 1, 0, 0)`.execute(
        db,
      )
      await sql`insert into relay_channels (channel_hash, initiator_id, created_at, expires_at, next_seq) values (${channelHash}, 'u-relay', 1, 5000000000000, 0)`.execute(
        db,
      )
      const work = Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? durably(waitsForDisk)
          : i % 4 === 1
            ? relay.appendToMailbox(channelHash, 'to_enrollee', `p${i}`, 2, 64).then(() => 'relay')
            : relay.drainMailbox(channelHash, 'to_enrollee', 2).then(() => 'relay'),
      )
      expect(await Promise.all(work)).toEqual(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? true : 'relay')))
      expect(await Promise.all(Array.from({ length: 10 }, () => waitsForDisk(db)))).toEqual(Array.from({ length: 10 }, () => true))
    })
  })
