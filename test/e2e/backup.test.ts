// coffer backup beside a running server taking writes (uploads, abandoned uploads, maintenance
// every second), then coffer restore into an empty data folder: the restored server's fsck is
// clean and every write acknowledged before the backup began is there, its blobs downloading
// byte-identical. Backup and restore refuse a folder that holds anything. On PostgreSQL the
// documented manual procedure (coffer gc hold, pg_dump, coffer backup --blobs-only, coffer gc
// release; pg_restore, coffer restore) is taken too.
import { randomBytes } from 'node:crypto'
import { mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferClient, sha256Hex } from '../../src/sdk/client.ts'
import { coffer, member, upload, type Member, type Uploaded } from '../support/cli.ts'
import { testEngine } from '../support/database.ts'
import { serveProcess, workspace, type Started, type Workspace } from '../support/process.ts'
import { ciphertext } from '../support/albums.ts'
import { execFileSync } from 'node:child_process'

let space: Workspace
let source: Started & { url: string }
const started: Started[] = []
const databases: string[] = []
beforeAll(async () => {
  space = await workspace('backup')
  source = await serveProcess({ ...space.env, SWEEP_INTERVAL_S: '1' })
  started.push(source)
}, 60_000)
afterAll(async () => {
  for (const server of started) await server.kill()
  for (const name of databases) await onPostgres(`drop database if exists ${name} with (force)`)
  await space?.remove()
})

async function onPostgres(sqlText: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL })
  await client.connect()
  try {
    await client.query(sqlText)
  } finally {
    await client.end()
  }
}

/** An empty place to restore into: a data folder, and on PostgreSQL a new database whose search_path is the source's schema. */
async function emptyTarget(name: string): Promise<Record<string, string>> {
  const directory = path.join(space.directory, name)
  const env: Record<string, string> = { DATA_DIR: directory, PORT: '0', PASSWORD_HASH_MEMORY_KIB: '64', PASSWORD_HASH_ITERATIONS: '1' }
  const target = space.database.target
  if (target.engine === 'postgres') {
    const database = `coffer_restore_${randomBytes(5).toString('hex')}`
    await onPostgres(`create database ${database}`)
    databases.push(database)
    const url = new URL(target.url)
    url.pathname = `/${database}`
    env.DATABASE_URL = `${url.toString()}?options=${encodeURIComponent(`-c search_path=${target.searchPath ?? 'public'}`)}`
  }
  return env
}

interface Written extends Uploaded {
  readonly who: Member
}

/** Every acknowledged write is in the restored server's feed and downloads byte-identical, its manifest too. */
async function expectPresent(url: string, writes: readonly Written[]): Promise<void> {
  for (const write of writes) {
    const client = new CofferClient({ baseUrl: url, tokens: write.who.client.tokens })
    const feed = await client.feed(write.who.albumId, write.result.sync_seq - 1, 1)
    expect(feed.entries[0]).toMatchObject({ sync_seq: write.result.sync_seq, asset_id: write.result.asset_id })
    for (const [hash, bytes] of write.blobs) expect(Buffer.from(await client.downloadBlob(hash)).equals(bytes), hash).toBe(true)
    // The provenance blob, which the database holds (decision 0038), came back with it.
    expect(Buffer.from(await client.downloadBlob(write.result.manifestHash)).toString('base64')).toBe(feed.entries[0]!.manifest_cbor)
  }
}

