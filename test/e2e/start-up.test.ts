// A start that cannot succeed says why in one line naming the setting, its value and what to
// do, exits 1 within seconds and prints no stack: a closed database port, a missing database,
// folders that cannot be made or written (also under /proc, where Node's recursive mkdir spins
// for ever), an empty setting, and a SECRET_KEY that does not open what the database holds
// sealed. SIGTERM sent to `npm start` or `npm run coffer -- serve` (as a container runtime or a
// service manager sends it) reaches the server, which stops gracefully.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { afterEach, describe, expect, it } from 'vitest'
import { CofferClient } from '../../src/sdk/client.ts'
import { uniqueEmail } from '../support/actors.ts'
import { startBucket } from '../support/bucket.ts'
import { testEngine } from '../support/database.ts'
import { ROOT, serveProcess, startProcess, waitFor, workspace as makeWorkspace } from '../support/process.ts'

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

async function workspace() {
  const made = await makeWorkspace('start-up')
  cleanup.push(() => made.remove())
  return made
}

/** Starts the server with `env`, expects it to exit 1, and answers the one line it printed. */
async function failedStart(env: Record<string, string>): Promise<string> {
  const started = startProcess(env)
  cleanup.push(() => started.kill())
  const startedAt = Date.now()
  const code = await Promise.race([started.exited, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000))])
  expect(code, `still running after 20 s; output:\n${started.lines.join('\n')}`).toBe(1)
  // Well within the 20 s: the database wait (DATABASE_WAIT_TIMEOUT_S, 5 s by default) is the longest step.
  expect(Date.now() - startedAt).toBeLessThan(15_000)
  expect(started.lines, started.lines.join('\n')).toHaveLength(1)
  const [line = ''] = started.lines
  expect(line).toMatch(/^coffer: /)
  expect(line).not.toMatch(/\n|\s+at .*:\d+:\d+/)
  return line
}

async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

const newKey = () => randomBytes(32).toString('base64')

