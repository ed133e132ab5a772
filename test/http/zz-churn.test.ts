// probe
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { expect, it } from 'vitest'
import { openStorage } from '/work/main/src/storage/kysely/storage.ts'

it('migrates while other schemas come and go', async () => {
  const url = process.env.TEST_DATABASE_URL!
  const admin = new pg.Client({ connectionString: url }); await admin.connect()
  let stop = false
  const churn = (async () => { while (!stop) { const s = `churn_${randomBytes(4).toString('hex')}`; await admin.query(`create schema ${s}; create table ${s}.a (x int); create table ${s}.b (y serial)`); await admin.query(`drop schema ${s} cascade`) } })()
  const failures: string[] = []
  for (let i = 0; i < 15; i++) {
    const schema = `mig_${randomBytes(4).toString('hex')}`
    await admin.query(`create schema ${schema}`)
    const storage = openStorage({ engine: 'postgres', url, searchPath: schema })
    try { await storage.migrate() } catch (e) { failures.push(String(e).slice(0, 120)) } finally { await storage.close(); await admin.query(`drop schema ${schema} cascade`) }
  }
  stop = true; await churn; await admin.end()
  expect(failures).toEqual([])
}, 120_000)
