// Only failures to reach the database or to keep a connection to it count as connection
// faults (a 503 that may succeed when tried again); a wrong query or a refused write never does.
import { mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { isConnectionFault } from './connection-faults.ts'

function postgresError(code: string, message: string): pg.DatabaseError {
  const error = new pg.DatabaseError(message, message.length, 'error')
  error.code = code
  return error
}

function thrownBy(work: () => unknown): unknown {
  try {
    work()
  } catch (error) {
    return error
  }
  throw new Error('nothing was thrown')
}

describe('isConnectionFault', () => {
  it.each([
    ['57P01', 'terminating connection due to administrator command', true],
    ['57P02', 'terminating connection because of crash of another server process', true],
    ['57P03', 'the database system is starting up', true],
    ['08006', 'connection failure', true],
    ['08P01', 'invalid startup packet layout', true],
    ['53300', 'sorry, too many clients already', true],
    ['23505', 'duplicate key value violates unique constraint', false],
    ['42P01', 'relation "accounts" does not exist', false],
    ['40001', 'could not serialize access due to concurrent update', false],
    ['53100', 'could not extend file: No space left on device', false],
  ])('PostgreSQL %s (%s): %s', (code, message, expected) => {
    expect(isConnectionFault(postgresError(code, message))).toBe(expected)
  })

  it.each([
    ['Connection terminated unexpectedly', true],
    ['Connection terminated due to connection timeout', true],
    ['timeout exceeded when trying to connect', true],
    ['Client has encountered a connection error and is not queryable', true],
    // The storage closing its own pool: a fault of this process, not of the database.
    ['Connection terminated', false],
    ['Cannot use a pool after calling end on the pool', false],
  ])('pg without a code: "%s": %s', (message, expected) => {
    expect(isConnectionFault(new Error(message))).toBe(expected)
  })

  it('counts a refused connection to PostgreSQL', async () => {
    const closed = net.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as net.AddressInfo
    await new Promise((resolve) => closed.close(resolve))
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'nobody', database: 'nothing' })
    const error = await client.connect().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect((error as NodeJS.ErrnoException).code).toBe('ECONNREFUSED')
    expect(isConnectionFault(error)).toBe(true)
  })

  it('counts SQLite I/O errors (node:sqlite reports them so; no test can make the disk fail)', () => {
    const ioError = (errcode: number) => Object.assign(new Error('disk I/O error'), { code: 'ERR_SQLITE_ERROR', errcode, errstr: 'disk I/O error' })
    expect(isConnectionFault(ioError(10))).toBe(true) // SQLITE_IOERR
    expect(isConnectionFault(ioError(778))).toBe(true) // SQLITE_IOERR_WRITE
  })

  it('counts SQLite busy past its timeout, and not a constraint or a syntax error', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'coffer-faults-'))
    const file = path.join(directory, 'busy.db')
    const holder = new DatabaseSync(file)
    const waiter = new DatabaseSync(file, { timeout: 0 })
    try {
      holder.exec('PRAGMA journal_mode = WAL; create table t (x integer unique); insert into t values (1)')
      holder.exec('begin immediate')
      expect(isConnectionFault(thrownBy(() => waiter.exec('begin immediate')))).toBe(true)
      holder.exec('rollback')
      expect(isConnectionFault(thrownBy(() => waiter.exec('insert into t values (1)')))).toBe(false)
      expect(isConnectionFault(thrownBy(() => waiter.exec('insert into nowhere values (1)')))).toBe(false)
    } finally {
      waiter.close()
      holder.close()
      await rm(directory, { recursive: true, force: true })
    }
  })
})