describe(`start-up faults on ${testEngine}`, () => {
  it('a closed database port: names DATABASE_URL with its password hidden, and says to check PostgreSQL', async () => {
    const { env } = await workspace()
    const port = await closedPort()
    const line = await failedStart({ ...env, DATABASE_URL: `postgres://coffer:hunter2@127.0.0.1:${port}/coffer`, DATABASE_WAIT_TIMEOUT_S: '2' })
    expect(line).toContain(`cannot reach the database at DATABASE_URL=postgres://coffer:***@127.0.0.1:${port}/coffer: connect ECONNREFUSED`)
    expect(line).toContain('check that PostgreSQL is running')
    expect(line).not.toContain('hunter2')
  })

  // Each engine's own ways of failing to open.
  if (testEngine === 'postgres') {
    it('a database that does not exist: names it and says to create it', async () => {
      const { env } = await workspace()
      const url = new URL(process.env.TEST_DATABASE_URL ?? '')
      url.pathname = `/coffer_missing_${randomBytes(4).toString('hex')}`
      const line = await failedStart({ ...env, DATABASE_URL: url.toString() })
      expect(line).toBe(
        `coffer: DATABASE_URL=${url.toString()}: database "${url.pathname.slice(1)}" does not exist; create it (createdb), or correct the database name in the URL`,
      )
    })
  } else {
    it('a DATABASE_URL file that is not an SQLite database: names it and says what to point at', async () => {
      const { directory, env } = await workspace()
      const file = path.join(directory, 'photos.txt')
      await writeFile(file, 'not a database, but long enough to have a header page of its own. '.repeat(20))
      const line = await failedStart({ ...env, DATABASE_URL: `sqlite:${file}` })
      expect(line).toBe(`coffer: DATABASE_URL=sqlite:${file}: file is not a database; point it at Coffer's database file, or at a new one`)
    })
  }

  it('DATA_DIR under /proc: refused at once instead of hanging', async () => {
    const { env } = await workspace()
    const dataDir = `/proc/coffer-${randomBytes(4).toString('hex')}`
    const line = await failedStart({ ...env, DATA_DIR: dataDir })
    expect(line).toBe(
      `coffer: DATA_DIR=${dataDir}: cannot use ${dataDir}: the folder cannot be made there (a parent is missing, or the file system does not allow it); choose another folder (ENOENT)`,
    )
  })

  it('DATA_DIR inside a file: names DATA_DIR and says a part of the path is a file', async () => {
    const { directory, env } = await workspace()
    const file = path.join(directory, 'a-file')
    await writeFile(file, 'x')
    const dataDir = path.join(file, 'data')
    const line = await failedStart({ ...env, DATA_DIR: dataDir })
    expect(line).toMatch(
      new RegExp(`^coffer: DATA_DIR=${dataDir}: cannot use ${file}.*: a part of the path is a file, not a folder; choose a folder \\(ENOTDIR\\)$`),
    )
  })

  it('DATA_DIR where no one may write (sysfs refuses even root): names DATA_DIR and says to grant access', async () => {
    const { env } = await workspace()
    const line = await failedStart({ ...env, DATA_DIR: '/sys/kernel' })
    expect(line).toMatch(
      /^coffer: DATA_DIR=\/sys\/kernel: cannot use \/sys\/kernel\/secret\.key\S*: permission denied; give the server's user write access to it, or choose another folder \(EACCES\)$/,
    )
  })

  it('BLOB_DIR that cannot be made: names BLOB_DIR', async () => {
    const { env } = await workspace()
    const line = await failedStart({ ...env, BLOB_DIR: '/proc/coffer-blobs' })
    expect(line).toMatch(/^coffer: BLOB_DIR=\/proc\/coffer-blobs: cannot use \/proc\/coffer-blobs/)
  })

  it('a bucket endpoint that does not answer, and a bucket that is not there: names BLOB_STORE_URL and S3_ENDPOINT, says what to check', async () => {
    const { env } = await workspace()
    const port = await closedPort()
    const s3 = { S3_FORCE_PATH_STYLE: 'true', AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' }
    const closed = await failedStart({ ...env, ...s3, BLOB_STORE_URL: 's3://coffer-blobs/photos', S3_ENDPOINT: `http://127.0.0.1:${port}` })
    expect(closed).toMatch(
      new RegExp(
        `^coffer: cannot use the blob bucket BLOB_STORE_URL=s3://coffer-blobs/photos/ at S3_ENDPOINT=http://127.0.0.1:${port}: .*ECONNREFUSED.*; check that the endpoint answers`,
      ),
    )
    const bucket = await startBucket()
    cleanup.push(() => bucket.close())
    const missing = await failedStart({ ...env, ...s3, BLOB_STORE_URL: 's3://no-such-bucket', S3_ENDPOINT: bucket.endpoint })
    expect(missing).toMatch(/^coffer: cannot use the blob bucket BLOB_STORE_URL=s3:\/\/no-such-bucket\/ at S3_ENDPOINT=http:.*HTTP 404.*that the bucket exists/)
  })

  it.each(['SECRET_KEY', 'DATABASE_URL', 'DATA_DIR', 'BLOB_DIR'])('%s set but empty: refused, never taken as unset', async (variable) => {
    const { env } = await workspace()
    const line = await failedStart({ ...env, [variable]: '' })
    expect(line).toBe(`coffer: invalid configuration: ${variable}: is set but empty; give it a value, or unset it to use the default`)
  })

  it('a SECRET_KEY that does not open what the database holds sealed: refused, naming what it cannot open; the right key serves', async () => {
    const { directory, env } = await workspace()
    const rightKey = newKey()
    const first = await serveProcess({ ...env, SECRET_KEY: rightKey })
    cleanup.push(() => first.kill())
    // A pending TOTP secret is sealed under the key too.
    const client = new CofferClient({ baseUrl: first.url })
    await client.register(uniqueEmail('sealed'), 'pw')
    await client.startTotpEnrollment()
    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)

    const wrongKey = await failedStart({ ...env, SECRET_KEY: newKey() })
    expect(wrongKey).toMatch(
      /^coffer: SECRET_KEY \(set in the environment\) does not open the receipt-signing key \S+ or the TOTP secrets this database holds: it was set up with another key\. Start with the SECRET_KEY it was set up with/,
    )
    // Unset, the key is DATA_DIR's secret.key: a different one there is refused the same way, naming the file.
    await writeFile(path.join(directory, 'secret.key'), `${newKey()}\n`, { mode: 0o600 })
    const wrongFile = await failedStart(env)
    expect(wrongFile).toContain(`SECRET_KEY (read from ${path.join(directory, 'secret.key')}) does not open the receipt-signing key`)

    const again = await serveProcess({ ...env, SECRET_KEY: rightKey })
    cleanup.push(() => again.kill())
    expect((await fetch(`${again.url}/readyz`)).status).toBe(200)
  }, 60_000)
})

describe(`SIGTERM through npm on ${testEngine}`, () => {
  it.each([
    ['npm start', ['start']],
    ['npm run coffer -- serve', ['run', 'coffer', '--', 'serve']],
  ])(
    '%s: the signal sent to npm reaches the server, which stops gracefully',
    async (_name, args) => {
      const { env } = await workspace()
      const npm = spawn('npm', args, {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      const lines: string[] = []
      for (const stream of [npm.stdout, npm.stderr]) createInterface({ input: stream }).on('line', (line) => lines.push(line))
      const npmExited = new Promise<void>((resolve) => npm.on('exit', () => resolve()))
      cleanup.push(async () => {
        if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL')
        await npmExited
      })
      const listening = await waitFor(lines, /"pid":(\d+).*Server listening at (http:\/\/127\.0\.0\.1:\d+)/)
      const [, pid = '', url = ''] = listening
      expect(Number(pid)).not.toBe(npm.pid)
      npm.kill('SIGTERM')
      await waitFor(lines, /"msg":"stopped"/)
      await npmExited
      // The server process itself is gone, not orphaned: nothing answers, and its pid is free.
      await expect(fetch(`${url}/healthz`)).rejects.toThrow()
      expect(() => process.kill(Number(pid), 0)).toThrow()
    },
    60_000,
  )
})
