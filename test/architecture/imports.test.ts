// The layout's rules hold in the source: pure domain, an SDK that knows only the wire
// contract (and loads in a browser), services free of HTTP and SQL, one reader of process.env, argon2 only off the loop.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '../../src')

async function sources(directory = root): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true })
  const nested = await Promise.all(
    entries.map((entry) => {
      const full = path.join(directory, entry.name)
      if (entry.isDirectory()) return sources(full)
      return Promise.resolve(entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [])
    }),
  )
  return nested.flat()
}

interface Source {
  readonly file: string
  readonly text: string
  /** Import specifiers resolved to paths relative to src/ when relative, else as written. */
  readonly imports: string[]
}

const files: Source[] = await Promise.all(
  (await sources()).map(async (full) => {
    const text = await readFile(full, 'utf8')
    const specifiers = [...text.matchAll(/^\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm)].map((m) => m[1] ?? m[2] ?? '')
    const imports = specifiers.map((s) => (s.startsWith('.') ? path.relative(root, path.resolve(path.dirname(full), s)) : s))
    return { file: path.relative(root, full), text, imports }
  }),
)

const under = (prefix: string) => files.filter((f) => f.file.startsWith(prefix))

describe('layout rules', () => {
  it('finds the sources', () => {
    expect(files.length).toBeGreaterThan(30)
    expect(under('domain/').length).toBeGreaterThan(3)
  })

  it('keeps domain/ pure: it imports only domain/ and contract/ modules', () => {
    for (const source of under('domain/')) {
      for (const imported of source.imports) {
        expect(imported.startsWith('domain/') || imported.startsWith('contract/'), `${source.file} imports ${imported}`).toBe(true)
      }
    }
  })

  it('keeps the SDK on the wire contract: from src/ it imports only contract/, codec/ and sdk/', () => {
    const shared = (imported: string) => ['contract/', 'codec/', 'sdk/'].some((p) => imported.startsWith(p))
    const fromSource = under('sdk/').flatMap((s) => s.imports.filter((i) => i.endsWith('.ts')).map((i) => [s.file, i] as const))
    expect(fromSource.length).toBeGreaterThan(3)
    for (const [file, imported] of fromSource) expect(shared(imported), `${file} imports ${imported}`).toBe(true)
  })

  // @coffer/sdk is built from these (packages/sdk): they must load in a browser and on Node 20.
  const packaged = files.filter((f) => f.file.startsWith('sdk/') || f.file.startsWith('contract/') || f.file.startsWith('codec/'))

  it('keeps what the SDK package holds browser-safe: no node: module, no Buffer or process, only its declared packages', () => {
    const allowed = /^(cborg|typebox(\/value)?|@noble\/(curves|hashes|post-quantum)\/[\w./-]+\.js)$/
    expect(packaged.length).toBeGreaterThan(10)
    for (const source of packaged) {
      for (const imported of source.imports.filter((i) => !i.endsWith('.ts'))) expect(allowed.test(imported), `${source.file} imports ${imported}`).toBe(true)
      const code = source.text.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '')
      expect(/\b(Buffer|process|require)\b/.test(code), `${source.file} uses Buffer, process or require`).toBe(false)
    }
  })

  // The client library's core (docs/client-format.md) runs in browsers: WebCrypto, the noble
  // libraries and @scure/bip39 (same author and audit line) only. File-system and other
  // Node-only adapters sit beside it, in files named *.node.ts or under a node/ folder.
  const clientCore = under('client/').filter((f) => !f.file.endsWith('.node.ts') && !f.file.split('/').includes('node'))

  it('keeps the client core browser-safe: no node: module, no Buffer or process, only codec/, contract/, sdk/ and client/ from src/', () => {
    const allowed = /^(cborg|@noble\/(ciphers|curves|hashes|post-quantum)\/[\w./-]+\.js|@scure\/bip39(\/wordlists\/english\.js)?)$/
    expect(clientCore.length).toBeGreaterThan(3)
    for (const source of clientCore) {
      for (const imported of source.imports) {
        if (imported.endsWith('.ts'))
          expect(
            ['client/', 'codec/', 'contract/', 'sdk/'].some((p) => imported.startsWith(p)),
            `${source.file} imports ${imported}`,
          ).toBe(true)
        else expect(allowed.test(imported), `${source.file} imports ${imported}`).toBe(true)
      }
      const code = source.text.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '')
      expect(/\b(Buffer|process|require)\b/.test(code), `${source.file} uses Buffer, process or require`).toBe(false)
    }
  })

  // sharp is native code (libvips) and exifr reads files by path: both belong to the Node-only
  // media adapter, never to what browsers load.
  it('uses sharp and exifr only in the Node-only media adapter (client/node/media.ts)', () => {
    const users = files.filter((f) => f.imports.some((i) => i === 'sharp' || i === 'exifr')).map((f) => f.file)
    expect(users).toEqual(['client/node/media.ts'])
  })

  it('keeps the modules the SDK shares free of server state: contract/ and codec/ import no server module', () => {
    for (const source of packaged.filter((f) => !f.file.startsWith('sdk/'))) {
      for (const imported of source.imports.filter((i) => i.endsWith('.ts'))) {
        expect(imported.startsWith('contract/') || imported.startsWith('codec/'), `${source.file} imports ${imported}`).toBe(true)
      }
    }
  })

  it('keeps HTTP and SQL out of services and domain', () => {
    for (const source of [...under('domain/'), ...files.filter((f) => f.file.endsWith('.service.ts'))]) {
      for (const imported of source.imports) {
        expect(
          /^(fastify|@fastify\/|kysely|pg$)/.test(imported) || imported.startsWith('http/') || imported.startsWith('storage/kysely'),
          `${source.file} imports ${imported}`,
        ).toBe(false)
      }
    }
  })

  it('reaches the database only through the storage port outside storage/ and the composition root', () => {
    for (const source of files.filter((f) => !f.file.startsWith('storage/') && !['deps.ts', 'cli/program.ts', 'cli/openapi.ts'].includes(f.file))) {
      for (const imported of source.imports) {
        expect(imported.startsWith('storage/kysely') || imported === 'kysely' || imported === 'pg', `${source.file} imports ${imported}`).toBe(false)
      }
    }
  })

  // The storage port by area (docs/decisions/0042): storage/port/<area>.ts holds the methods that
  // storage/kysely/<area>.ts implements, with the types they use; storage/port.ts composes them.
  it('keeps the storage port by area: each storage/port/ file names its implementation in storage/kysely/ and imports only types of other areas', () => {
    const areas = under('storage/port/')
    expect(areas.length).toBeGreaterThan(10)
    const implementations = new Set(under('storage/kysely/').map((f) => path.basename(f.file)))
    for (const area of areas) {
      expect(implementations.has(path.basename(area.file)), `${area.file} has no storage/kysely/${path.basename(area.file)}`).toBe(true)
      for (const imported of area.imports) expect(imported.startsWith('storage/port/'), `${area.file} imports ${imported}`).toBe(true)
      expect(/^\s*(import|export)\s+(?!type\b)[^\n]*\bfrom\b/m.test(area.text), `${area.file} imports or re-exports a value`).toBe(false)
    }
  })

  // The server's settings come from config.ts alone. The command-line programs get the process's
  // environment from cli/io.ts processIo, with its streams and folder (CommandIo), and read their
  // settings from that: coffer's through config.ts, coffer-photos' where its config folder is
  // (home.ts homeFolder). coffer-photos' entry point also reads whether glibc's malloc variables are
  // set (it restarts itself with them otherwise) and where its compile cache goes.
  it("reads process.env only in config.ts, cli/io.ts and coffer-photos' entry point, cli/photos/main.ts", () => {
    const readers = files
      .filter((f) => /process\.env/.test(f.text))
      .map((f) => f.file)
      .sort()
    expect(readers).toEqual(['cli/io.ts', 'cli/photos/main.ts', 'config.ts'])
    const main = files.find((f) => f.file === 'cli/photos/main.ts')!
    expect([...main.text.matchAll(/process\.env(\.\w+|\[\w+\])?/g)].map((m) => m[0])).toEqual(['process.env[name]', 'process.env', 'process.env'])
  })

  // Commands run in-process beside each other (the tests do): what a run reads and writes goes
  // through its CommandIo, never the process's own streams, folder or signals.
  it('keeps the commands off the process: only the entry points (main.ts) and io.ts touch process.std*, process.cwd, process.exit or signals', () => {
    const entries = ['cli/main.ts', 'cli/photos/main.ts', 'cli/io.ts']
    for (const source of under('cli/').filter((f) => !entries.includes(f.file))) {
      const code = source.text.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '')
      expect(/\bprocess\.(stdin|stdout|stderr|cwd|exit|exitCode|on)\b/.test(code), source.file).toBe(false)
    }
  })

  it('hashes passwords only in crypto/passwords.ts, and never with a synchronous argon2 call', () => {
    const argon2Users = files.filter((f) => f.imports.includes('@node-rs/argon2')).map((f) => f.file)
    expect(argon2Users).toEqual(['crypto/passwords.ts'])
    for (const source of files) expect(/\b(hashSync|verifySync|hashRawSync)\b/.test(source.text), source.file).toBe(false)
  })
})
