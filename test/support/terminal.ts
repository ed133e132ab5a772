// A terminal for tests of what coffer-photos draws on one: a writable with isTTY and columns that
// applies what is written as a terminal does ("\r" to the line's start, ESC[K clears to its end,
// "\n" to the next line), keeping the lines shown and every write.
import { Writable } from 'node:stream'

export function terminal(columns = 200) {
  const lines: string[] = ['']
  const writes: string[] = []
  let column = 0
  const apply = (text: string): void => {
    for (let i = 0; i < text.length; i++) {
      const row = lines.length - 1
      if (text.startsWith('\x1b[K', i)) {
        lines[row] = lines[row]!.slice(0, column)
        i += 2
      } else if (text[i] === '\r') column = 0
      else if (text[i] === '\n') {
        lines.push('')
        column = 0
      } else {
        const line = lines[row]!
        lines[row] = line.slice(0, column) + text[i] + line.slice(column + 1)
        column++
      }
    }
  }
  const write = (chunk: Buffer, _encoding: BufferEncoding, done: () => void): void => {
    writes.push(chunk.toString())
    apply(chunk.toString())
    done()
  }
  const stream = Object.assign(new Writable({ write }), { isTTY: true as const, columns })
  return { stream, screen: (): string[] => [...lines], writes: (): string[] => [...writes] }
}
