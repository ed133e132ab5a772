// `node bench/profile.ts <file.cpuprofile> [--top N] [--busy PERCENT] [--all]`: where a thread's
// time went in a V8 CPU profile, as a bench child writes it with
// BENCH_CHILD_EXEC_ARGV='--cpu-prof --cpu-prof-dir=DIR' (one file per thread). A child's profile
// spans its whole life, mostly the preparation between measurements, so by default only the
// seconds in which the thread was busy at least PERCENT (default 60) of the time count: the
// measurements. Prints those seconds, then the functions by their own time, by file or package,
// and by time with their callees.
import { readFileSync } from 'node:fs'

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: readonly number[]
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[]
  readonly startTime: number
  readonly samples: readonly number[]
  readonly timeDeltas: readonly number[]
}

const IDLE = '(idle)'

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(name)
  if (at === -1) return fallback
  const value = Number(process.argv[at + 1])
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} needs a number`)
  return value
}

const file = process.argv[2]
if (file === undefined || file.startsWith('-')) {
  process.stderr.write('usage: node bench/profile.ts <file.cpuprofile> [--top N] [--busy PERCENT] [--all]\n')
  process.exit(2)
}
const top = option('--top', 30)
const busyShare = option('--busy', 60) / 100
const everySecond = process.argv.includes('--all')

const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile
const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
const parents = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id)

const frameOf = (id: number): CallFrame => {
  const node = nodes.get(id)
  if (node === undefined) throw new Error(`the profile names node ${id} but has no such node`)
  return node.callFrame
}
const label = (frame: CallFrame) => `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(?:node_modules\/)?/, '')}:${frame.lineNumber + 1}`
/** The package for a dependency's file, the path for the project's own, the function for V8's and the binding's. */
const place = (frame: CallFrame) =>
  frame.url === ''
    ? frame.functionName
    : frame.url.replace(/^file:\/\/.*?\/node_modules\/((?:@[^/]+\/)?[^/]+)\/.*$/, '$1').replace(/^file:\/\/.*?\/(src|bench|test)\//, '$1/')

// Each sample's node and duration (µs), and the second of the profile it fell in.
const samples: Array<{ readonly id: number; readonly micros: number; readonly second: number }> = []
let clock = 0
for (const [i, id] of profile.samples.entries()) {
  const micros = profile.timeDeltas[i] ?? 0
  clock += micros
  samples.push({ id, micros, second: Math.floor(clock / 1e6) })
}
const busyBySecond = new Map<number, number>()
for (const { id, micros, second } of samples) if (frameOf(id).functionName !== IDLE) busyBySecond.set(second, (busyBySecond.get(second) ?? 0) + micros)
const counted = new Set([...busyBySecond].filter(([, micros]) => everySecond || micros >= busyShare * 1e6).map(([second]) => second))

const self = new Map<string, number>()
const byPlace = new Map<string, number>()
const inclusive = new Map<string, number>()
let total = 0
const add = (table: Map<string, number>, key: string, micros: number) => table.set(key, (table.get(key) ?? 0) + micros)
for (const { id, micros, second } of samples) {
  if (!counted.has(second)) continue
  total += micros
  const frame = frameOf(id)
  add(self, label(frame), micros)
  add(byPlace, place(frame), micros)
  // A recursive function counts once per sample.
  const onStack = new Set<string>()
  for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) onStack.add(label(frameOf(at)))
  for (const key of onStack) add(inclusive, key, micros)
}

const seconds = [...counted].sort((a, b) => a - b)
const lines = [
  file,
  `seconds counted (busy at least ${Math.round(busyShare * 100)}%): ${seconds.map((second) => `${second}s:${Math.round((busyBySecond.get(second) ?? 0) / 1e4)}%`).join(' ') || 'none'}`,
]
for (const [title, table] of [
  ['own time', self],
  ['by file or package', byPlace],
  ['with callees', inclusive],
] as const) {
  lines.push('', `== ${title} (of ${(total / 1e3).toFixed(0)} ms)`)
  for (const [key, micros] of [...table].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${((100 * micros) / total).toFixed(1).padStart(5)}%  ${key}`)
}
// One write: a reader that stops early (`| head`) ends the pipe once, not at every line.
process.stdout.on('error', () => process.exit(0))
process.stdout.write(`${lines.join('\n')}\n`)
