// Progress of a long command on stderr: on a terminal one line rewritten in place (at most ten
// times a second), elsewhere (a log, a pipe) one line every ten seconds. stdout keeps the result.
import type { TextStream } from './io.ts'

const TTY_EVERY_MS = 100
const LOG_EVERY_MS = 10_000

export interface Progress {
  update(text: string): void
  /** Clears the line on a terminal; call before printing the result. */
  done(): void
}

/** On `stream`: the command's stderr. */
export function progressOnStderr(stream: TextStream): Progress {
  const tty = stream.isTTY === true
  // Off a terminal, the first line comes after ten seconds: a quick run writes only its result.
  let last = tty ? 0 : Date.now()
  let shown = false
  return {
    update(text) {
      const now = Date.now()
      if (now - last < (tty ? TTY_EVERY_MS : LOG_EVERY_MS)) return
      last = now
      if (tty) {
        stream.write(`\r\x1b[K${text}`)
        shown = true
      } else stream.write(`${text}\n`)
    },
    done() {
      if (shown) stream.write('\r\x1b[K')
      shown = false
    },
  }
}

export function bytesText(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`
}
