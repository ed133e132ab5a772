// The live progress of a backup or restore on stderr (cli-progress): files, bytes, rate and
// time left, on one line rewritten in place on a terminal; off a terminal (a log), a line every
// ten seconds. Nothing with --json, whose lines on stdout carry the same. The bytes count the
// files done and, within the files in flight, what the library's progress events say of each
// (a backup: src/client's UploadProgress); a restore counts whole files.
import { SingleBar } from 'cli-progress'
import { bytesText } from '../progress.ts'
import type { Output, Verbosity } from './output.ts'

export interface TransferProgress {
  /** One file done, of `bytes` bytes: `path` (its name unless given) is no longer in flight. */
  advance(bytes: number, name: string, path?: string): void
  /** A file in flight: `bytes` of its size are done so far. */
  moving(path: string, bytes: number): void
  /** A warning above the bar, on stderr (a failure, a retry). */
  note(text: string): void
  /** A line of the report above the bar, on stdout (--verbose: a file done). */
  line(text: string): void
  stop(): void
}

function durationText(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--'
  const s = Math.round(seconds)
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
      : `${s}s`
}

export function transferProgress(out: Output, totals: { readonly files: number; readonly bytes: number }, verbosity: Verbosity = 'normal'): TransferProgress {
  if (out.json || verbosity === 'quiet')
    return { advance: () => {}, moving: () => {}, note: (text) => out.warn(text), line: (text) => out.say(text), stop: () => {} }
  const started = Date.now()
  let files = 0
  /** Bytes of the files done, and of each file in flight so far. */
  let finished = 0
  const inFlight = new Map<string, number>()
  let bytes = 0
  let stopped = false
  const bar = new SingleBar({
    stream: out.progress,
    format: '{bar} {files}/{totalFiles} files | {bytesDone} of {bytesTotal} | {rate}/s | {left} left | {name}',
    barsize: 24,
    hideCursor: false,
    noTTYOutput: true,
    notTTYSchedule: 10_000,
    etaBuffer: 50,
  })
  const payload = (name: string) => {
    const seconds = (Date.now() - started) / 1000
    const rate = seconds > 0 ? bytes / seconds : 0
    return {
      files,
      totalFiles: totals.files,
      bytesDone: bytesText(bytes),
      bytesTotal: bytesText(totals.bytes),
      rate: bytesText(rate),
      left: durationText(rate > 0 ? (totals.bytes - bytes) / rate : Infinity),
      name: name.length > 40 ? `…${name.slice(-39)}` : name,
    }
  }
  bar.start(Math.max(totals.bytes, 1), 0, payload(''))
  const draw = (name: string) => {
    bytes = finished
    for (const done of inFlight.values()) bytes += done
    bar.update(Math.min(bytes, Math.max(totals.bytes, 1)), payload(name))
  }
  return {
    advance(size, name, path = name) {
      files++
      finished += size
      inFlight.delete(path)
      draw(name)
    },
    moving(path, done) {
      inFlight.set(path, done)
      draw(path)
    },
    note(text) {
      if (out.progress.isTTY === true) out.progress.write('\r\x1b[K')
      out.progress.write(`${text}\n`)
    },
    line(text) {
      if (out.progress.isTTY === true) out.progress.write('\r\x1b[K')
      out.say(text)
    },
    stop() {
      if (stopped) return
      stopped = true
      bar.stop()
    },
  }
}