describe(`coffer backup and restore on ${testEngine}`, () => {
  it('a backup taken during writes restores into a server whose fsck is clean and which has every write acknowledged before it began', async () => {
    const members = [await member(source.url), await member(source.url)]
    const before: Written[] = []
    for (let i = 0; i < 12; i++) {
      const who = members[i % 2]!
      before.push({ who, ...(await upload(who, 2_000 + i)) })
    }

    // Writers keep going while the backup runs: creates, and uploads given up (garbage that
    // the maintenance pass, every second, collects).
    let stop = false
    let during = 0
    const writers = members.map(async (who) => {
      while (!stop) {
        await upload(who, 1_000 + Math.floor(Math.random() * 5_000))
        const bytes = ciphertext(700)
        const session = await who.client.openUploadSession({
          album_id: who.albumId,
          crypto_suite_id: 1,
          ciphertext_hash: sha256Hex(bytes),
          blobs: [{ role: 'original', hash: sha256Hex(bytes), size: bytes.length }],
        })
        await who.client.putBlob(session.upload_id, sha256Hex(bytes), bytes)
        await who.client.abortUploadSession(session.upload_id)
        during++
      }
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    const dest = path.join(space.directory, 'backup')
    const began = Date.now()
    const taken = await coffer(space.env, 'backup', dest)
    const tookMs = Date.now() - began
    await new Promise((resolve) => setTimeout(resolve, 300))
    stop = true
    await Promise.all(writers)
    expect(taken.code, taken.stdout + taken.stderr).toBe(0)
    expect(taken.stdout).toMatch(
      new RegExp(
        `^backup: ${dest}: database coffer\\.(db|pgdump) \\(.+\\), \\d+ blobs \\(.+\\), secret\\.key \\(keep this backup as secret as the key\\) in [\\d.]+ s\\n$`,
      ),
    )
    expect(during).toBeGreaterThan(0)
    const manifest = JSON.parse(await readFile(path.join(dest, 'manifest.json'), 'utf8')) as { blobs: { count: number }; missing: string[]; corrupt: string[] }
    expect(manifest.missing).toEqual([])
    expect(manifest.corrupt).toEqual([])
    console.log(`backup of ${manifest.blobs.count} blobs beside ${during} concurrent write rounds took ${tookMs} ms (${testEngine})`)

    // Never into a folder that holds anything.
    const again = await coffer(space.env, 'backup', dest)
    expect(again.code).toBe(1)
    expect(again.stderr).toBe(
      `coffer: the destination ${dest} is not empty (it holds blobs, coffer.${testEngine === 'sqlite' ? 'db' : 'pgdump'}, manifest.json, ...)\n`,
    )

    const target = await emptyTarget('restored')
    const restored = await coffer(target, 'restore', dest)
    expect(restored.code, restored.stdout + restored.stderr).toBe(0)
    // On PostgreSQL the folder copy also has files written after the dump: noted, and queued for removal.
    expect(restored.stdout).toMatch(
      testEngine === 'sqlite'
        ? /\nfsck: 0 problems, 0 notes; \d+ blobs .* checked for presence and size, \d+ receipts verified\n$/
        : /\nfsck: 0 problems, \d+ notes?; /,
    )
    const refused = await coffer(target, 'restore', dest)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^coffer: restore needs an empty data folder: .* holds .*\n$/)

    const server = await serveProcess(target)
    started.push(server)
    await expectPresent(server.url, before)
    const deep = await coffer(target, 'fsck', '--deep')
    expect(deep.code, deep.stdout).toBe(0)
    // The restored server takes writes.
    await upload({ ...members[0]!, client: new CofferClient({ baseUrl: server.url, tokens: members[0]!.client.tokens }) })
    await server.kill()
  })

  // pg_dump and pg_restore belong to PostgreSQL: this case exists in the postgres project only.
  if (testEngine === 'postgres') {
    it('PostgreSQL, by hand: gc hold, pg_dump, backup --blobs-only, gc release; then pg_restore and restore', async () => {
      const who = await member(source.url)
      const before: Written[] = [
        { who, ...(await upload(who)) },
        { who, ...(await upload(who)) },
      ]
      const dest = path.join(space.directory, 'manual')
      await mkdir(dest)
      const hold = JSON.parse((await coffer(space.env, 'gc', 'hold', '--ttl', '600', '--reason', 'nightly dump')).stdout) as { hold_id: string }
      const schema = space.database.target.engine === 'postgres' ? space.database.target.searchPath! : 'public'
      execFileSync('pg_dump', [
        '--format=custom',
        `--schema=${schema}`,
        '--no-owner',
        `--file=${path.join(dest, 'coffer.pgdump')}`,
        process.env.TEST_DATABASE_URL!,
      ])
      const blobs = await coffer(space.env, 'backup', '--blobs-only', path.join(dest, 'files'))
      expect(blobs.code, blobs.stderr).toBe(0)
      expect(blobs.stdout).toMatch(/^backup: .*: no database \(--blobs-only\), \d+ blobs/)
      expect((await coffer(space.env, 'gc', 'release', hold.hold_id)).code).toBe(0)

      const target = await emptyTarget('manual-restored')
      const url = new URL(target.DATABASE_URL!)
      url.search = ''
      execFileSync('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${url.toString()}`, path.join(dest, 'coffer.pgdump')])
      const restored = await coffer(target, 'restore', path.join(dest, 'files'))
      expect(restored.code, restored.stdout + restored.stderr).toBe(0)
      expect(restored.stdout).toMatch(/\nfsck: 0 problems, 0 notes;/)
      const server = await serveProcess(target)
      started.push(server)
      await expectPresent(server.url, before)
      await server.kill()
    })
  }
})
