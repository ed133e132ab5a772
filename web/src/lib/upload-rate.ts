// The speed and time left of an upload as a whole (the upload panel; decision 0058): the bytes
// done, sampled about once a second, over a moving window of the last few seconds. The bytes
// done are what the library tells of each file (uploadFraction × its size), so a photo's two
// reads from memory count as its size once; the speed is that, a second, not the network's.

/** The moving window: the speed is the bytes done over about the last 5 seconds. */
export const WINDOW_MS = 5_000
/** No speed until the samples span this long: a first sample alone says nothing. */
export const LEAST_SPAN_MS = 1_000

interface Sample {
  readonly at: number
  readonly done: number
}

/** Samples of the bytes done (at ms on any steady clock) and what follows from them. */
export class UploadRate {
  #samples: Sample[] = []

  /** Records the bytes done at `at`. Bytes done that went back (a file started again) start the window again. */
  sample(at: number, done: number): void {
    const last = this.#samples.at(-1)
    if (last !== undefined && (done < last.done || at < last.at)) this.#samples = []
    this.#samples.push({ at, done })
    // Keep one sample at or before the window's start, so the window spans all of WINDOW_MS.
    while (this.#samples.length > 2 && this.#samples[1]!.at <= at - WINDOW_MS) this.#samples.shift()
  }

  /** Forgets every sample (the uploads ended). */
  reset(): void {
    this.#samples = []
  }

  /** Bytes a second over the window; null until the samples span LEAST_SPAN_MS. */
  get speed(): number | null {
    const first = this.#samples[0]
    const last = this.#samples.at(-1)
    if (first === undefined || last === undefined || last.at - first.at < LEAST_SPAN_MS) return null
    return ((last.done - first.done) * 1000) / (last.at - first.at)
  }

  /** Seconds left for `remaining` bytes at the current speed; null when the speed is unknown or 0. */
  secondsLeft(remaining: number): number | null {
    const speed = this.speed
    if (remaining <= 0) return 0
    return speed === null || speed <= 0 ? null : remaining / speed
  }
}
