// A transaction told it need not be durable (the relay's mailbox writes, decision 0025) skips
// the wait for the disk for itself only: every other commit, after it or after one that
// failed, still waits (SQLite synchronous FULL, PostgreSQL synchronous_commit on).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { CamelCasePlugin, Kysely, sql, type Transaction } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/http/logging.ts'
import { openDialect, runTransaction } from '../../src/storage/kysely/storage.ts'
import type { Tables } from '../../src/storage/kysely/tables.ts'
import { freshDatabase, type TestDatabase } from '../support/database.ts'

let directory: string
let database: TestDatabase
let db: Kysely<Tables>
beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'coffer-durability-'))
  database = await freshDatabase(directory)
  db = new Kysely<Tables>({ dialect: openDialect(database.target, { waitTimeoutS: 5, log: createLogger('silent') }), plugins: [new CamelCasePlugin()] })
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

describe('a transaction that need not be durable', () => {
  it('commits without waiting for the disk, and every durable transaction after it waits', async () => {
    expect(await runTransaction(db, engine(), waitsForDisk)).toBe(true)
    expect(await runTransaction(db, engine(), waitsForDisk, { durable: false })).toBe(false)
    expect(await runTransaction(db, engine(), waitsForDisk)).toBe(true)
    expect(await runTransaction(db, engine(), waitsForDisk, { durable: true })).toBe(true)
    expect(await waitsForDisk(db)).toBe(true)
  })

  it('leaves durability as it was when its work throws', async () => {
    await expect(runTransaction(db, engine(), async () => {
      throw new Error('the work failed')
    }, { durable: false })).rejects.toThrow('the work failed')
    expect(await runTransaction(db, engine(), waitsForDisk)).toBe(true)
    expect(await waitsForDisk(db)).toBe(true)
  })

  it('leaves every concurrent durable transaction durable', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => runTransaction(db, engine(), waitsForDisk, { durable: i % 2 === 1 })))
    expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => i % 2 === 1))
  })
})
