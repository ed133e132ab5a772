// The web app reaches the photo library and the SDK by name (package.json's subpath imports,
// #photos/* and #sdk/*, which Node, Vite, vitest and TypeScript all read), never by a path out of
// web/src, and never reaches the CLI; every screen writes sizes, counts and times through
// lib/format.ts.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')
const WEB = path.join(ROOT, 'web/src')

async function sources(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true })
  const nested = await Promise.all(
    entries.map((entry) => {
      const full = path.join(directory, entry.name)
      if (entry.isDirectory()) return sources(full)
      return Promise.resolve(/\.tsx?$/.test(entry.name) ? [full] : [])
    }),
  )
  return nested.flat()
}

const files = await Promise.all(
  (await sources(WEB)).map(async (full) => {
    const text = await readFile(full, 'utf8')
    const imports = [...text.matchAll(/^\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]/gm)].map(
      (m) => m[1] ?? m[2] ?? m[3] ?? '',
    )
    return { file: path.relative(WEB, full), full, text, imports }
  }),
)

/** The names package.json gives the libraries: `#photos/*` is src/client, `#sdk/*` src/sdk. */
const LIBRARY_NAMES: Record<string, string> = { '#photos/': './src/client/', '#sdk/': './src/sdk/' }
const { imports } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { imports: Record<string, string> }

describe('the web app and the libraries beside it', () => {
  it('imports the photo library and the SDK by name: no relative path leaves web/src', () => {
    expect(files.length).toBeGreaterThan(40)
    const named = files.flatMap((f) => f.imports.filter((i) => i.startsWith('#')))
    expect(named.length).toBeGreaterThan(50)
    for (const source of files) {
      for (const imported of source.imports) {
        if (imported.startsWith('.'))
          expect(path.resolve(path.dirname(source.full), imported).startsWith(WEB + path.sep), `${source.file} imports ${imported}`).toBe(true)
        if (imported.startsWith('#'))
          expect(
            Object.keys(LIBRARY_NAMES).some((name) => imported.startsWith(name)),
            `${source.file} imports ${imported}`,
          ).toBe(true)
      }
    }
  })

  it('names the photo library and the SDK in package.json, the one place Node, Vite, vitest and TypeScript read them from', () => {
    expect(imports).toEqual(Object.fromEntries(Object.entries(LIBRARY_NAMES).map(([name, folder]) => [`${name}*`, `${folder}*`])))
  })

  it('writes sizes, counts and times only through lib/format.ts', () => {
    for (const source of files.filter((f) => f.file !== path.join('lib', 'format.ts'))) {
      const code = source.text.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '')
      expect(
        /\.toLocale\w*String\(|\bIntl\.(NumberFormat|DateTimeFormat|PluralRules|RelativeTimeFormat)\b/.test(code),
        `${source.file} formats on its own`,
      ).toBe(false)
    }
  })
})
