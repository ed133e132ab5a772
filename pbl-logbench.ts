import { pino } from 'pino'
import { createLogger } from './src/http/logging.ts'
import fs from 'node:fs'
const N = 100_000
function run(perLine: (i: number) => void) {
  return new Promise<number>((resolve) => {
    let i = 0
    const t0 = process.cpuUsage()
    const step = () => {
      for (let k = 0; k < 30 && i < N; k++, i++) perLine(i)
      if (i < N) setImmediate(step)
      else { const c = process.cpuUsage(t0); resolve((c.user + c.system) / N) }
    }
    step()
  })
}
const line = (log: any) => (i: number) => log.child({ request_id: 'abcdef01-2345-6789-abcd-ef0123456789' }).info({ method: 'GET', route: '/v1/profile', statusCode: 200, responseTime: 0.123 + i / 1e9 }, 'request completed')
const d = (o: object) => line(createLogger('info', pino.destination({ dest: fs.openSync('/dev/null', 'w'), sync: false, ...o })))
const variants: Record<string, (i: number) => void> = {
  'default': d({}), '8K': d({ maxWrite: 8192 }), '4K': d({ maxWrite: 4096 }), '2K': d({ maxWrite: 2048 }), '1K': d({ maxWrite: 1024 }),
}
const best: Record<string, number> = {}
for (let r = 0; r < 8; r++) for (const [k, f] of Object.entries(variants)) { const v = await run(f); best[k] = Math.min(best[k] ?? 1e9, v) }
console.log(best)
