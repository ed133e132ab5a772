import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { describeMedia } from '../../src/client/node/media.ts'
import { mediaTypeOf } from '../../src/client/node/files.ts'
const dir = '/tmp/mx/lib2000'
const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name))
const rounds = Number(process.argv[2] ?? 2)
const rss0 = process.memoryUsage().rss
let t = performance.now(), n = 0
for (let round = 0; round < rounds; round++) {
  let next = 0
  const worker = async () => { for (let i = next++; i < files.length; i = next++) { await describeMedia(files[i]!, mediaTypeOf(files[i]!), { location: true }); n++ } }
  await Promise.all([worker(), worker()])
  ;(globalThis as { gc?: () => void }).gc?.()
  const m = process.memoryUsage()
  console.log('round', round, 'rss', (m.rss / 2 ** 20).toFixed(0), 'heap', (m.heapUsed / 2 ** 20).toFixed(0), 'external', (m.external / 2 ** 20).toFixed(0), 'arrayBuffers', (m.arrayBuffers / 2 ** 20).toFixed(0))
}
const s = (performance.now() - t) / 1000
console.log(n, 'described in', s.toFixed(1), 's', (n / s).toFixed(0), '/s; rss start', (rss0 / 2 ** 20).toFixed(0))
