// coffer-photos' progress on a terminal (docs/photos.md, "Progress"), in-process against a real
// server behind a proxy that answers one part of the upload 503: a file sent in several parts
// shows its bytes as each part goes, long before it ends; the client's retry is said on a line
// of its own (the progress line cleared first and drawn again after); the summary overwrites
// nothing above it. verify --deep and --against --all draw theirs too.
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runPhotos } from '../../src/cli/photos/program.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writeOpaque } from '../support/photos.ts'
import { expectOk, photos } from '../support/photos-cli.ts'
import { ROOT } from '../support/process.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { terminal } from '../support/terminal.ts'

const MiB = 1024 * 1024

let server: TestServer
let proxy: Server
let work: string
/** Part uploads (PUT with a Content-Range past the first byte) the proxy answered 503. */
let refusedParts = 0

/** Forwards to the server, but answers the first part of an upload after its first with 503 (Retry-After: 0). */
function refusingProxy(target: URL): Server {
  return createServer((incoming, answer) => {
    const range = incoming.headers['content-range']
    if (incoming.method === 'PUT' && typeof range === 'string' && !range.startsWith('bytes 0-') && refusedParts === 0) {
      refusedParts++
      incoming.resume()
      incoming.on('end', () => answer.writeHead(503, { 'retry-after': '0' }).end())
      return
    }
    const forwarded = request(
      { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (response) => {
        answer.writeHead(response.statusCode ?? 502, response.headers)
        response.pipe(answer)
      },
    )
    incoming.pipe(forwarded)
  })
}

/** The bytes shown by each progress line among `writes` (each drawn by one write, after a carriage return and a clear) of long.mp4. */
function drawnBytes(writes: readonly string[]): number[] {
  const drawn = /^\d+\/\d+ files \| ([\d.]+) (B|KiB|MiB) of 20\.0 MiB \| [^|]+ \| [^|]+ \| long\.mp4$/
  const redraw = '\r\x1b[K'
  return writes
    .filter((text) => text.startsWith(redraw))
    .map((text) => drawn.exec(text.slice(redraw.length)))
    .filter((match) => match !== null)
    .map((match) => Number(match[1]) * (match[2] === 'MiB' ? MiB : match[2] === 'KiB' ? 1024 : 1))
}

beforeAll(async () => {
  server = await startServer()
  proxy = refusingProxy(new URL(server.url))
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-progress-'))
}, 60_000)
afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve))
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

describe('coffer-photos progress on a terminal', { timeout: 120_000 }, () => {
  it('moves within a file sent in parts, says a retry on a line of its own, and the summary overwrites nothing', async () => {
    const home = path.join(work, 'home')
    const proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
    expectOk(await photos(home, ['login', proxied, '--register', '--email', uniqueEmail('progress'), '--password-stdin'], { stdin: `${PASSWORD}\n` }))
    expectOk(await photos(home, ['setup', '--yes', '--json']))
    const folder = path.join(work, 'videos')
    await writeOpaque(path.join(folder, 'long.mp4'), 20 * MiB, 1) // three parts of about 8 MiB

    const screen = terminal()
    const stdin = new PassThrough()
    stdin.end()
    // --concurrency 64: a file over 8 MiB is read once and sent in parts as it is read (the way of a long video).
    const run = runPhotos(['backup', folder, '--album', 'Videos', '--concurrency', '64'], {
      stdin,
      stdout: screen.stream,
      stderr: screen.stream,
      env: { COFFER_PHOTOS_HOME: home },
      cwd: ROOT,
    })
    expect(await run.exit, screen.screen().join('\n')).toBe(0)
    expect(refusedParts).toBe(1)

    // Drawn while the file was in flight, with some of its bytes counted.
    expect(drawnBytes(screen.writes()).some((bytes) => bytes > 0 && bytes < 20 * MiB)).toBe(true)

    const lines = screen.screen()
    expect(lines[0]).toMatch(/^backing up 1 files \(20\.0 MiB\) from .* to album "Videos"$/)
    expect(lines).toContainEqual(expect.stringMatching(/^coffer-photos: the server did not answer \(HTTP 503\); trying again in 0 s$/))
    expect(lines.at(-2)).toMatch(/^1 of 1 files \(20\.0 MiB\) in [\d.]+ s: 1 stored/)
    expect(lines.at(-1)).toBe('')
  })

  it('verify --deep and verify --against --all draw the files checked of their total, and the bytes, as they go', async () => {
    const home = path.join(work, 'home')
    const folder = path.join(work, 'videos')
    /** The bytes shown by each progress line `args` drew on a terminal. */
    const inFlight = async (args: readonly string[]): Promise<number[]> => {
      const screen = terminal()
      const stdin = new PassThrough()
      stdin.end()
      const run = runPhotos(args, { stdin, stdout: screen.stream, stderr: screen.stream, env: { COFFER_PHOTOS_HOME: home }, cwd: ROOT })
      expect(await run.exit, screen.screen().join('\n')).toBe(0)
      return drawnBytes(screen.writes())
    }
    expect((await inFlight(['verify', 'Videos', '--deep'])).some((bytes) => bytes > 0 && bytes < 20 * MiB)).toBe(true)
    expect((await inFlight(['verify', 'Videos', '--against', folder, '--all'])).some((bytes) => bytes > 0 && bytes < 20 * MiB)).toBe(true)
  })
})
