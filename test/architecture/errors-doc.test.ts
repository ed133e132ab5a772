// docs/errors.md lists exactly the error catalog: every code with its status and title, no more.
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { errorCatalog } from '../../src/contract/errors.ts'

describe('docs/errors.md', () => {
  it('has one row per catalog code, with the same status and title', async () => {
    const markdown = await readFile(new URL('../../docs/errors.md', import.meta.url), 'utf8')
    const rows = [...markdown.matchAll(/^\| `(error\.[a-z_.]+)` \| (\d{3}) \| ([^|]+) \|/gm)].map((m) => [m[1], Number(m[2]), m[3]?.trim()])
    const catalog = Object.entries(errorCatalog).map(([code, entry]) => [code, entry.status, entry.title])
    expect(rows).toEqual(catalog)
  })
})
