import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeArchive } from '../../../test/support/zip-archive.ts'
import { openZip, ZipError } from '../zip-reader.ts'
import { openZipFile } from './zip-file.ts'

let folder: string
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'coffer-zip-file-'))
})
afterAll(async () => {
  await rm(folder, { recursive: true })
})

const video = Uint8Array.from({ length: 3 * 1024 * 1024 }, (_, i) => (i * 2_654_435_761) >>> 24)
const sidecar = Buffer.from('{"title":"VID_0001.mp4","photoTakenTime":{"timestamp":"1563188112"}}\n'.repeat(100))

describe('openZipFile', () => {
  it('reads an archive on disk where it lies: the listing, then each entry from its range', async () => {
    const archive = writeArchive([
      { name: 'Takeout/Google Photos/Photos from 2019/VID_0001.mp4', data: video, method: 8 },
      { name: 'Takeout/Google Photos/Photos from 2019/VID_0001.mp4.supplemental-metadata.json', data: sidecar, method: 8, descriptor: true },
    ])
    const file = join(folder, 'takeout-001.zip')
    await writeFile(file, archive.bytes())
    const source = await openZipFile(file)
    try {
      expect(source.size).toBe(archive.size)
      const zip = await openZip(source)
      expect(zip.entries.map((e) => e.name)).toEqual([
        'Takeout/Google Photos/Photos from 2019/VID_0001.mp4',
        'Takeout/Google Photos/Photos from 2019/VID_0001.mp4.supplemental-metadata.json',
      ])
      const pieces: Uint8Array[] = []
      for await (const piece of zip.stream(zip.entries[0]!)) pieces.push(piece)
      expect(pieces.length).toBeGreaterThan(1)
      expect(Buffer.concat(pieces).equals(video)).toBe(true)
      const json: Uint8Array[] = []
      for await (const piece of zip.stream(zip.entries[1]!)) json.push(piece)
      expect(Buffer.concat(json).equals(sidecar)).toBe(true)
      // The file cut short after it was listed: the entry that lay past the cut is refused, not padded.
      await truncate(file, archive.entries[1]!.offset + 10)
      const error = await (async () => {
        for await (const _ of zip.stream(zip.entries[1]!));
      })().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ZipError)
      expect((error as ZipError).problem).toBe('truncated')
    } finally {
      await source.close()
    }
    // Closed: reads fail (the handle is not left open).
    await expect(source.read(0, 4)).rejects.toThrow()
  })

  it('refuses a folder and a missing file', async () => {
    await expect(openZipFile(folder)).rejects.toThrow('not a regular file')
    await expect(openZipFile(join(folder, 'missing.zip'))).rejects.toThrow('ENOENT')
  })
})
