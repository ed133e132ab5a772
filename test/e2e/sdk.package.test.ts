// @coffer/sdk works as a package: built with tsc from src/, packed by npm, installed from the
// tarball into a scratch project (offline: its dependencies link to this project's copies),
// where an app type-checks without Node's types and runs on the machine's Node (20 when the
// machine has it) against a real server. What a browser loads imports no node: module, and a
// bundler drops what an app does not use.
import { spawn } from 'node:child_process'
import { builtinModules } from 'node:module'
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { accessSync, constants } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, serveProcess, workspace, type Started, type Workspace } from '../support/process.ts'

const PACKAGE = path.join(ROOT, 'packages/sdk')
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc')
const RUNTIME_DEPENDENCIES = ['@noble/curves', '@noble/hashes', '@noble/post-quantum', '@noble/ciphers', '@scure/bip39', 'cborg', 'typebox']

function run(command: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${output}`))))
  })
}

/** A node on PATH other than the project's pinned one: the machine's (Node 20 on the CI image). */
function machineNode(): string {
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    if (directory === '' || directory.includes('node_modules')) continue
    const candidate = path.join(directory, 'node')
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return process.execPath
}

let work: Workspace
let server: Started & { url: string }
let serving: Promise<Started & { url: string }> | undefined
let scratch: string

beforeAll(async () => {
  work = await workspace('sdk-package')
  // The server starts in its own process while the package is built and installed.
  serving = serveProcess(work.env)
  scratch = path.join(work.directory, 'scratch')
  const built = path.join(work.directory, 'package')
  await mkdir(built)
  await Promise.all(['package.json', 'README.md'].map((file) => cp(path.join(PACKAGE, file), path.join(built, file))))
  await run(process.execPath, [TSC, '-p', path.join(PACKAGE, 'tsconfig.json'), '--outDir', path.join(built, 'dist')], ROOT)
  await run('npm', ['pack', '--pack-destination', work.directory], built)
  const tarball = (await readdir(work.directory)).find((name) => name.endsWith('.tgz'))
  await mkdir(scratch)
  const dependencies = Object.fromEntries([
    ['@coffer/sdk', `file:${path.join(work.directory, tarball ?? 'missing.tgz')}`],
    ...RUNTIME_DEPENDENCIES.map((name) => [name, `file:${path.join(ROOT, 'node_modules', name)}`]),
  ])
  await writeFile(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true, type: 'module', dependencies }))
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], scratch)
  server = await serving
}, 120_000)

afterAll(async () => {
  // Started even when the build failed.
  await (await serving?.catch(() => undefined))?.kill()
  await work?.remove()
})

describe('the packed SDK', () => {
  it('holds only dist/, its README and package.json, with declarations beside the modules', async () => {
    const installed = path.join(scratch, 'node_modules/@coffer/sdk')
    expect((await readdir(installed)).sort()).toEqual(['README.md', 'dist', 'package.json'])
    const manifest = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    expect(Object.keys(manifest.dependencies).sort()).toEqual(RUNTIME_DEPENDENCIES.filter((name) => name !== '@noble/ciphers').sort())
    for (const folder of ['dist/sdk', 'dist/client', 'dist/client/format']) {
      const files = await readdir(path.join(installed, folder))
      for (const module of files.filter((f) => f.endsWith('.js'))) expect(files, module).toContain(module.replace(/\.js$/, '.d.ts'))
    }
  })

  it('type-checks an app without Node types and runs it on the machine’s Node against a real server', async () => {
    const source = (await readFile(path.join(ROOT, 'test/e2e/sdk-app/example.ts'), 'utf8')).replace(
      "baseUrl: 'SERVER_URL'",
      `baseUrl: ${JSON.stringify(server.url)}`,
    )
    await writeFile(path.join(scratch, 'example.ts'), source)
    await writeFile(
      path.join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          lib: ['es2022', 'dom', 'dom.iterable'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          types: [],
          strict: true,
          outDir: 'out',
          skipLibCheck: false,
        },
        files: ['example.ts'],
      }),
    )
    await run(process.execPath, [TSC, '-p', 'tsconfig.json'], scratch)
    const node = machineNode()
    const version = (await run(node, ['--version'], scratch)).trim()
    expect(Number(/^v(\d+)/.exec(version)?.[1])).toBeGreaterThanOrEqual(20)
    const printed = JSON.parse((await run(node, ['out/example.js'], scratch)).trim().split('\n').at(-1) ?? '') as Record<string, unknown>
    expect(printed, `on ${node} ${version}`).toEqual({
      devices: 1,
      conflict: '409 error.directory.version_conflict',
      created: 'create',
      replaced: 'replace',
      actions: ['create', 'replace'],
      range: true,
      durable: true,
      receipts: 6,
      receiptsValid: true,
      photo: 'stored',
      photoRestored: true,
    })
  }, 60_000)

  it('imports no node: or Node built-in module in what a browser loads, and bundles tree-shaken', async () => {
    const { rolldown } = await import('rolldown')
    const builtins = new Set(builtinModules)
    const bundle = async (code: string) => {
      const entry = path.join(scratch, `entry-${Math.random().toString(36).slice(2)}.js`)
      await writeFile(entry, code)
      const reached: string[] = []
      const build = await rolldown({
        input: entry,
        platform: 'browser',
        logLevel: 'silent',
        plugins: [{ name: 'node-builtins', resolveId: (id: string) => void ((id.startsWith('node:') || builtins.has(id)) && reached.push(id)) }],
      })
      const { output } = await build.generate({ format: 'esm', minify: true })
      await build.close()
      return { reached, bytes: output.reduce((sum, chunk) => sum + (chunk.type === 'chunk' ? chunk.code.length : 0), 0) }
    }
    const everything = await bundle(`import * as sdk from '@coffer/sdk'; globalThis.sdk = sdk`)
    const clientOnly = await bundle(`import { CofferClient } from '@coffer/sdk'; globalThis.c = CofferClient`)
    const photoLibrary = await bundle(`import * as library from '@coffer/sdk/photos'; globalThis.library = library`)
    expect(everything.reached).toEqual([])
    expect(clientOnly.reached).toEqual([])
    expect(photoLibrary.reached).toEqual([])
    console.log(`@coffer/sdk/photos minified: ${photoLibrary.bytes} bytes`)
    console.log(`@coffer/sdk minified: everything ${everything.bytes} bytes, CofferClient alone ${clientOnly.bytes} bytes`)
    // The client alone leaves the signature, CBOR and schema libraries out.
    expect(clientOnly.bytes).toBeLessThan(everything.bytes / 5)
    expect(everything.bytes).toBeLessThan(400_000)
  })
})
