// Fresh PostgreSQL schemas for servers under test (the server pins its pool to one through
// `-c search_path=...`, as the tests do).
import pg from 'pg'

async function execute(url: string, sqlText: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    await client.query(sqlText)
  } finally {
    await client.end()
  }
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/

export async function createSchema(url: string, schema: string): Promise<void> {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`not a plain schema name: ${schema}`)
  await execute(url, `create schema ${schema}`)
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`not a plain schema name: ${schema}`)
  await execute(url, `drop schema if exists ${schema} cascade`)
}
