// The server as an operator runs it: `node src/main.ts` starts on the embedded default or the
// configured database, generates SECRET_KEY once into DATA_DIR, refuses a bad setting by
// name, reports a port it cannot listen on in one line, and on SIGTERM finishes the request
// in flight before it exits.
import { readFile, stat } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { testEngine } from '../support/database.ts'
import { serveProcess, startProcess, waitFor, workspace as makeWorkspace } from '../support/process.ts'

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

async function workspace() {
  const made = await makeWorkspace('e2e')
  cleanup.push(() => made.remove())
  return made
}

function start(env: Record<string, string>) {
  const started = startProcess(env)
  cleanup.push(() => started.kill())
  return started
}

async function serve(env: Record<string, string>) {
  const started = await serveProcess(env)
  cleanup.push(() => started.kill())
  return started
}

describe(`node src/main.ts on ${testEngine}`, () => {
  it('serves, generates SECRET_KEY once into DATA_DIR and keeps it across restarts', async () => {
    const { directory, env } = await workspace()
    const first = await serve(env)
    const health = await fetch(`${first.url}/readyz`)
    expect(health.status).toBe(200)
    const register = await fetch(`${first.url}/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'e2e@example.test', password: 'pw' }),
    })
    expect(register.status).toBe(200)
    const keyFile = path.join(directory, 'secret.key')
    const key = await readFile(keyFile, 'utf8')
    expect(Buffer.from(key.trim(), 'base64')).toHaveLength(32)
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600)
    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)

    const second = await serve(env)
    expect(await readFile(keyFile, 'utf8')).toBe(key)
    const login = await fetch(`${second.url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'e2e@example.test', password: 'pw' }),
    })
    expect(login.status).toBe(200)
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
  }, 90_000)

  it('runs maintenance every SWEEP_INTERVAL_S by itself: an expired enrollment code is gone and logged', async () => {
    const { env } = await workspace()
    const server = await serve({ ...env, SWEEP_INTERVAL_S: '1', ENROLL_CODE_TTL_S: '1' })
    const register = await fetch(`${server.url}/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'sweep@example.test', password: 'pw' }),
    })
    const { access_token: token } = (await register.json()) as { access_token: string }
    const issued = await fetch(`${server.url}/v1/auth/devices/enroll/code`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
    const { code } = (await issued.json()) as { code: string }
    const line = await waitFor(server.lines, /"msg":"maintenance removed expired rows and garbage"/)
    expect(JSON.parse(line.input)).toMatchObject({ deleted: { enrollment_codes: 1 } })
    // Expired and swept: the code is refused as unknown.
    const redeem = await fetch(`${server.url}/v1/auth/devices/enroll/redeem`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    })
    expect(redeem.status).toBe(404)
  }, 60_000)

  it.each([
    ['PORT', 'eighty'],
    ['HOST', 'no such host'],
    ['ACCESS_TOKEN_TTL_S', '-5'],
    ['SECRET_KEY', 'too-short'],
    ['DATABASE_URL', 'mysql://localhost/coffer'],
    ['LOG_LEVEL', 'loud'],
    ['PUBLIC_ORIGIN', 'photos.example.com'],
  ])('refuses to start with a bad %s and names it', async (variable, value) => {
    const { env } = await workspace()
    const started = start({ ...env, [variable]: value })
    expect(await started.exited).toBe(1)
    expect(started.lines.join('\n')).toContain(`invalid configuration: ${variable}`)
  })

  it('exits 1 with one line naming HOST and PORT when the port is taken', async () => {
    const { env } = await workspace()
    const occupant = createServer()
    await new Promise<void>((resolve) => occupant.listen(0, '127.0.0.1', resolve))
    cleanup.push(() => new Promise<void>((resolve) => occupant.close(() => resolve())))
    const { port } = occupant.address() as AddressInfo
    const started = start({ ...env, PORT: String(port) })
    expect(await started.exited).toBe(1)
    expect(started.lines).toEqual([`coffer: cannot listen on HOST=127.0.0.1 PORT=${port}: PORT is already in use (EADDRINUSE)`])
  })

  it('finishes the request in flight on SIGTERM, then stops accepting and exits 0', async () => {
    const { env } = await workspace()
    // A deliberately slow password hash keeps the registration in flight while the signal lands.
    const running = await serve({ ...env, LOG_LEVEL: 'debug', PASSWORD_HASH_MEMORY_KIB: '131072', PASSWORD_HASH_ITERATIONS: '3' })
    const inFlight = fetch(`${running.url}/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'slow@example.test', password: 'pw' }),
    })
    await waitFor(running.lines, /"route":"\/v1\/auth\/register".*request received/)
    running.child.kill('SIGTERM')
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(await response.json()).toHaveProperty('access_token')
    expect(await running.exited).toBe(0)
    expect(running.lines.some((line) => line.includes('"msg":"stopped"'))).toBe(true)
    await expect(fetch(`${running.url}/healthz`)).rejects.toThrow()
  }, 90_000)
})
