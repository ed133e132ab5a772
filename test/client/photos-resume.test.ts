// `coffer-photos backup` with large files, as the real binary (a process to kill, and its own I/O
// counter) against a real server process (docs/photos.md, "Backing up"): a video larger than the in-memory limit is read once, encrypted
// and sent in parts as it is read; the command is killed (SIGKILL) once the server holds a part;
// the next run continues from the parts the server holds, sending only the rest and reading the
// file once (the process's own I/O counter, in the summary), and the album's copy is the file
// byte for byte (`verify --against --all`). A file changed since its upload was cut starts
// again, read once. A copy of a video the album holds (its size is one the album's writes state)
// is hashed first and its original not sent; nor are the videos' originals when they go into a
// second album (the device keeps their keys, sealed). PHOTOS_RESUME_MIB
// sets the video's size (68 MiB unless given: 4 over the in-memory limit; 100 in `npm run
// test:long`), PHOTOS_RESUME_KILL_PARTS how many parts the server holds when the command is
// killed (1 unless given; docs/benchmarks.md reports 1000 MiB, 60).
import { randomBytes } from 'node:crypto'
import { appendFile, cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IN_MEMORY_FILE_MAX } from '../../src/client/files.ts'
import { ciphertextSize, DEFAULT_CHUNK_SIZE, HEADER_BYTES } from '../../src/client/format/stream.ts'
import { CofferClient } from '../../src/sdk/client.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { accountLibrary, events, photos, spawnPhotos } from '../support/photos-cli.ts'
import { serveProcess, workspace, type Started, type Workspace } from '../support/process.ts'

const MiB = 1024 * 1024
const SIZE = Number(process.env.PHOTOS_RESUME_MIB ?? IN_MEMORY_FILE_MAX / MiB + 4) * MiB
const KILL_PARTS = Number(process.env.PHOTOS_RESUME_KILL_PARTS ?? 1)
const ALBUM = 'Videos'

let ws: Workspace
let server: Started & { url: string }
let work: string
let home: string
let folder: string
const email = uniqueEmail('resume')

/** Part files the server holds (the blob folder's parts/, docs/operations.md). */
async function partFiles(): Promise<number> {
  const found = await readdir(path.join(ws.directory, 'blobs', 'parts'), { recursive: true, withFileTypes: true }).catch(() => [])
  return found.filter((entry) => entry.isFile()).length
}

/** Starts a backup of the folder and kills it (SIGKILL) as soon as the server holds KILL_PARTS parts of the video. */
async function backupKilledMidFile(): Promise<number> {
  const started = Date.now()
  const before = await partFiles()
  const run = spawnPhotos(home, ['backup', folder, '--album', ALBUM, '--json'])
  while (run.child.exitCode === null && (await partFiles()) < before + KILL_PARTS) await new Promise((resolve) => setTimeout(resolve, 5))
  run.child.kill('SIGKILL')
  const ended = await run.done
  expect(ended.signal, `the backup ended before it could be killed mid-file:\n${ended.stdout}\n${ended.stderr}`).toBe('SIGKILL')
  return (Date.now() - started) / 1000
}

/**
 * A backup run's summary, and how many tries it made of its files: a transient failure (a busy
 * machine's timeout) is tried again, reading the file again, and says so on stderr.
 */
async function backupTries(): Promise<{ summary: Record<string, unknown>; tries: number; stderr: string }> {
  const run = await spawnPhotos(home, ['backup', folder, '--album', ALBUM, '--json']).done
  expect(run.code, run.stderr).toBe(0)
  const retries = run.stderr.split('\n').filter((line) => / trying again \(attempt \d+\)$/.test(line)).length
  return { summary: events(run).find((e) => e.event === 'summary')!, tries: 1 + retries, stderr: run.stderr }
}

async function backup(): Promise<Record<string, unknown>> {
  return (await backupTries()).summary
}

beforeAll(async () => {
  ws = await workspace('resume')
  server = await serveProcess(ws.env)
  work = await mkdtemp(path.join(tmpdir(), 'coffer-resume-'))
  home = path.join(work, 'home')
  folder = path.join(work, ALBUM)
  await mkdir(folder)
  const login = await photos(home, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD })
  expect(login.code, login.stderr).toBe(0)
  const setup = await photos(home, ['setup', '--yes', '--password-stdin', '--json'], { stdin: PASSWORD })
  expect(setup.code, setup.stderr).toBe(0)
}, 300_000)
afterAll(async () => {
  await server?.kill()
  await ws?.remove()
  await rm(work, { recursive: true, force: true })
})

