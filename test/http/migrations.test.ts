// Upgrading a database keeps what guards it: migration 0007 carries wrong-password counts and
// locks (of accounts and of unknown emails) and open redeem windows into their new tables;
// migration 0011 rebuilds the feed (on SQLite) with its rows and keys; migration 0018 counts
// the payloads live mailboxes held; a
// migration that fails half-way leaves the database as it was, on either engine; and on
// PostgreSQL, other schemas of the database coming and going never fail a migration.
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { CamelCasePlugin, Kysely, Migrator, sql, type MigrationProvider } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/http/logging.ts'
import { migrationProvider } from '../../src/storage/kysely/migrations/index.ts'
import pg from 'pg'
import { openDialect, openStorage } from '../../src/storage/kysely/storage.ts'
import { freshDatabase, readRows, testEngine, writeRows, type TestDatabase } from '../support/database.ts'

const STORAGE_OPTIONS = { waitTimeoutS: 5, log: createLogger('silent') }

let directory: string
let database: TestDatabase
beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'coffer-migrations-'))
  database = await freshDatabase(directory)
})
afterAll(async () => {
  await database.drop()
  await rm(directory, { recursive: true, force: true })
})

/** A Kysely on the test database, as the storage opens it. */
function connect(): Kysely<unknown> {
  return new Kysely<unknown>({ dialect: openDialect(database.target, STORAGE_OPTIONS), plugins: [new CamelCasePlugin()] })
}

function migrator(db: Kysely<unknown>, provider: MigrationProvider): Migrator {
  const { target } = database
  const schema = target.engine === 'postgres' ? target.searchPath : undefined
  return new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) })
}

