// `coffer-photos export` (docs/photos.md, "Exporting the account"), run in-process against
// a real server: it saves the account's export whole, readable by its owner only, under a free
// default name in the folder it runs in or where --output says, says where and how big; past the
// server's budget it says so and leaves no file behind; it needs a login.
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AccountExportDocument } from '../../src/sdk/client.ts'
import { PASSWORD } from '../support/actors.ts'
import { member, upload } from '../support/cli.ts'
import { errorLineOf, events, expectOk, photos } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-export-'))
})
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

/** Each test runs the binary a few times, a few seconds each on a busy machine. */
const CLI_TIMEOUT = 120_000

let folders = 0
const newFolder = async (): Promise<string> => {
  const folder = path.join(work, `run-${++folders}`)
  await mkdir(folder, { recursive: true })
  return folder
}

const today = (): string => new Date().toISOString().slice(0, 10)

/**
 * A TCP proxy to the test server that ends each connection once `limit` bytes of answers went
 * through it (a network that fails in the middle of a download).
 */
async function cuttingProxy(limit: number): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(server.url)
  const links = new Set<net.Socket>()
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname)
    for (const socket of [client, upstream]) {
      links.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => links.delete(socket))
    }
    client.pipe(upstream)
    let sent = 0
    upstream.on('data', (chunk: Buffer) => {
      const room = limit - sent
      sent += chunk.length
      if (sent <= limit) return void client.write(chunk)
      client.end(chunk.subarray(0, Math.max(room, 0)))
      upstream.destroy()
    })
    upstream.on('end', () => client.end())
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`,
    close: async () => {
      for (const socket of links) socket.destroy()
      await new Promise((resolve) => proxy.close(resolve))
    },
  }
}

describe('coffer-photos export', { timeout: CLI_TIMEOUT }, () => {
  it('saves the export under coffer-export-<date>.json, then -2, or where --output says; past the budget it refuses and saves nothing', async () => {
    const owner = await member(server.url)
    const { result } = await upload(owner)
    const home = path.join(await newFolder(), 'coffer-photos')
    expectOk(await photos(home, ['login', server.url, '--email', owner.email, '--password-stdin'], { stdin: PASSWORD }))
    const here = await newFolder()

    const first = await photos(home, ['export'], { cwd: here })
    expectOk(first)
    const file = path.join(here, `coffer-export-${today()}.json`)
    const { size, mode } = await stat(file)
    expect(first.stdout).toMatch(new RegExp(`^Saved the export of ${owner.email} to ${file.replaceAll('.', '\\.')} \\(\\d+(\\.\\d)? KiB\\)\\.\\n$`))
    expect(mode & 0o777).toBe(0o600)
    const document = JSON.parse(await readFile(file, 'utf8')) as AccountExportDocument
    expect(document.format).toBe('coffer-export/v1')
    expect(document.profile).toEqual(await owner.client.getProfile())
    expect(document.albums.map((album) => album.album_id)).toEqual([owner.albumId])
    expect(document.albums[0]!.feed.map((entry) => entry.asset_id)).toEqual([result.asset_id])
    expect(document.albums[0]!.receipts[result.asset_id]).toEqual((await owner.client.assetReceipts(result.asset_id)).receipts)
    expect(size).toBe(Buffer.byteLength(JSON.stringify(document)))

    // The name is taken: the next export takes -2, and says so in its --json event.
    const second = await photos(home, ['export', '--json'], { cwd: here })
    expectOk(second)
    const secondFile = path.join(here, `coffer-export-${today()}-2.json`)
    expect(events(second)).toEqual([{ event: 'exported', server: server.url, email: owner.email, file: secondFile, bytes: (await stat(secondFile)).size }])

    const elsewhere = path.join(await newFolder(), 'mine.json')
    expectOk(await photos(home, ['export', '--output', elsewhere], { cwd: here }))
    expect((JSON.parse(await readFile(elsewhere, 'utf8')) as AccountExportDocument).profile.email).toBe(owner.email)

    // The server's budget (3 an hour by default) is spent: refused, and nothing is left behind.
    const refused = await photos(home, ['export'], { cwd: here })
    expect(refused.code).toBe(4)
    expect(errorLineOf(refused)).toMatch(
      /^coffer-photos: the server refused: This account has started the 3 exports its 3600-second window allows; the next may start in \d+ seconds \[error\.rate_limited\]$/,
    )
    expect((await readdir(here)).sort()).toEqual([`coffer-export-${today()}-2.json`, `coffer-export-${today()}.json`])
  })

  it('says an export cut short by the network was not saved, and leaves no file behind (exit 1)', async () => {
    const owner = await member(server.url)
    await upload(owner)
    // Room for the login's answer and the export's headers, not for the whole export.
    const proxy = await cuttingProxy(8_000)
    try {
      const home = path.join(await newFolder(), 'coffer-photos')
      expectOk(await photos(home, ['login', proxy.url, '--email', owner.email, '--password-stdin'], { stdin: PASSWORD }))
      const here = await newFolder()
      const cut = await photos(home, ['export'], { cwd: here })
      expect(cut.code).toBe(1)
      expect(errorLineOf(cut)).toMatch(/^coffer-photos: the export was cut short \(.+\); nothing was saved: run it again$/)
      expect(await readdir(here)).toEqual([])
    } finally {
      await proxy.close()
    }
  })

  it('needs a login (exit 3), takes no arguments (exit 2), and lists itself in the overview', async () => {
    const home = path.join(await newFolder(), 'coffer-photos')
    const loggedOut = await photos(home, ['export'], { cwd: await newFolder() })
    expect(loggedOut.code).toBe(3)
    expect(errorLineOf(loggedOut)).toBe('coffer-photos: not logged in: run `coffer-photos login <server-url>` first')
    const extra = await photos(home, ['export', 'now'])
    expect(extra.code).toBe(2)
    expect(extra.stderr).toMatch(/export takes no arguments \(give the file with --output FILE\)/)
    expect((await photos(home, ['--help'])).stdout).toMatch(/^ {2}export +save everything the server holds about the account as one JSON file$/m)
    const help = await photos(home, ['export', '--help'])
    expectOk(help)
    expect(help.stdout).toMatch(/^usage: coffer-photos export \[--output FILE\] \[--json\]/)
  })
})
