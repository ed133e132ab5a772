// coffer-photos' progress bar moves within the files in flight (what the library's progress events
// say of each), not only when a file ends; a file that ends counts once, whole.
import { Writable } from 'node:stream'
import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'
import { consoleOutput } from './output.ts'
import { transferProgress } from './transfer-progress.ts'

/** A terminal that keeps what is drawn on it. */
function terminal(): { stream: Writable & { isTTY: true; columns: number }; lastLine: () => string } {
  const writes: string[] = []
  const write = (chunk: Buffer, _encoding: BufferEncoding, done: () => void): void => {
    writes.push(chunk.toString())
    done()
  }
  const stream = Object.assign(new Writable({ write }), { isTTY: true as const, columns: 200 })
  // The last state drawn: the bar is redrawn whole by one write (cursor moves around it), so the
  // last write with text in it, escape codes left out, after its last carriage return.
  const lastLine = () =>
    writes
      .flatMap((text) => stripVTControlCharacters(text).split('\r'))
      .map((line) => line.trim())
      .filter((line) => line !== '')
      .at(-1) ?? ''
  return { stream, lastLine }
}

describe('the transfer progress', () => {
  it('counts the bytes of the files in flight as they go, and a finished file once', async () => {
    const { stream, lastLine } = terminal()
    const out = consoleOutput(false, { stdout: stream, stderr: stream })
    const progress = transferProgress(out, { files: 2, bytes: 100 * 1024 * 1024 })
    progress.moving('a.mp4', 30 * 1024 * 1024)
    progress.moving('b.mp4', 10 * 1024 * 1024)
    progress.stop()
    expect(lastLine()).toMatch(/0\/2 files \| 40\.0 MiB of 100\.0 MiB/)

    const again = terminal()
    const next = transferProgress(consoleOutput(false, { stdout: again.stream, stderr: again.stream }), { files: 2, bytes: 100 * 1024 * 1024 })
    next.moving('a.mp4', 30 * 1024 * 1024)
    next.moving('b.mp4', 10 * 1024 * 1024)
    next.advance(60 * 1024 * 1024, 'a.mp4')
    next.stop()
    expect(again.lastLine()).toMatch(/1\/2 files \| 70\.0 MiB of 100\.0 MiB/)
  })
})