describe('coffer-photos backup: resume inside a file', { timeout: 600_000 }, () => {
  it('continues a killed upload from the parts the server holds: only the rest is sent, the file read once', async () => {
    await writeFile(path.join(folder, 'long.mp4'), randomBytes(SIZE))
    const killedAfterS = await backupKilledMidFile()
    const summary = await backup()
    if (process.env.PHOTOS_RESUME_MIB !== undefined) console.log('resumed run:', JSON.stringify(summary), 'first run killed after', killedAfterS, 's')
    expect(summary).toMatchObject({ files: 1, stored: 1, resumed: 1, failed: 0 })
    const resumed = summary.resumed_bytes as number
    const total = ciphertextSize(SIZE)
    expect(resumed).toBeGreaterThan(0)
    expect(resumed).toBeLessThan(total)
    // Where a chunk begins, and the rest only is sent; the file is read once (its hash needs it all).
    expect(Number.isInteger((resumed - HEADER_BYTES) / (DEFAULT_CHUNK_SIZE + 16))).toBe(true)
    expect(summary.sent_bytes).toBe(total - resumed)
    expect(summary.read_bytes as number).toBeGreaterThanOrEqual(SIZE)
    expect(summary.read_bytes as number).toBeLessThan(SIZE + 4 * 1024 * 1024)
    // The parts were assembled into the blob and are gone.
    expect(await partFiles()).toBe(0)
    const verify = await photos(home, ['verify', ALBUM, '--against', folder, '--all', '--json'])
    expect(verify.code, verify.stdout + verify.stderr).toBe(0)
  })

  it('starts again when the file changed after its upload was cut, and aborts the cut session', async () => {
    const file = path.join(folder, 'edited.mp4')
    await writeFile(file, randomBytes(SIZE))
    await backupKilledMidFile()
    await appendFile(file, randomBytes(1000))
    const { summary, tries, stderr } = await backupTries()
    expect(summary).toMatchObject({ stored: 1, resumed: 0, resumed_bytes: 0, unchanged: 1, failed: 0, sent_bytes: ciphertextSize(SIZE + 1000) })
    // In one pass: read once (once a try, when a transient failure was tried again).
    expect(summary.read_bytes as number, stderr).toBeLessThan(1.05 * SIZE * tries)
    const library = await accountLibrary(home, new CofferClient({ baseUrl: server.url }), email)
    expect((await library.client.storageUsage()).open_uploads).toBe(0)
    const verify = await photos(home, ['verify', ALBUM, '--against', folder, '--all', '--json'])
    expect(verify.code, verify.stdout + verify.stderr).toBe(0)
  })

  it('hashes a copy of a video the album holds before sending (its size is one the album states): stored under its own name, its original not sent', async () => {
    await cp(path.join(folder, 'long.mp4'), path.join(folder, 'copy.mp4'))
    const summary = await backup()
    expect(summary).toMatchObject({ present: 0, unchanged: 2, stored: 1, deduplicated: 1, failed: 0 })
    expect(summary.sent_bytes as number).toBeLessThan(64 * 1024)
    expect(summary.read_bytes as number).toBeLessThan(1.05 * SIZE)
  })

  it('the same videos in another album are stored once: the stored bytes grow by their metadata only (decision 0030)', async () => {
    const library = await accountLibrary(home, new CofferClient({ baseUrl: server.url }), email)
    const before = (await library.client.storageUsage()).stored_bytes
    const run = await spawnPhotos(home, ['backup', folder, '--album', 'Other videos', '--json']).done
    expect(run.code, run.stderr).toBe(0)
    const summary = events(run).find((e) => e.event === 'summary')!
    expect(summary).toMatchObject({ stored: 3, deduplicated: 3, failed: 0 })
    expect(summary.sent_bytes as number).toBeLessThan(64 * 1024)
    expect((await library.client.storageUsage()).stored_bytes - before).toBeLessThan(64 * 1024)
    const verify = await photos(home, ['verify', 'Other videos', '--against', folder, '--all', '--json'])
    expect(verify.code, verify.stdout + verify.stderr).toBe(0)
  })
})
