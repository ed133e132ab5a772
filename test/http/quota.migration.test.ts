// Migration 0008 counts the blobs every account stored before it, each blob once, so that the
// storage quota holds for data uploaded before the quota existed.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { CamelCasePlugin, Kysely, Migrator } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createLogger } from '../../src/http/logging.ts'
import { migrationProvider } from '../../src/storage/kysely/migrations/index.ts'
import { openDialect } from '../../src/storage/kysely/storage.ts'
import type { Tables } from '../../src/storage/kysely/tables.ts'
import { freshDatabase, readRows, type TestDatabase } from '../support/database.ts'

let directory: string
let database: TestDatabase
let db: Kysely<Tables>
beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'coffer-migration-'))
  database = await freshDatabase(directory)
  const target = database.target
  db = new Kysely<Tables>({
    dialect: openDialect(target, { waitTimeoutS: 5, log: createLogger('silent') }),
    plugins: [new CamelCasePlugin()],
  })
})
afterAll(async () => {
  await db.destroy()
  await database.drop()
  await rm(directory, { recursive: true, force: true })
})

it('sets each account’s stored_bytes to the sum of its blob rows, and gives none to an account without blobs', async () => {
  const target = database.target
  const migrator = new Migrator({
    db,
    provider: migrationProvider(target.engine),
    ...(target.engine === 'postgres' && target.searchPath ? { migrationTableSchema: target.searchPath } : {}),
  })
  expect((await migrator.migrateTo('0006-unknown-sign-ins')).error).toBeUndefined()
  const account = (userId: string) => ({
    userId,
    email: `${userId}@example.test`,
    emailKey: `${userId}@example.test`,
    passwordHash: 'x',
    createdAt: 0,
    failedPasswordCount: 0,
    sessionEpoch: 0,
    moderationSeq: 0,
  })
  await db
    .insertInto('accounts')
    .values([account('ada'), account('bob'), account('cy')])
    .execute()
  // Sizes past 2^32, as a real library has, and one hash both ada and bob hold.
  const blob = (ownerId: string, hash: string, size: number) => ({ ownerId, hash, size, storedAt: 0 })
  await db
    .insertInto('blobs')
    .values([blob('ada', 'a'.repeat(64), 5_000_000_000), blob('ada', 'b'.repeat(64), 300), blob('bob', 'a'.repeat(64), 5_000_000_000)])
    .execute()

  expect((await migrator.migrateToLatest()).error).toBeUndefined()
  const rows = await readRows(target, 'select user_id, stored_bytes from account_storage order by user_id')
  expect(rows.map((row) => [row.user_id, Number(row.stored_bytes)])).toEqual([
    ['ada', 5_000_000_300],
    ['bob', 5_000_000_000],
  ])
})
