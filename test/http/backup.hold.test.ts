// A backup's copy of the blobs includes every file its database copy names, even when garbage
// collection releases those rows and runs while the copy is made: the backup's hold keeps every
// file in place until it is done (decision 0011), and the files go at the next pass after it.
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { Deps } from '../../src/deps.ts'
import { backup } from '../../src/features/backup/backup.service.ts'
import { collectGarbage } from '../../src/features/maintenance/gc.service.ts'
import { sha256Hex } from '../../src/sdk/client.ts'
import { album, ciphertext, uploader } from '../support/albums.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { isStored } from '../support/blobs.ts'

let server: TestServer
let folder: string
beforeEach(async () => {
  server = await startServer()
  folder = await mkdtemp(path.join(tmpdir(), 'coffer-backup-hold-'))
})
afterEach(async () => {
  await server.close()
  await rm(folder, { recursive: true, force: true })
})

const onDisk = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  )

/** The server's components with the configuration that names its database (tests give PostgreSQL by override). */
function withItsDatabase(deps: Deps): Deps {
  const target = server.database
  if (target.engine === 'sqlite') return deps
  const url = `${target.url}${target.url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${target.searchPath ?? 'public'}`)}`
  return { ...deps, config: { ...deps.config, database: { engine: 'postgres', url } } }
}

it('copies the files of rows collected while it copies, and they go at the next pass after it', async () => {
  const member = await uploader(server, 'backup-hold')
  const albumId = await album(member)
  const blobs = [ciphertext(900), ciphertext(200)]
  const hashes = blobs.map(sha256Hex)
  const session = await member.client.openUploadSession({
    album_id: albumId,
    crypto_suite_id: 1,
    ciphertext_hash: hashes[0]!,
    blobs: [
      { role: 'original', hash: hashes[0]!, size: blobs[0]!.length },
      { role: 'derivative', hash: hashes[1]!, size: blobs[1]!.length },
    ],
  })
  for (const bytes of blobs) await member.client.putBlob(session.upload_id, sha256Hex(bytes), bytes)

  const dest = path.join(folder, 'backup')
  let collected: Awaited<ReturnType<typeof collectGarbage>> | undefined
  const manifest = await backup(withItsDatabase(server.deps), dest, {
    blobsOnly: false,
    // Between the database copy (which has the owner rows) and the file copy: the app gives the
    // upload up and a maintenance pass runs.
    afterSnapshot: async () => {
      await member.client.abortUploadSession(session.upload_id)
      collected = await collectGarbage(server.deps)
    },
  })
  expect(collected).toEqual({ rows: 2, files: 0, held: true })
  expect(manifest).toMatchObject({ missing: [], corrupt: [], blobs: { count: 2 } })
  for (const hash of hashes) expect(await onDisk(path.join(dest, 'blobs', hash.slice(0, 2), hash.slice(2, 4), hash))).toBe(true)

  expect(await collectGarbage(server.deps)).toEqual({ rows: 0, files: 2 })
  for (const hash of hashes) expect(await isStored(server, hash)).toBe(false)
})
