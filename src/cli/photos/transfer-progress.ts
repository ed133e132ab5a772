// The live progress of a backup, a restore or a verify on stderr: files, bytes, rate and time
// left, on one line rewritten in place on a terminal; off a terminal (a log), a line every ten
// seconds. Nothing with --json (its lines on stdout carry the same) or --quiet.
//
// - Bytes move within the files in flight, as the library reports them (a backup: each piece
//   read and each part sent, src/client's UploadProgress; a restore: each chunk written), not
//   only when a file ends; a file that ends counts once, whole.
// - Files skipped without being read (unchanged since the last run, already restored) are
//   counted apart ("12 unchanged"): they leave the bytes to move, the rate and the time left,
//   which count only the bytes actually moved.
// - A warning (a failure, a retry, the client library's too) or a report line (--verbose) clears
//   the progress line, is written on a line of its own, and the progress is drawn again under it
//   (Output.live). stop() clears it, so that the summary after it starts on a clean line and
//   nothing above is written over.
import { bytesText } from '../progress.ts'
import type { TextStream } from '../io.ts'
import type { Output, Verbosity } from './output.ts'

/** What the progress is of: files and their bytes. */
export interface TransferPlan {
  readonly files: number
  readonly bytes: number
}

/** Where a transfer is, as drawn. */
export interface TransferState {
  readonly files: number
  readonly totalFiles: number
  /** Files skipped without being moved (unchanged), and their bytes. */
  readonly skipped: number
  /** Bytes moved so far: of the files done and of those in flight. */
  readonly moved: number
  /** Bytes to move in all: the totals' less the skipped files'. */
  readonly toMove: number
  /** Bytes a second over the bytes moved since the start; 0 before any. */
  readonly rate: number
  /** Seconds left at that rate; null before any byte moved. */
  readonly secondsLeft: number | null
}

/** Counts a transfer's files and bytes; `now` is the clock (ms). */
export class TransferMeter {
  readonly #totals: TransferPlan
  readonly #now: () => number
  readonly #started: number
  #files = 0
  #skipped = 0
  #skippedBytes = 0
  #finished = 0
  readonly #inFlight = new Map<string, number>()

  constructor(totals: TransferPlan, now: () => number = Date.now) {
    this.#totals = totals
    this.#now = now
    this.#started = now()
  }

  /** A file in flight: `bytes` of it moved so far. */
  moving(path: string, bytes: number): void {
    this.#inFlight.set(path, bytes)
  }

  /** A file done, of `size` bytes; `skipped` when none of it was moved. */
  done(path: string, size: number, skipped: boolean): void {
    this.#files++
    this.#inFlight.delete(path)
    if (skipped) {
      this.#skipped++
      this.#skippedBytes += size
    } else this.#finished += size
  }

  state(): TransferState {
    let moved = this.#finished
    for (const bytes of this.#inFlight.values()) moved += bytes
    const toMove = Math.max(0, this.#totals.bytes - this.#skippedBytes)
    const seconds = (this.#now() - this.#started) / 1000
    const rate = seconds > 0 && moved > 0 ? moved / seconds : 0
    return {
      files: this.#files,
      totalFiles: this.#totals.files,
      skipped: this.#skipped,
      moved: Math.min(moved, toMove),
      toMove,
      rate,
      secondsLeft: rate > 0 ? Math.max(0, toMove - moved) / rate : null,
    }
  }
}

function durationText(seconds: number | null): string {
  if (seconds === null) return '--'
  const s = Math.round(seconds)
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
      : `${s}s`
}

/** The progress line: "3/10 files (2 unchanged) | 40.0 MiB of 100.0 MiB | 3.2 MiB/s | 19s left | name". */
export function transferLine(state: TransferState, name: string, skippedWord = 'unchanged'): string {
  const shown = name.length > 40 ? `…${name.slice(-39)}` : name
  return [
    `${state.files}/${state.totalFiles} files${state.skipped > 0 ? ` (${state.skipped} ${skippedWord})` : ''}`,
    `${bytesText(state.moved)} of ${bytesText(state.toMove)}`,
    `${bytesText(state.rate)}/s`,
    `${durationText(state.secondsLeft)} left`,
    ...(shown === '' ? [] : [shown]),
  ].join(' | ')
}

export interface TransferProgress {
  /** One file done, of `bytes` bytes: `path` (its name unless given) is no longer in flight; `skipped` when nothing of it was moved. */
  advance(bytes: number, name: string, options?: { readonly path?: string; readonly skipped?: boolean }): void
  /** A file in flight: `bytes` of its size are done so far; `name` is shown (`path` unless given). */
  moving(path: string, bytes: number, name?: string): void
  /** Clears the progress line: call before the summary. */
  stop(): void
}

const TTY_EVERY_MS = 100
const LOG_EVERY_MS = 10_000
/** On a terminal, a change of this share of the bytes is drawn at once, however soon after the last. */
const STEP = 0.01

/** One line on `stream` rewritten in place (a terminal), or written every ten seconds (a log). */
function lineDrawer(stream: TextStream, now: () => number) {
  const tty = stream.isTTY === true
  let shown = ''
  // Off a terminal the first line comes after ten seconds: a quick run writes only its result.
  let last = tty ? Number.NEGATIVE_INFINITY : now()
  const width = (): number => Math.max(20, (stream.columns ?? 80) - 1)
  return {
    /** Draws `text` when due (or `force`d, on a terminal); answers whether it did. */
    draw(text: string, force: boolean): boolean {
      const at = now()
      if (!(tty && force) && at - last < (tty ? TTY_EVERY_MS : LOG_EVERY_MS)) return false
      last = at
      if (!tty) {
        stream.write(`${text}\n`)
        return true
      }
      // Never wider than the terminal: a wrapped line would leave its first half behind on the next redraw.
      shown = text.length > width() ? `${text.slice(0, width() - 1)}…` : text
      stream.write(`\r\x1b[K${shown}`)
      return true
    },
    /** Clears the line; answers whether something was shown (to draw again after a line above it). */
    clear(): boolean {
      if (shown === '') return false
      stream.write('\r\x1b[K')
      shown = ''
      return true
    },
  }
}

export function transferProgress(
  out: Output,
  totals: TransferPlan,
  options: { readonly verbosity?: Verbosity; readonly skippedWord?: string; readonly now?: () => number } = {},
): TransferProgress {
  const { verbosity = 'normal', skippedWord = 'unchanged', now = Date.now } = options
  if (out.json || verbosity === 'quiet') return { advance: () => {}, moving: () => {}, stop: () => {} }
  const meter = new TransferMeter(totals, now)
  const drawer = lineDrawer(out.progress, now)
  let stopped = false
  let drawnShare = 0
  let name = ''
  const draw = (force = false): void => {
    if (stopped) return
    const state = meter.state()
    const share = state.toMove > 0 ? state.moved / state.toMove : 0
    if (drawer.draw(transferLine(state, name, skippedWord), force || Math.abs(share - drawnShare) >= STEP)) drawnShare = share
  }
  // What is said or warned meanwhile (a failure, a retry, --verbose's lines) goes above the line.
  const detach = out.live({ clear: () => drawer.clear(), redraw: () => draw(true) })
  return {
    advance(size, shown, options = {}) {
      meter.done(options.path ?? shown, size, options.skipped === true)
      name = shown
      draw()
    },
    moving(path, bytes, shown = path) {
      meter.moving(path, bytes)
      name = shown
      draw()
    },
    stop() {
      if (stopped) return
      stopped = true
      detach()
      drawer.clear()
    },
  }
}
