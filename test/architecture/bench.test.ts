// `npm run bench` loads every scenario in plain Node (not through vitest, which resolves more):
// a module a scenario reaches that Node cannot load (a name only a bundler knows) breaks the
// whole bench, and no other test would notice.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')

describe('npm run bench', () => {
  it('loads every scenario in plain Node: an unknown name is refused with the list of known ones', async () => {
    const child = spawn(process.execPath, ['bench/run.ts', 'no-such-scenario'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect(stderr).toMatch(/^unknown scenario\(s\): no-such-scenario; known: bearer, .*\brestore, peers, library\b.*\bweb\b.*\bcli\b/)
    expect(code).toBe(2)
  })
})
