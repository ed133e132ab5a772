// While the database cannot be reached, or a connection is cut in the middle of a request,
// every operation answers 503 error.unavailable with Retry-After (never a 500, never half a
// write), and the server serves again by itself once the database is back. On PostgreSQL a
// real TCP proxy stands between the server and the database and the test breaks it, and
// PostgreSQL itself terminates backends; on SQLite another connection holds the write lock.
import { randomBytes } from 'node:crypto'
import { DatabaseSync } from 'node:sqlite'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseTarget } from '../../src/storage/kysely/storage.ts'
import { PASSWORD, raw, registered, uniqueEmail, type Member } from '../support/actors.ts'
import { album, uploader } from '../support/albums.ts'
import { blobFiles, deleteRaw, deletionFor, openBundle, opsRaw, writeFor } from '../support/bundles.ts'
import { everyRow, postgresAddress, readRows, testEngine } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts'

/** Short, so that a request that has to wait for the database gives up within the test's time. */
const WAIT_TIMEOUT_S = 1

function login(server: TestServer, email: string, requestId = 'fault') {
  return raw(server, 'POST', '/v1/auth/login', {
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify({ email, password: PASSWORD }),
  })
}

function register(server: TestServer, email: string) {
  return raw(server, 'POST', '/v1/auth/register', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) })
}

function profile(server: TestServer, member: Member) {
  return raw(server, 'GET', '/v1/profile', { headers: { authorization: `Bearer ${member.client.tokens?.access_token}` } })
}

function expectUnavailable(response: Awaited<ReturnType<typeof raw>>, path: string): void {
  expect(response.status, response.text).toBe(503)
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(response.headers.get('retry-after')).toBe('5')
  expect(response.json).toEqual({
    type: '/problems/unavailable',
    title: 'Service unavailable',
    status: 503,
    detail: expect.any(String),
    instance: path,
    code: 'error.unavailable',
  })
}

type LogLine = { level: number; msg: string; request_id?: string } & Record<string, unknown>

function logLines(server: TestServer): LogLine[] {
  return server.logs.map((line) => JSON.parse(line) as LogLine)
}

function lostConnections(server: TestServer): LogLine[] {
  return logLines(server).filter((l) => l.msg === 'database connection lost')
}