/** Brings the database to the migration named, as a server of that release would have, with rows of that release. */
async function migrateTo(name: string): Promise<void> {
  const db = connect()
  try {
    const { error } = await migrator(db, migrationProvider(database.target.engine)).migrateTo(name)
    if (error) throw error
    await sql`insert into accounts (user_id, email, email_key, password_hash, created_at, failed_password_count, locked_until, session_epoch, moderation_seq)
      values ('u-locked', 'Locked@Example.com', 'locked@example.com', 'x', 1, 0, 4000000000000, 0, 0),
             ('u-counted', 'counted@example.com', 'counted@example.com', 'x', 1, 3, null, 0, 0),
             ('u-clean', 'clean@example.com', 'clean@example.com', 'x', 1, 0, null, 0, 0)`.execute(db)
    await sql`insert into unknown_sign_ins (email_hash, failures, last_failed_at) values (${sha256('ghost@example.com')}, 2, 1700000000000)`.execute(db)
    await sql`insert into redeem_throttle (client_address, window_started_at, failures) values ('198.51.100.9', 1700000000000, 4)`.execute(db)
  } finally {
    await db.destroy()
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

describe('a migration that fails half-way', () => {
  it('leaves nothing of itself behind', async () => {
    const db = connect()
    try {
      const failing: MigrationProvider = {
        getMigrations: async () => ({
          '0001-half': {
            up: async (trx: Kysely<unknown>) => {
              await trx.schema.createTable('half_done').addColumn('id', 'text').execute()
              await sql`insert into half_done (id) values ('written')`.execute(trx)
              throw new Error('fails after its first statements')
            },
          },
        }),
      }
      const { error } = await migrator(db, failing).migrateToLatest()
      expect(String(error)).toContain('fails after its first statements')
      const tables =
        database.target.engine === 'sqlite'
          ? await readRows(database.target, "select name from sqlite_master where name = 'half_done'")
          : await readRows(database.target, "select table_name as name from information_schema.tables where table_name = 'half_done'")
      expect(tables).toEqual([])
    } finally {
      await db.destroy()
    }
  })
})

describe('migration 0007', () => {
  it('moves counts, locks and redeem windows, and drops the old columns and tables', async () => {
    await migrateTo('0006-unknown-sign-ins')
    const storage = openStorage(database.target, STORAGE_OPTIONS)
    try {
      await storage.migrate()
      expect(await storage.findPasswordLock(sha256('locked@example.com'))).toBe(4_000_000_000_000)
      expect(await storage.findPasswordLock(sha256('counted@example.com'))).toBeNull()
      expect(await storage.findAttemptBudget('redeem', '198.51.100.9')).toEqual({ windowEndsAt: 1_700_000_600_000, failures: 4 })
    } finally {
      await storage.close()
    }
    const failures = await readRows(database.target, 'select subject, failures, locked_until from password_failures order by failures')
    expect(failures.map((row) => [row.subject, Number(row.failures), row.locked_until === null ? null : Number(row.locked_until)])).toEqual([
      [sha256('locked@example.com'), 0, 4_000_000_000_000],
      [sha256('ghost@example.com'), 2, null],
      [sha256('counted@example.com'), 3, null],
    ])
    const accountColumns = (await readRows(database.target, 'select * from accounts')).flatMap((row) => Object.keys(row))
    expect(accountColumns).not.toContain('failed_password_count')
    expect(accountColumns).not.toContain('locked_until')
  })
})

/**
 * A fresh database brought to the migration named, `seed` run on it (rows of that release), then
 * opened as the current release opens it (migrating to the latest) for `check`.
 */
async function upgradedFrom(
  name: string,
  seed: (db: Kysely<unknown>) => Promise<void>,
  check: (storage: ReturnType<typeof openStorage>, target: TestDatabase['target']) => Promise<void>,
): Promise<void> {
  // A folder of its own: on SQLite the database is a file named by its folder.
  const fresh = await freshDatabase(await mkdtemp(path.join(directory, 'upgrade-')))
  try {
    const db = new Kysely<unknown>({ dialect: openDialect(fresh.target, STORAGE_OPTIONS), plugins: [new CamelCasePlugin()] })
    try {
      const schema = fresh.target.engine === 'postgres' ? fresh.target.searchPath : undefined
      const { error } = await new Migrator({
        db,
        provider: migrationProvider(fresh.target.engine),
        ...(schema ? { migrationTableSchema: schema } : {}),
      }).migrateTo(name)
      if (error) throw error
      await seed(db)
    } finally {
      await db.destroy()
    }
    const storage = openStorage(fresh.target, STORAGE_OPTIONS)
    try {
      await storage.migrate()
      await check(storage, fresh.target)
    } finally {
      await storage.close()
    }
  } finally {
    await fresh.drop()
  }
}

describe('migration 0010', () => {
  it('adds holds on file removal beside the reclaim queue, which it leaves as it was', async () => {
    await upgradedFrom(
      '0009-blob-reclaims',
      async (db) => {
        await sql`insert into blob_reclaims (hash, generation) values (${'c'.repeat(64)}, 3)`.execute(db)
      },
      async (storage) => {
        expect(await storage.queuedReclaims('', 10)).toEqual([{ hash: 'c'.repeat(64), generation: 3 }])
        expect(await storage.gcHeld(0)).toBe(false)
        await storage.takeGcHold({ holdId: 'h', reason: 'backup', createdAt: 1, expiresAt: 5_000_000_000_000 })
        expect(await storage.gcHeld(4_999_999_999_999)).toBe(true)
        expect(await storage.gcHeld(5_000_000_000_000)).toBe(false)
      },
    )
  })
})

describe('migration 0011', () => {
  it('keeps every feed entry and asset, lets a delete record no upload session, and keeps the feed’s keys', async () => {
    const [albumId, assetId, head] = [randomUUID(), randomUUID(), 'd'.repeat(64)]
    const op = {
      albumId,
      syncSeq: 1,
      manifestHash: head,
      assetId,
      action: 'create' as const,
      manifestCbor: Buffer.from([0xa0]),
      metadataBlobHash: 'e'.repeat(64),
      uploadId: 'upload-1',
      appliedAt: 1_700_000_000_000,
    }
    await upgradedFrom(
      '0010-gc-holds',
      async (db) => {
        await sql`insert into accounts (user_id, email, email_key, password_hash, created_at, session_epoch, moderation_seq) values ('u-1', 'a@example.com', 'a@example.com', 'x', 1, 0, 0)`.execute(
          db,
        )
        await sql`insert into albums (album_id, owner_id, protocol_version, created_at, next_sync_seq) values (${albumId}, 'u-1', '2026-06-01', 1, 1)`.execute(
          db,
        )
        await sql`insert into assets (asset_id, album_id, owner_id, chain_head, original_hash, retention_until, created_at, updated_at) values (${assetId}, ${albumId}, 'u-1', ${head}, ${'f'.repeat(64)}, null, 1, 1)`.execute(
          db,
        )
        await sql`insert into album_ops (album_id, sync_seq, manifest_hash, asset_id, action, manifest_cbor, metadata_blob_hash, upload_id, applied_at)
          values (${albumId}, 1, ${head}, ${assetId}, 'create', ${op.manifestCbor}, ${op.metadataBlobHash}, 'upload-1', ${op.appliedAt})`.execute(db)
      },
      async (storage, target) => {
        expect(await storage.findAppliedOp(albumId, head)).toEqual(op)
        expect(await storage.findAsset(assetId)).toMatchObject({ chainHead: head, deletedAt: null })
        const deletion = { ...op, syncSeq: 2, manifestHash: '1'.repeat(64), action: 'delete' as const, metadataBlobHash: null, uploadId: null }
        await storage.transaction(async (tx) => {
          await tx.insertAppliedOp(deletion)
          await tx.endAsset(assetId, deletion.manifestHash, 5)
        })
        expect(await storage.feed(albumId, 0, 10)).toEqual([op, deletion])
        expect(await storage.findAsset(assetId)).toMatchObject({ chainHead: deletion.manifestHash, deletedAt: 5 })
        // The keys came along: one manifest per album, one entry per position; the album's entries go with it.
        await expect(storage.insertAppliedOp({ ...op, syncSeq: 3 })).rejects.toThrow()
        await expect(storage.insertAppliedOp({ ...op, manifestHash: '2'.repeat(64) })).rejects.toThrow()
        await writeRows(target, 'delete from albums where album_id = ?', [albumId])
        expect(await readRows(target, 'select sync_seq from album_ops')).toEqual([])
      },
    )
  })
})

describe('migration 0018', () => {
  it('counts the payloads each mailbox of a live channel held, so that its bound still holds', async () => {
    const [full, partial] = ['f'.repeat(64), 'p'.repeat(64)]
    await upgradedFrom(
      '0017-upload-parts',
      async (db) => {
        await sql`insert into accounts (user_id, email, email_key, password_hash, created_at, session_epoch, moderation_seq) values ('u-1', 'a@example.com', 'a@example.com', 'x', 1, 0, 0)`.execute(
          db,
        )
        await sql`insert into relay_channels (channel_hash, initiator_id, created_at, expires_at, next_seq) values (${full}, 'u-1', 1, 5000000000000, 64), (${partial}, 'u-1', 1, 5000000000000, 3)`.execute(
          db,
        )
        for (let seq = 1; seq <= 64; seq++) {
          await sql`insert into relay_messages (channel_hash, seq, direction, payload) values (${full}, ${seq}, 'to_enrollee', ${JSON.stringify(`p${seq}`)})`.execute(
            db,
          )
        }
        for (const [seq, direction] of [
          [1, 'to_initiator'],
          [2, 'to_enrollee'],
          [3, 'to_initiator'],
        ] as const) {
          await sql`insert into relay_messages (channel_hash, seq, direction, payload) values (${partial}, ${seq}, ${direction}, ${JSON.stringify(`q${seq}`)})`.execute(
            db,
          )
        }
      },
      async (storage) => {
        const now = 2_000_000_000_000
        expect(await storage.appendToMailbox(full, 'to_enrollee', 'one more', now, 64)).toBe('full')
        expect(await storage.appendToMailbox(full, 'to_initiator', 'other side', now, 64)).toBe('appended')
        expect(await storage.appendToMailbox(partial, 'to_initiator', 'q4', now, 2)).toBe('full')
        expect(await storage.appendToMailbox(partial, 'to_enrollee', 'q5', now, 2)).toBe('appended')
        expect(await storage.drainMailbox(partial, 'to_initiator', now)).toEqual(['q1', 'q3'])
        // Drained, the mailbox takes payloads again up to its bound.
        expect(await storage.appendToMailbox(partial, 'to_initiator', 'q6', now, 2)).toBe('appended')
        expect((await storage.drainMailbox(full, 'to_enrollee', now))?.length).toBe(64)
        expect(await storage.appendToMailbox(full, 'to_enrollee', 'room again', now, 64)).toBe('appended')
      },
    )
  })
})

// Kysely's own PostgreSQL introspector read every schema of the database by name, so a schema
// dropped meanwhile failed start-up ("schema ... does not exist"): a tenant sharing the
// database, or another test file finishing.
if (testEngine === 'postgres')
  describe('migrating beside other schemas of the database', () => {
    it('never fails while other schemas are created and dropped', async () => {
      const url = process.env.TEST_DATABASE_URL!
      const admin = new pg.Client({ connectionString: url })
      await admin.connect()
      let churning = true
      const churn = (async () => {
        while (churning) {
          const other = `churn_${randomBytes(4).toString('hex')}`
          await admin.query(`create schema ${other}; create table ${other}.a (x int); create table ${other}.b (y serial)`)
          await admin.query(`drop schema ${other} cascade`)
        }
      })()
      const failures: string[] = []
      try {
        for (let i = 0; i < 6; i++) {
          const schema = `migrating_${randomBytes(4).toString('hex')}`
          await admin.query(`create schema ${schema}`)
          const storage = openStorage({ engine: 'postgres', url, searchPath: schema }, STORAGE_OPTIONS)
          try {
            await storage.migrate()
          } catch (error) {
            failures.push(String(error))
          } finally {
            await storage.close()
            await admin.query(`drop schema ${schema} cascade`)
          }
        }
      } finally {
        churning = false
        await churn
        await admin.end()
      }
      expect(failures).toEqual([])
    }, 60_000)
  })
