import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { readZip } from '../../test/support/zip.ts'
import { zipPath, zipStream, type ZipEntry } from './zip.ts'

async function zipOf(entries: Iterable<ZipEntry>): Promise<Buffer> {
  const parts: Uint8Array[] = []
  for await (const part of zipStream(entries)) parts.push(part)
  return Buffer.concat(parts)
}

function* chunksOf(bytes: Uint8Array, size: number): Iterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size)
}

describe('zipStream', () => {
  it('writes stored files that Info-ZIP and a reader of its own read back byte for byte', async () => {
    const photo = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 31) % 251)
    const modified = new Date(2024, 6, 14, 9, 30, 12).getTime()
    const zip = await zipOf([
      { name: 'IMG_0001.jpg', modified, size: photo.length, bytes: chunksOf(photo, 65_536) },
      { name: 'Été/photo ü.png', modified, size: 3, bytes: [new Uint8Array([1, 2, 3])] },
      { name: 'empty.txt', modified, size: 0, bytes: [] },
    ])
    const files = readZip(zip)
    expect(files.map((file) => file.name)).toEqual(['IMG_0001.jpg', 'Été/photo ü.png', 'empty.txt'])
    expect(files[0]!.bytes.equals(photo)).toBe(true)
    expect([...files[1]!.bytes]).toEqual([1, 2, 3])
    expect(files[0]!.modified.getTime()).toBe(modified)
    const folder = await mkdtemp(join(tmpdir(), 'coffer-zip-'))
    try {
      await writeFile(join(folder, 'a.zip'), zip)
      // Info-ZIP checks every CRC and the structure; a writer mistake it tolerated would still show here as an error line.
      const { stdout } = await promisify(execFile)('unzip', ['-t', join(folder, 'a.zip')])
      expect(stdout).toContain('No errors detected')
    } finally {
      await rm(folder, { recursive: true })
    }
  })

  it('turns to zip64 past 65,535 files, and only then', async () => {
    const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `f${i}`, modified: 0, size: 1, bytes: [new Uint8Array([i & 255])] }))
    const small = await zipOf(entries(3))
    expect(small.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06]))).toBe(false)
    const many = await zipOf(entries(70_000))
    expect(many.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06]))).toBe(true)
    const files = readZip(many)
    expect(files.length).toBe(70_000)
    expect(files[69_999]).toMatchObject({ name: 'f69999', bytes: Buffer.from([69_999 & 255]) })
  })

  it('refuses a file whose bytes are not the size announced, rather than write an archive that lies', async () => {
    const longer = zipOf([{ name: 'a', modified: 0, size: 2, bytes: [new Uint8Array(3)] }])
    await expect(longer).rejects.toThrow('more than the 2 bytes announced')
    const shorter = zipOf([{ name: 'a', modified: 0, size: 4, bytes: [new Uint8Array(3)] }])
    await expect(shorter).rejects.toThrow('3 bytes, 4 announced')
  })

  it('names files with paths that cannot leave the folder they are extracted to', () => {
    expect(zipPath('../../etc/passwd')).toBe('etc/passwd')
    expect(zipPath('/abs//./x.jpg')).toBe('abs/x.jpg')
    expect(zipPath('a\\..\\b.jpg')).toBe('a_.._b.jpg')
    expect(zipPath('..')).toBe('file')
  })
})
