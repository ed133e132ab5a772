// The suite shares one module graph per worker (vitest.config.ts `isolate: false`): a file that
// replaces a module with vi.mock would hand its stand-in to every file after it in that worker.
// Such files run in a project of their own, isolated; this keeps that list complete.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { mocksModules } from '../../vitest.config.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

async function testFiles(): Promise<string[]> {
  const found: string[] = []
  for (const top of ['src', 'test']) {
    for (const entry of await readdir(path.join(ROOT, top), { recursive: true })) if (entry.endsWith('.test.ts')) found.push(path.join(top, entry))
  }
  return found
}

describe('test isolation', () => {
  it('runs every file that replaces a module in a fresh module graph of its own', async () => {
    const mocking: string[] = []
    for (const file of await testFiles()) if (/\bvi\.(do)?[mM]ock\(/.test(await readFile(path.join(ROOT, file), 'utf8'))) mocking.push(file)
    expect(mocking.length).toBeGreaterThan(0)
    expect(mocking.sort()).toEqual([...mocksModules].sort())
  })
})
