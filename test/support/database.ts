// Each test file gets its own database: a fresh SQLite file, or a fresh PostgreSQL schema
// when the suite runs on PostgreSQL (COFFER_TEST_ENGINE=postgres, TEST_DATABASE_URL).
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import pg from 'pg'
import type { DatabaseTarget } from '../../src/storage/kysely/storage.ts'

export const testEngine: 'sqlite' | 'postgres' = process.env.COFFER_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'

export interface TestDatabase {
  readonly target: DatabaseTarget
  drop(): Promise<void>
}

async function onPostgres(sqlText: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl() })
  await client.connect()
  try {
    await client.query(sqlText)
  } finally {
    await client.end()
  }
}

function postgresUrl(): string {
  const url = process.env.TEST_DATABASE_URL
  if (!url) throw new Error('COFFER_TEST_ENGINE=postgres needs TEST_DATABASE_URL')
  return url
}

/** Where the test PostgreSQL listens (a fault test puts a proxy in front of it). */
export function postgresAddress(): { host: string; port: number } {
  const url = new URL(postgresUrl())
  return { host: url.hostname, port: Number(url.port || 5432) }
}

export async function freshDatabase(directory: string): Promise<TestDatabase> {
  if (testEngine === 'sqlite') {
    return { target: { engine: 'sqlite', file: path.join(directory, 'coffer.db') }, drop: async () => {} }
  }
  const schema = `test_${randomBytes(6).toString('hex')}`
  await onPostgres(`create schema ${schema}`)
  return {
    target: { engine: 'postgres', url: postgresUrl(), searchPath: schema },
    drop: () => onPostgres(`drop schema ${schema} cascade`),
  }
}

/**
 * Reads a test server's database over a connection of its own, as an operator's SQL shell
 * would: for what no operation shows (how many rows a rejected write left, what a row holds).
 * Table names come from the test itself, never from a request.
 */
export async function readRows(target: DatabaseTarget, sqlText: string): Promise<Record<string, unknown>[]> {
  const [rows] = await readEach(target, [sqlText])
  return rows ?? []
}

/** Several reads over one connection, in order. */
async function readEach(target: DatabaseTarget, sqlTexts: readonly string[]): Promise<Record<string, unknown>[][]> {
  const results: Record<string, unknown>[][] = []
  if (target.engine === 'sqlite') {
    const db = new DatabaseSync(target.file, { readOnly: true })
    try {
      for (const sqlText of sqlTexts) results.push(db.prepare(sqlText).all() as Record<string, unknown>[])
    } finally {
      db.close()
    }
    return results
  }
  const client = new pg.Client({ connectionString: target.url, ...(target.searchPath ? { options: `-c search_path=${target.searchPath}` } : {}) })
  await client.connect()
  try {
    for (const sqlText of sqlTexts) results.push((await client.query(sqlText)).rows as Record<string, unknown>[])
  } finally {
    await client.end()
  }
  return results
}

/** The number of rows in each of `tables`. */
export async function countRows(target: DatabaseTarget, tables: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const table of tables) counts[table] = Number((await readRows(target, `select count(*) as n from ${table}`))[0]?.n)
  return counts
}

/** Every table of the database (listing tables is the one statement whose SQL differs). */
export async function tableNames(target: DatabaseTarget): Promise<string[]> {
  const rows =
    target.engine === 'sqlite'
      ? await readRows(target, "select name as table_name from sqlite_master where type = 'table'")
      : await readRows(target, "select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'")
  return rows.map((row) => String(row.table_name)).sort()
}

/** Every row of every table, each as JSON, sorted per table: equal snapshots mean nothing was written. */
export async function everyRow(target: DatabaseTarget): Promise<Record<string, string[]>> {
  const tables = await tableNames(target)
  const contents = await readEach(
    target,
    tables.map((table) => `select * from "${table}"`),
  )
  return Object.fromEntries(tables.map((table, i) => [table, (contents[i] ?? []).map(rowJson).sort()]))
}

/**
 * A row as JSON, its bytes as hex: JSON spells a Uint8Array (or a Buffer) out byte by byte as an
 * object, eight times longer and as much slower to build and compare (a receipt's signature, a
 * manifest), which took most of the time of a suite's later snapshots.
 */
function rowJson(row: Record<string, unknown>): string {
  return JSON.stringify(
    Object.fromEntries(
      Object.entries(row).map(([column, value]) => [
        column,
        value instanceof Uint8Array ? { hex: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex') } : value,
      ]),
    ),
  )
}

/**
 * Writes to a test server's database behind its back, as damage or an operator's SQL shell
 * would (fsck tests). `?` placeholders on both engines.
 */
export async function writeRows(target: DatabaseTarget, sqlText: string, parameters: readonly unknown[] = []): Promise<void> {
  if (target.engine === 'sqlite') {
    const db = new DatabaseSync(target.file, { timeout: 5_000 })
    try {
      db.prepare(sqlText).run(...(parameters as never[]))
    } finally {
      db.close()
    }
    return
  }
  let n = 0
  const client = new pg.Client({ connectionString: target.url, ...(target.searchPath ? { options: `-c search_path=${target.searchPath}` } : {}) })
  await client.connect()
  try {
    await client.query(
      sqlText.replace(/\?/g, () => `$${++n}`),
      [...parameters],
    )
  } finally {
    await client.end()
  }
}
