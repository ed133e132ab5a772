// What the figures were measured on, printed with them.
import { readFileSync } from 'node:fs'
import os from 'node:os'

export interface Machine {
  readonly cores: number
  readonly cpuModel: string
  readonly memoryGiB: number
  readonly node: string
  readonly kernel: string
  readonly threadpool: string
  readonly date: string
}

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'))
    if (line !== undefined) return line.slice(line.indexOf(':') + 1).trim()
  } catch {
    // not Linux: fall through
  }
  return os.cpus()[0]?.model ?? 'unknown'
}

export function describeMachine(): Machine {
  return {
    cores: os.availableParallelism(),
    cpuModel: cpuModel(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel: `${os.type()} ${os.release()}`,
    threadpool: process.env.UV_THREADPOOL_SIZE ?? '4 (default)',
    date: new Date().toISOString(),
  }
}

export function formatMachine(m: Machine): string {
  return `${m.cores} cores (nproc), ${m.cpuModel}, ${m.memoryGiB} GiB RAM, Node ${m.node}, ${m.kernel}, UV_THREADPOOL_SIZE ${m.threadpool}, ${m.date}`
}