/** Waits until `count` lost connections are logged in all. */
async function untilLost(server: TestServer, count: number): Promise<LogLine[]> {
  const deadline = Date.now() + 5000
  for (;;) {
    const lines = lostConnections(server)
    if (lines.length >= count) return lines
    if (Date.now() > deadline) throw new Error(`${lines.length} of ${count} lost connections logged; logs:\n${server.logs.join('\n')}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

if (testEngine === 'postgres')
  describe('PostgreSQL behind a proxy the test breaks', () => {
    // Names this server's connections in pg_stat_activity, apart from every other test's.
    const applicationName = `coffer_faults_${randomBytes(6).toString('hex')}`
    let proxy: TcpProxy
    let server: TestServer
    let member: Member

    const throughProxy = (target: DatabaseTarget): DatabaseTarget => {
      if (target.engine !== 'postgres') throw new Error('the proxy stands in front of PostgreSQL')
      const url = new URL(proxy.route(target.url))
      url.searchParams.set('application_name', applicationName)
      return { ...target, url: url.toString() }
    }

    beforeAll(async () => {
      proxy = await startTcpProxy(postgresAddress())
      server = await startServer({ DATABASE_WAIT_TIMEOUT_S: String(WAIT_TIMEOUT_S) }, { reach: throughProxy })
      member = await registered(server)
    })
    afterAll(async () => {
      await server?.close()
      await proxy?.close()
    })
    afterEach(() => proxy.setMode('forward'))

    it('logs a connection PostgreSQL terminates while idle, drops it, and serves the next request', async () => {
      expect((await profile(server, member)).status).toBe(200)
      const terminated = await readRows(
        server.database,
        `select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = '${applicationName}'`,
      )
      expect(terminated.length).toBeGreaterThan(0)
      expect(terminated.every((row) => row.done === true)).toBe(true)
      const [line] = await untilLost(server, terminated.length)
      // The driver's words, and nothing of the connection (its configuration hangs on the error).
      expect(line).toEqual({
        level: 40,
        time: expect.any(Number),
        pid: process.pid,
        hostname: expect.any(String),
        cause: 'terminating connection due to administrator command',
        msg: 'database connection lost',
      })
      expect((await profile(server, member)).status).toBe(200)
      expect((await login(server, member.email)).status).toBe(200)
    })

    it('answers 503 with Retry-After while the database refuses connections, and serves again once it accepts them', async () => {
      const newcomer = uniqueEmail('outage')
      proxy.setMode('refuse')
      proxy.cut()
      expectUnavailable(await login(server, member.email, 'outage-login'), '/v1/auth/login')
      expectUnavailable(await register(server, newcomer), '/v1/auth/register')
      expectUnavailable(await profile(server, member), '/v1/profile')
      expectUnavailable(await raw(server, 'GET', '/readyz'), '/readyz')
      expect((await raw(server, 'GET', '/healthz')).status).toBe(200)
      const warning = logLines(server).find((l) => l.request_id === 'outage-login' && l.msg === 'database unavailable')
      expect(warning).toMatchObject({ level: 40, code: 'error.unavailable', cause: expect.any(String) })
      expect(await readRows(server.database, `select user_id from accounts where email_key = '${newcomer}'`)).toEqual([])

      proxy.setMode('forward')
      expect((await login(server, member.email)).status).toBe(200)
      expect((await register(server, newcomer)).status).toBe(200)
      expect((await profile(server, member)).status).toBe(200)
      expect((await raw(server, 'GET', '/readyz')).status).toBe(200)
    })

    it('gives up on a connection that never answers within DATABASE_WAIT_TIMEOUT_S, more requests than the pool holds included', async () => {
      proxy.setMode('hold')
      proxy.cut()
      const started = Date.now()
      // Twelve: ten wait for new connections, two for a free one of the pool's ten.
      const answers = await Promise.all(Array.from({ length: 12 }, () => login(server, member.email)))
      for (const answer of answers) expectUnavailable(answer, '/v1/auth/login')
      expect(Date.now() - started).toBeLessThan(WAIT_TIMEOUT_S * 1000 + 2000)

      proxy.setMode('forward')
      expect((await login(server, member.email)).status).toBe(200)
    })

    it('leaves nothing of a register cut inside its transaction, and the same register succeeds afterwards', async () => {
      const email = uniqueEmail('cut')
      const before = await everyRow(server.database)
      // The account row is written; the session row, in the same transaction, never arrives.
      const lost = lostConnections(server).length
      const cutting = proxy.cutWhenSent('insert into "sessions"')
      expectUnavailable(await register(server, email), '/v1/auth/register')
      // Each connection cut is logged once, idle ones and the one the register was using alike.
      await untilLost(server, lost + (await cutting))
      expect(await everyRow(server.database)).toEqual(before)

      expect((await register(server, email)).status).toBe(200)
      const sessions = await readRows(server.database, `select session_id from sessions join accounts using (user_id) where email_key = '${email}'`)
      expect(sessions).toHaveLength(1)
    })

    it('leaves nothing of a lifecycle write cut inside its transaction, and applies it once when it is sent again', async () => {
      const writer = await uploader(server)
      const albumId = await album(writer)
      const bundle = await openBundle(writer, albumId)
      const write = await writeFor(writer, bundle)
      const before = { rows: await everyRow(server.database), files: await blobFiles(server) }
      // Asset, bundle, feed entry and closed session are written; the receipts, last, never arrive.
      const lost = lostConnections(server).length
      const cutting = proxy.cutWhenSent('insert into "receipts"')
      expectUnavailable(await opsRaw(server, writer, albumId, write.request), `/v1/albums/${albumId}/ops`)
      await untilLost(server, lost + (await cutting))
      expect({ rows: await everyRow(server.database), files: await blobFiles(server) }).toEqual(before)

      const applied = await opsRaw(server, writer, albumId, write.request)
      expect(applied.status, applied.text).toBe(200)
      expect(applied.json).toMatchObject({ asset_id: write.envelope.file_id, replayed: false })
      expect((await opsRaw(server, writer, albumId, write.request)).json).toMatchObject({ replayed: true })
      // Original, derivative, metadata and manifest: one receipt each, once.
      expect(await readRows(server.database, `select receipt_seq from receipts where asset_id = '${write.envelope.file_id}'`)).toHaveLength(4)
    })

    it('leaves nothing of an asset deletion cut inside its transaction, and applies it once when it is sent again', async () => {
      const writer = await uploader(server)
      const albumId = await album(writer)
      const bundle = await openBundle(writer, albumId)
      const create = await writeFor(writer, bundle)
      await writer.client.applyManifest(albumId, create.request)
      const target = { albumId, fileId: create.envelope.file_id, head: create.manifestHash, original: bundle.hashes.ciphertextHash }
      const deletion = await deletionFor(writer, target)
      const before = { rows: await everyRow(server.database), files: await blobFiles(server) }
      // The bundle is superseded and the asset ended; the feed entry, last, never arrives.
      const lost = lostConnections(server).length
      const cutting = proxy.cutWhenSent('insert into "album_ops"')
      expectUnavailable(await deleteRaw(server, writer, albumId, target.fileId, deletion.request), `/v1/albums/${albumId}/assets/${target.fileId}/delete`)
      await untilLost(server, lost + (await cutting))
      expect({ rows: await everyRow(server.database), files: await blobFiles(server) }).toEqual(before)
      expect(Buffer.from(await writer.client.downloadBlob(target.original)).equals(bundle.original)).toBe(true)

      const applied = await deleteRaw(server, writer, albumId, target.fileId, deletion.request)
      expect(applied.json, applied.text).toEqual({ asset_id: target.fileId, sync_seq: 2, action: 'delete', replayed: false })
      expect((await deleteRaw(server, writer, albumId, target.fileId, deletion.request)).json).toMatchObject({ replayed: true })
    })
  })

if (testEngine === 'sqlite')
  describe('SQLite while another connection holds the write lock', () => {
    let server: TestServer
    beforeAll(async () => {
      server = await startServer({ DATABASE_WAIT_TIMEOUT_S: String(WAIT_TIMEOUT_S) })
    })
    afterAll(() => server?.close())

    it('answers writes 503 with Retry-After once the busy timeout passes, writes nothing, and serves again when the lock is released', async () => {
      const member = await registered(server)
      const newcomer = uniqueEmail('locked')
      if (server.database.engine !== 'sqlite') throw new Error('an SQLite test server')
      // Another process would do the same: a `coffer` command writing beside the server.
      const holder = new DatabaseSync(server.database.file)
      try {
        holder.exec('begin immediate')
        const before = await everyRow(server.database)
        const started = Date.now()
        expectUnavailable(await register(server, newcomer), '/v1/auth/register')
        expectUnavailable(await login(server, member.email), '/v1/auth/login')
        expect(Date.now() - started).toBeLessThan(2 * WAIT_TIMEOUT_S * 1000 + 2000)
        // Reads go on beside the writer (WAL).
        expect((await profile(server, member)).status).toBe(200)
        expect(await everyRow(server.database)).toEqual(before)
      } finally {
        holder.exec('rollback')
        holder.close()
      }
      expect((await register(server, newcomer)).status).toBe(200)
      expect((await login(server, member.email)).status).toBe(200)
    })
  })
