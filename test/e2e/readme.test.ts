// The README's SDK example runs as written: its one TypeScript block, saved at the root of the
// checkout and run on the project's Node with the address a started server printed, prints
// what the README says it prints.
import { spawn } from 'node:child_process'
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ROOT, serveProcess, workspace, type Started, type Workspace } from '../support/process.ts'

let work: Workspace
let server: Started & { url: string }
beforeAll(async () => {
  work = await workspace('readme')
  server = await serveProcess(work.env)
})
afterAll(async () => {
  await server?.kill()
  await work?.remove()
})

it('runs the SDK example of README.md and prints what the README says', async () => {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## The SDK'), readme.indexOf('\n## ', readme.indexOf('## The SDK') + 1))
  const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? '')
  expect(blocks).toHaveLength(1)
  const promised = /It prints `([^`]+)`/.exec(section)?.[1]
  expect(promised).toBeDefined()
  expect(section).toContain('node_modules/.bin/node example.ts http://127.0.0.1:8080')
  // Saved where the README says (the root of the checkout), under a name no one else uses.
  const file = path.join(ROOT, `example.readme-test-${process.pid}-${Date.now()}.ts`)
  await writeFile(file, blocks[0]!)
  try {
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(path.join(ROOT, 'node_modules/.bin/node'), [file, server.url], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
      let text = ''
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()))
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()))
      child.on('error', reject)
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`exited ${code}:\n${text}`))))
    })
    expect(output.trim()).toBe(promised)
  } finally {
    await rm(file, { force: true })
  }
})
