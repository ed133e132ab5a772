// Each test file gets its own database: a fresh SQLite file, or a fresh PostgreSQL schema
// when the suite runs on PostgreSQL (COFFER_TEST_ENGINE=postgres, TEST_DATABASE_URL).
import { randomBytes } from 'node:crypto'
import path from 'node:path'
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
