// docs/guide.md runs as written: its `ts` blocks, in order, are one program, saved at the root
// of the checkout and run on the project's Node against a started server (with ADMIN_TOKEN, for
// the operator part); each block prints exactly the `text` block that follows it in the guide,
// or nothing when none does. A marker printed between blocks splits the output per block, so a
// failure names the step whose output changed.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ROOT, serveProcess, workspace, type Started, type Workspace } from '../support/process.ts'

const ADMIN_TOKEN = randomBytes(32).toString('base64url')

interface Step {
  /** The heading the block sits under, to name it in a failure. */
  readonly heading: string
  readonly code: string
  /** What the guide says it prints ('' when no `text` block follows). */
  readonly prints: string
}

/** The guide's convention (its "How to read" section): every ```ts block runs; a ```text block right after one is its output. */
function stepsOf(guide: string): Step[] {
  const steps: Step[] = []
  let heading = ''
  let fence: { info: string; lines: string[] } | null = null
  let previous: 'ts' | 'other' = 'other'
  for (const line of guide.split('\n')) {
    if (fence === null) {
      const open = /^```(\S*)\s*$/.exec(line)
      if (open) fence = { info: open[1] ?? '', lines: [] }
      else if (/^#+ /.test(line)) [heading, previous] = [line.replace(/^#+ /, ''), 'other']
      else if (line.trim() !== '') previous = 'other'
      continue
    }
    if (line !== '```') {
      fence.lines.push(line)
      continue
    }
    const body = fence.lines.join('\n')
    if (fence.info === 'ts') {
      steps.push({ heading, code: body, prints: '' })
      previous = 'ts'
    } else {
      if (fence.info === 'text' && previous === 'ts') steps[steps.length - 1] = { ...steps[steps.length - 1]!, prints: body }
      else if (fence.info === 'text') throw new Error(`a text block under "${heading}" follows no ts block`)
      previous = 'other'
    }
    fence = null
  }
  if (fence !== null) throw new Error('docs/guide.md ends inside a fenced block')
  return steps
}

/** What the guide's awk line extracts: the lines between a ```ts fence and the next closing fence. */
function extracted(guide: string): string {
  let on = false
  const lines: string[] = []
  for (const line of guide.split('\n')) {
    if (line === '```ts') on = true
    else if (line === '```') on = false
    else if (on) lines.push(line)
  }
  return lines.map((line) => `${line}\n`).join('')
}

/** Runs the project's Node on `args` from the root of the checkout; resolves with stdout and stderr on exit 0. */
function run(args: readonly string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(path.join(ROOT, 'node_modules/.bin/node'), args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let text = ''
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()))
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`exited ${code}:\n${text}`))))
  })
}

/** A name at the root of the checkout no one else uses. */
const scratch = (kind: string, ext: string) => path.join(ROOT, `guide.${kind}-${process.pid}-${Date.now()}.${ext}`)

const tidy = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim()

let work: Workspace
let server: Started & { url: string }
beforeAll(async () => {
  work = await workspace('guide')
  server = await serveProcess({ ...work.env, ADMIN_TOKEN })
})
afterAll(async () => {
  await server?.kill()
  await work?.remove()
})

it('runs every step of docs/guide.md in order and each prints what the guide says', async () => {
  const guide = await readFile(path.join(ROOT, 'docs/guide.md'), 'utf8')
  const steps = stepsOf(guide)
  expect(steps.length).toBeGreaterThanOrEqual(10)
  // Every step shows its result: a block printing nothing would check nothing.
  expect(steps.filter((step) => step.prints === '').map((step) => step.heading)).toEqual([])
  // The steps the guide promises, each under its own heading.
  for (const call of [
    'register',
    'verifyLogin',
    'signDirectory',
    'publishDirectory',
    'provisionAlbum',
    'uploadAsset',
    'openUploadSession',
    'feed',
    'downloadBlob',
    'verifyStorage',
    'assetReceipts',
    'attestationKeys',
    'verifyReceipts',
    'suspend',
    'reinstate',
    'takeDown',
    'legalHold',
  ]) {
    expect(
      steps.some((step) => step.code.includes(`${call}(`)),
      call,
    ).toBe(true)
  }
  // What the guide tells a reader to run extracts exactly these blocks.
  expect(guide).toContain("awk '/^```ts$/{on=1;next} /^```$/{on=0} on' docs/guide.md > guide.ts")
  expect(extracted(guide)).toBe(steps.map((step) => `${step.code}\n`).join(''))

  const marker = (i: number) => `@@guide-step-${i}@@`
  const program = steps.map((step, i) => `${step.code}\nconsole.log(${JSON.stringify(marker(i))})\n`).join('\n')
  // Saved where the guide says (the root of the checkout), under a name no one else uses.
  const file = scratch('run', 'ts')
  await writeFile(file, program)
  let output: string
  try {
    output = await run([file, server.url], { ADMIN_TOKEN })
  } finally {
    await rm(file, { force: true })
  }
  let rest = output
  const printed = steps.map((step, i) => {
    const at = rest.indexOf(marker(i))
    if (at < 0) throw new Error(`step ${i} ("${step.heading}") never finished; output:\n${output}`)
    const own = rest.slice(0, at)
    rest = rest.slice(at + marker(i).length)
    return { step: `${i} ${step.heading}`, prints: tidy(own) }
  })
  expect(printed).toEqual(steps.map((step, i) => ({ step: `${i} ${step.heading}`, prints: tidy(step.prints) })))
  expect(rest.trim()).toBe('')
})

// Engine-independent, so once (on SQLite): the program a reader extracts typechecks under the
// project's strict settings, so a changed SDK type breaks the guide even where the run would not.
if (process.env.COFFER_TEST_ENGINE !== 'postgres') {
  it('typechecks the program docs/guide.md is', async () => {
    const file = scratch('typecheck', 'ts')
    const config = scratch('tsconfig', 'json')
    await writeFile(file, extracted(await readFile(path.join(ROOT, 'docs/guide.md'), 'utf8')))
    await writeFile(config, JSON.stringify({ extends: './tsconfig.json', include: [], files: [path.basename(file)] }))
    try {
      await run([path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', config])
    } finally {
      await rm(file, { force: true })
      await rm(config, { force: true })
    }
  })
}
