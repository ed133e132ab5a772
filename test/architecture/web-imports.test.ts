// The web app reaches the photo library and the SDK by name, never by a path out of web/src, and
// never reaches the CLI; every screen writes sizes, counts and times through lib/format.ts.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { LIBRARY_NAMES } from '../../web/aliases.ts'

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

/** A tsconfig's `paths` (comments allowed in the file). */
async function pathsOf(tsconfig: string): Promise<Record<string, string[]>> {
  const text = (await readFile(path.join(ROOT, tsconfig), 'utf8')).replace(/^\s*\/\/.*$/gm, '')
  return (JSON.parse(text) as { compilerOptions: { paths: Record<string, string[]> } }).compilerOptions.paths
}

describe('the web app and the libraries beside it', () => {
  it('imports the photo library and the SDK by name: no relative path leaves web/src', () => {
    expect(files.length).toBeGreaterThan(40)
    const named = files.flatMap((f) => f.imports.filter((i) => i.startsWith('@coffer/')))
    expect(named.length).toBeGreaterThan(50)
    for (const source of files) {
      for (const imported of source.imports) {
        if (imported.startsWith('.'))
          expect(path.resolve(path.dirname(source.full), imported).startsWith(WEB + path.sep), `${source.file} imports ${imported}`).toBe(true)
        if (imported.startsWith('@coffer/'))
          expect(
            Object.keys(LIBRARY_NAMES).some((name) => imported.startsWith(`${name}/`)),
            `${source.file} imports ${imported}`,
          ).toBe(true)
      }
    }
  })

  it('states the same names to Vite, vitest and both tsconfig files', async () => {
    const expected = Object.fromEntries(Object.entries(LIBRARY_NAMES).map(([name, folder]) => [`${name}/*`, [`${folder}/*`]]))
    const relativeTo = (base: string, paths: Record<string, string[]>) =>
      Object.fromEntries(Object.entries(paths).map(([name, targets]) => [name, targets.map((t) => path.relative(ROOT, path.join(ROOT, base, t)))]))
    expect(relativeTo('web', await pathsOf('web/tsconfig.json'))).toEqual(expected)
    expect(relativeTo('.', await pathsOf('tsconfig.json'))).toEqual(expected)
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
