// coffer fsck finds each kind of damage, beside a running server: a missing blob file, a
// truncated one, one whose bytes changed (--deep only; a provenance blob held in the database too), a receipt whose signature fails, a
// receipt gone from the chain, rows that disagree; it exits 1 with one line per problem, and 0
// on a sound server. Files no row names are notes (exit 0), and --reclaim-unowned queues them
// for the next maintenance pass.
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, truncate, unlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/sdk/client.ts'
import { coffer, member, upload, type Uploaded } from '../support/cli.ts'
import { readRows, testEngine, writeRows } from '../support/database.ts'
import { serveProcess, workspace, type Started, type Workspace } from '../support/process.ts'

let space: Workspace
let server: Started & { url: string }
beforeAll(async () => {
  space = await workspace('fsck')
  server = await serveProcess(space.env)
}, 60_000)
afterAll(async () => {
  await server?.kill()
  await space?.remove()
})

const blobPath = (hash: string) => path.join(space.directory, 'blobs', hash.slice(0, 2), hash.slice(2, 4), hash)
const problems = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('problem: '))

describe(`coffer fsck beside a running server on ${testEngine}`, () => {
  it('is clean on a sound server, then reports each kind of damage, one line each, and exits 1', async () => {
    const alice = await member(server.url)
    const uploads: Uploaded[] = []
    for (let i = 0; i < 4; i++) uploads.push(await upload(alice, 1_000 + i))
    const clean = await coffer(space.env, 'fsck', '--deep')
    expect(clean.stdout).toMatch(/^fsck: 0 problems, 0 notes; 16 blobs \(.*\) re-hashed, 16 receipts verified\n$/)
    expect(clean.code, clean.stderr).toBe(0)

    const [gone, cut, flipped] = [...uploads[0]!.blobs.keys()]
    await unlink(blobPath(gone!))
    await truncate(blobPath(cut!), 10)
    const bytes = await readFile(blobPath(flipped!))
    bytes[0] = bytes[0]! ^ 0xff
    await writeFile(blobPath(flipped!), bytes)
    // A manifest whose bytes, held in the database as its provenance blob (decision 0038), changed.
    const manifestHash = uploads[0]!.result.manifestHash
    const [manifestRow] = await readRows(space.database.target, `select manifest_cbor from album_ops where manifest_hash = '${manifestHash}'`)
    const manifest = Buffer.from(manifestRow!.manifest_cbor as Uint8Array)
    manifest[manifest.length - 1] = manifest[manifest.length - 1]! ^ 0xff
    await writeRows(space.database.target, 'update album_ops set manifest_cbor = ? where manifest_hash = ?', [manifest, manifestHash])
    // A receipt whose signature no longer verifies, and one gone from the chain.
    const [row] = await readRows(space.database.target, 'select receipt_cbor from receipts where receipt_seq = 6')
    const cbor = Buffer.from(row!.receipt_cbor as Uint8Array)
    // {sig, body} in canonical order: byte 20 is inside the signature.
    cbor[20] = cbor[20]! ^ 0x01
    await writeRows(space.database.target, 'update receipts set receipt_cbor = ? where receipt_seq = 6', [cbor])
    await writeRows(space.database.target, 'delete from receipts where receipt_seq = 11')
    // An account whose recorded usage drifted from its rows.
    await writeRows(space.database.target, 'update account_storage set stored_bytes = stored_bytes + 1 where user_id = ?', [alice.userId])
    // An asset whose head is not its last manifest; a feed entry whose session was reopened.
    await writeRows(space.database.target, 'update assets set chain_head = ? where asset_id = ?', ['0'.repeat(64), uploads[3]!.result.asset_id])
    const [op] = await readRows(space.database.target, `select upload_id from album_ops where asset_id = '${uploads[1]!.result.asset_id}'`)
    await writeRows(space.database.target, 'update upload_sessions set closed_at = null where upload_id = ?', [op!.upload_id])

    const shallow = await coffer(space.env, 'fsck')
    expect(shallow.code).toBe(1)
    const deep = await coffer(space.env, 'fsck', '--deep')
    expect(deep.code).toBe(1)
    expect(deep.stderr).toBe('')
    const found = problems(deep.stdout)
    const expected = [
      `problem: blob ${gone}: the file is missing`,
      `problem: blob ${cut}: the file has 10 bytes, its rows say ${uploads[0]!.blobs.get(cut!)!.length}`,
      `problem: blob ${flipped}: the file's SHA-256 is ${sha256Hex(bytes)}`,
      `problem: blob ${manifestHash}: the manifest held in the database's SHA-256 is ${sha256Hex(manifest)}`,
      'problem: receipt 6: the signature does not verify',
      'problem: receipt 7: prior_receipt_hash does not link to receipt 6',
      'problem: receipt chain: receipts 11..11 are missing',
      `problem: asset ${uploads[2]!.result.asset_id}: blob ${[...uploads[2]!.blobs.keys()][2]} (metadata, upload ${(await readRows(space.database.target, `select upload_id from receipts where receipt_seq = 12`))[0]!.upload_id}) has no custody receipt`,
      expect.stringMatching(new RegExp(`^problem: account ${alice.userId}: stored bytes \\d+ differ from its blob rows' \\d+$`)),
      expect.stringMatching(
        new RegExp(`^problem: asset ${uploads[3]!.result.asset_id}: chain head 0{64} is not the hash of its last applied manifest \\([0-9a-f]{64}\\)$`),
      ),
      `problem: album ${alice.albumId} feed entry 2: its upload session ${String(op!.upload_id)} is still open`,
    ]
    expect(found).toEqual(expect.arrayContaining(expected))
    expect(found).toHaveLength(expected.length)
    expect(deep.stdout).toMatch(/\nfsck: 11 problems, 0 notes; 16 blobs .* re-hashed, 15 receipts verified\n$/)
    // Without --deep the changed bytes of the right length go unnoticed; everything else is found.
    expect(problems(shallow.stdout)).toHaveLength(9)
    expect(problems(shallow.stdout).join('\n')).not.toContain(flipped)
    expect(problems(shallow.stdout).join('\n')).not.toContain(manifestHash)
  })

  it('notes files no row names without failing, and --reclaim-unowned has the next maintenance pass remove them', async () => {
    // Start over from a sound state: this test only adds stray files, on a second account.
    const stray = randomBytes(700)
    const hash = sha256Hex(stray)
    await mkdir(path.dirname(blobPath(hash)), { recursive: true })
    await writeFile(blobPath(hash), stray)
    const before = await coffer(space.env, 'fsck')
    expect(before.stdout).toContain(`note: file ${hash}: no row names it and nothing queues it for removal\n`)
    expect(before.stdout).toMatch(/fsck: \d+ problems, 1 note; .*, 1 files no row names\n$/)

    const queued = await coffer(space.env, 'fsck', '--reclaim-unowned')
    expect(queued.stdout).toContain(`note: file ${hash}: no row names it and nothing queues it for removal (queued now)\n`)
    expect((await coffer(space.env, 'maintain')).code).toBe(0)
    await expect(readFile(blobPath(hash))).rejects.toThrow(/ENOENT/)
    expect((await coffer(space.env, 'fsck')).stdout).toMatch(/fsck: \d+ problems, 0 notes;/)
  })
})
