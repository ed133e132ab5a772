// coffer-photos' progress: bytes move within the files in flight (not only when a file ends);
// files skipped unchanged are counted apart and out of the rate and time left; a warning or a
// report line lands on a line of its own with the progress drawn again under it; the summary
// after stop() starts on a clean line; a line never wraps.
import { describe, expect, it } from 'vitest'
import { terminal } from '../../../test/support/terminal.ts'
import { consoleOutput } from './output.ts'
import { TransferMeter, transferLine, transferProgress } from './transfer-progress.ts'

const MiB = 1024 * 1024
const GiB = 1024 * MiB

/** A clock the test moves. */
function clock(start = 1_000_000) {
  let now = start
  return {
    now: () => now,
    advance: (ms: number): void => {
      now += ms
    },
  }
}

describe('the transfer meter', () => {
  it('counts the bytes of the files in flight as they go, and a finished file once', () => {
    const time = clock()
    const meter = new TransferMeter({ files: 2, bytes: 100 * MiB }, time.now)
    meter.moving('a.mp4', 30 * MiB)
    meter.moving('b.mp4', 10 * MiB)
    expect(meter.state()).toMatchObject({ files: 0, moved: 40 * MiB })
    meter.done('a.mp4', 60 * MiB, false)
    expect(meter.state()).toMatchObject({ files: 1, moved: 70 * MiB, toMove: 100 * MiB })
  })

  it('keeps unchanged files out of the bytes to move, the rate and the time left', () => {
    const time = clock()
    const meter = new TransferMeter({ files: 3, bytes: 5 * GiB + 300 * MiB }, time.now)
    time.advance(1000)
    meter.done('old-1.mov', 2.5 * GiB, true)
    meter.done('old-2.mov', 2.5 * GiB, true)
    time.advance(9000)
    meter.moving('new.mov', 30 * MiB)
    const state = meter.state()
    expect(state).toMatchObject({ files: 2, skipped: 2, moved: 30 * MiB, toMove: 300 * MiB, rate: 3 * MiB, secondsLeft: 90 })
    expect(transferLine(state, 'new.mov')).toBe('2/3 files (2 unchanged) | 30.0 MiB of 300.0 MiB | 3.0 MiB/s | 1m30s left | new.mov')
  })

  it('has no rate nor time left before a byte moved', () => {
    const time = clock()
    const meter = new TransferMeter({ files: 1, bytes: 300 * MiB }, time.now)
    time.advance(5000)
    expect(transferLine(meter.state(), '')).toBe('0/1 files | 0 B of 300.0 MiB | 0 B/s | -- left')
  })
})

describe('the transfer progress on a terminal', () => {
  it('draws the bytes of a file as its parts go, long before it ends', () => {
    const { stream, screen } = terminal()
    const time = clock()
    const progress = transferProgress(consoleOutput(false, { stdout: stream, stderr: stream }), { files: 1, bytes: 300 * MiB }, { now: time.now })
    time.advance(10) // sooner than the redraw interval: each part is a step large enough to be drawn at once
    progress.moving('video.mp4', 8 * MiB)
    expect(screen().at(-1)).toMatch(/^0\/1 files \| 8\.0 MiB of 300\.0 MiB/)
    time.advance(10)
    progress.moving('video.mp4', 16 * MiB)
    expect(screen().at(-1)).toMatch(/^0\/1 files \| 16\.0 MiB of 300\.0 MiB/)
  })

  it('puts a warning and a report line each on a line of its own, and draws the progress again under them', () => {
    const { stream, screen } = terminal()
    const time = clock()
    const out = consoleOutput(false, { stdout: stream, stderr: stream })
    const progress = transferProgress(out, { files: 2, bytes: 100 * MiB }, { now: time.now })
    time.advance(1000)
    progress.moving('a.jpg', 40 * MiB)
    out.warn('coffer-photos: the server did not answer (ECONNRESET); trying again in 1 s')
    progress.advance(50 * MiB, 'a.jpg')
    out.say('stored  a.jpg  (50.0 MiB)')
    expect(screen()).toEqual([
      'coffer-photos: the server did not answer (ECONNRESET); trying again in 1 s',
      'stored  a.jpg  (50.0 MiB)',
      expect.stringMatching(/^1\/2 files \| 50\.0 MiB of 100\.0 MiB/),
    ])
  })

  it('clears the line at the end: the summary starts on a clean line and nothing above is written over', () => {
    const { stream, screen } = terminal()
    const time = clock()
    const out = consoleOutput(false, { stdout: stream, stderr: stream })
    out.say('backing up 1 file')
    const progress = transferProgress(out, { files: 1, bytes: 10 * MiB }, { now: time.now })
    progress.moving('a.jpg', 5 * MiB)
    out.warn('coffer-photos: a.jpg: fetch failed; trying again (attempt 2)')
    progress.advance(10 * MiB, 'a.jpg')
    progress.stop()
    out.say('1 of 1 files: 1 stored')
    out.warn('a warning after the end')
    expect(screen()).toEqual([
      'backing up 1 file',
      'coffer-photos: a.jpg: fetch failed; trying again (attempt 2)',
      '1 of 1 files: 1 stored',
      'a warning after the end',
      '',
    ])
  })

  it('never draws a line wider than the terminal', () => {
    const { stream, screen } = terminal(50)
    const time = clock()
    const progress = transferProgress(consoleOutput(false, { stdout: stream, stderr: stream }), { files: 1, bytes: 10 * MiB }, { now: time.now })
    progress.moving('a/very/long/folder/name/and/a/photo.jpg', 5 * MiB)
    expect(screen()).toHaveLength(1)
    expect(screen()[0]!.length).toBeLessThan(50)
    expect(screen()[0]).toMatch(/…$/)
  })
})
