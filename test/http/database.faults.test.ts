// A connection PostgreSQL ends (pg_terminate_backend, a restart, a failover) is logged and
// dropped, and the server carries on: the next request is served on a new connection.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseTarget } from '../../src/storage/kysely/storage.ts'
import { PASSWORD, raw, registered, type Member } from '../support/actors.ts'
import { postgresAddress, readRows, testEngine } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts'

function login(server: TestServer, email: string, requestId = 'fault') {
  return raw(server, 'POST', '/v1/auth/login', { headers: { 'content-type': 'application/json', 'x-request-id': requestId }, body: JSON.stringify({ email, password: PASSWORD }) })
}

function profile(server: TestServer, member: Member) {
  return raw(server, 'GET', '/v1/profile', { headers: { authorization: `Bearer ${member.client.tokens?.access_token}` } })
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

describe.runIf(testEngine === 'postgres')('PostgreSQL behind a proxy the test breaks', () => {
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
    server = await startServer({}, { reach: throughProxy })
    member = await registered(server)
  })
  afterAll(async () => {
    await server?.close()
    await proxy?.close()
  })

  it('logs a connection PostgreSQL terminates while idle, drops it, and serves the next request', async () => {
    expect((await profile(server, member)).status).toBe(200)
    const terminated = await readRows(server.database, `select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = '${applicationName}'`)
    expect(terminated.length).toBeGreaterThan(0)
    expect(terminated.every((row) => row.done === true)).toBe(true)
    const [line] = await untilLost(server, terminated.length)
    // The driver's words, and nothing of the connection (its configuration hangs on the error).
    expect(line).toEqual({ level: 40, time: expect.any(Number), pid: process.pid, hostname: expect.any(String), cause: 'terminating connection due to administrator command', msg: 'database connection lost' })
    expect((await profile(server, member)).status).toBe(200)
    expect((await login(server, member.email)).status).toBe(200)
  })
})
