// writeRestored gives a restored file its recorded modification time so that the next restore
// and backup see it as unchanged: Node hands utimes the time as seconds in a double, which at
// today's dates lands up to about 0.1 µs either side of the millisecond, so about one file in
// a hundred came back a millisecond early and a second restore refused it as "a different
// file". Many random times are tried, because any one of them passes by luck most of the time.
// And it writes the bytes it is given whole and in order, gathered into larger writes.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildEnvelope } from '../../sdk/manifest.ts'
import type { RestoredFile } from '../files.ts'
import { restoreInto, writeRestored } from './files.ts'

const TIMES = 400
let folder: string

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'coffer-restored-'))
})
afterAll(async () => {
  await rm(folder, { recursive: true, force: true })
})

const envelope = buildEnvelope({
  crypto_suite_id: 1,
  protocol_version: '2026-06-01',
  album_id: '11111111-2222-4333-8444-555555555555',
  file_id: '66666666-7777-4888-8999-aaaaaaaaaaaa',
  amk_version: 1,
  ciphertext_hash: 'c0'.repeat(32),
  plaintext_size: 1,
  chunk_size: 65536,
  key_mode: 'wrapped',
  created_by_user: '22222222-3333-4444-8555-666666666666',
  created_by_device: '22222222-3333-4444-8555-777777777777',
  client_version: 'coffer-client/1',
  action: 'create',
  metadata_blob_hash: 'd0'.repeat(32),
})

/** A restored file modified at `modified` (ms), readable once like a real one: one byte, or `chunks`. */
function restoredAt(name: string, modified: number, chunks: readonly Uint8Array[] = [new Uint8Array([7])]): RestoredFile {
  return {
    assetId: envelope.file_id,
    envelope,
    metadata: { name, size: chunks.reduce((sum, c) => sum + c.length, 0), type: 'image/jpeg', modified, captured: null, width: null, height: null, blobs: [] },
    bytes: (async function* () {
      yield* chunks
    })(),
    metadataBlobSize: 0,
    derivative: () => Promise.resolve(null),
  }
}

/** This process's umask, from the kernel (process.umask() without an argument is deprecated). */
async function umask(): Promise<number> {
  const status = await readFile('/proc/self/status', 'utf8')
  return Number.parseInt(/^Umask:\s*([0-7]+)$/m.exec(status)![1]!, 8)
}

describe('writeRestored', () => {
  it('writes every byte in order, whatever the sizes of the pieces: empty, one byte, 64 KiB and odd ones over several MiB', async () => {
    const sizes = [0, 1, 65_536, 65_536, 1_000_003, 65_535, 0, 2_500_001, 7, 1_048_576, 65_536]
    const chunks = sizes.map((size, i) => Uint8Array.from({ length: size }, (_, j) => (i * 31 + j * 7) & 0xff))
    const written = await writeRestored(restoredAt('pieces.bin', 1_700_000_000_000, chunks), folder)
    expect(Buffer.compare(await readFile(written), Buffer.concat(chunks))).toBe(0)
  })

  it('gives a restored file the mode of any file the person makes (0666 less the umask), and its folders 0777 less it', async () => {
    const mask = await umask()
    expect(mask & 0o066).not.toBe(0o066) // else a file made 0600 would pass too
    const written = await writeRestored(restoredAt('trip/day-1/photo.jpg', 1_700_000_000_000), folder)
    expect((await stat(written)).mode & 0o777).toBe(0o666 & ~mask)
    expect((await stat(path.dirname(written))).mode & 0o777).toBe(0o777 & ~mask)
  })

  it(`keeps the recorded millisecond of ${TIMES} random modification times, and a second restore finds each file unchanged`, async () => {
    const wrong: string[] = []
    const again: string[] = []
    for (let i = 0; i < TIMES; i++) {
      const modified = 946_684_800_000 + Math.floor(Math.random() * 1_000_000_000_000)
      const name = `photo-${i}.jpg`
      const written = await writeRestored(restoredAt(name, modified), folder)
      const seen = Math.floor((await stat(written)).mtimeMs)
      if (seen !== modified) wrong.push(`${modified} came back as ${seen}`)
      if ((await restoreInto(folder)(restoredAt(name, modified), name)) !== 'unchanged') again.push(name)
    }
    expect(wrong).toEqual([])
    expect(again).toEqual([])
  })
})
