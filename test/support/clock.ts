import type { Clock } from '../../src/deps.ts'

/** The one substitution tests make: a clock they can move. Starts at the real time. */
export interface TestClock extends Clock {
  set(ms: number): void
  advance(ms: number): void
}

export function testClock(start = Date.now()): TestClock {
  let now = start
  return {
    now: () => now,
    set: (ms) => {
      now = ms
    },
    advance: (ms) => {
      now += ms
    },
  }
}
