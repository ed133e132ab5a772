// How every screen writes sizes, counts and times: in the browser's language and time zone, and
// only here (decision 0020, "The libraries by name"; the CLI's binary units stay the CLI's).
const UNITS = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte'] as const

/** A size in decimal units, as file managers show them, at most one decimal: "1.4 MB", "512 bytes". */
export function sizeText(bytes: number): string {
  let value = bytes
  let unit = 0
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000
    unit++
  }
  return new Intl.NumberFormat(undefined, { style: 'unit', unit: UNITS[unit], unitDisplay: unit === 0 ? 'long' : 'short', maximumFractionDigits: 1 }).format(
    value,
  )
}

const NUMBER = new Intl.NumberFormat()

/** A count of things: "1 photo", "1,024 photos" (`many` is `one` + "s" unless given). */
/** A count alone, as "1,234". */
export const numberText = (count: number): string => NUMBER.format(count)

export function countText(count: number, one: string, many = `${one}s`): string {
  return `${NUMBER.format(count)} ${count === 1 ? one : many}`
}

const WHEN = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/** An RFC 3339 time (or ms since the epoch) as "12 Mar 2026, 14:02"; the text itself when it is not a time. */
export function whenText(time: string | number): string {
  const date = new Date(time)
  return Number.isNaN(date.getTime()) ? String(time) : WHEN.format(date)
}

const MOMENT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' })

/** A moment to the second (when a photo was taken), as "12 Mar 2026, 14:02:07". */
export const momentText = (time: string | number): string => MOMENT.format(new Date(time))

const WALL_CLOCK = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' })

/**
 * A wall clock to the second, as "12 Mar 2026, 14:02:07": ms of that wall-clock time as if it
 * were UTC (a date taken's `local`, src/client/taken.ts), so read in UTC whatever the browser's zone.
 */
export const wallClockText = (local: number): string => WALL_CLOCK.format(new Date(local))

/** An offset from UTC in minutes as "UTC+02:00", "UTC−07:00" (a minus sign), "UTC+05:45"; "UTC" for 0. */
export function utcOffsetText(minutes: number): string {
  if (minutes === 0) return 'UTC'
  const magnitude = Math.abs(minutes)
  const two = (n: number) => String(n).padStart(2, '0')
  return `UTC${minutes < 0 ? '\u2212' : '+'}${two(Math.floor(magnitude / 60))}:${two(magnitude % 60)}`
}

const CLOCK = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' })

/** The time of day of a moment soon (a code's expiry), as "14:02:07". */
export const clockText = (time: string | number): string => CLOCK.format(new Date(time))

/**
 * A month as one number, year × 12 + month (0 for January), in the browser's time zone: what the
 * grid groups photos by and its date scrubber names. Answers -1 for a text that is not a time.
 */
export function monthOf(time: string | number): number {
  const date = new Date(time)
  return Number.isNaN(date.getTime()) ? -1 : date.getFullYear() * 12 + date.getMonth()
}

/** The year of a month of monthOf. */
export const yearOf = (month: number): number => Math.floor(month / 12)

const MONTH = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' })

/** A month of monthOf as "March 2024"; "Undated" for -1. */
export function monthText(month: number): string {
  return month < 0 ? 'Undated' : MONTH.format(Date.UTC(yearOf(month), month % 12, 15))
}

const MONTH_SHORT = new Intl.DateTimeFormat(undefined, { month: 'short', timeZone: 'UTC' })

/** A month of monthOf as "Mar" (the scrubber's labels within one year). */
export const monthShortText = (month: number): string => (month < 0 ? 'Undated' : MONTH_SHORT.format(Date.UTC(yearOf(month), month % 12, 15)))

const DAY_MS = 86_400_000

/** A day as one number, days since 1 January 1970, of a time in the browser's time zone. */
export function dayOf(time: number): number {
  const date = new Date(time)
  return Math.floor(Date.UTC(date.getFullYear(), date.getMonth(), date.getDate()) / DAY_MS)
}

/** The day of a wall-clock time written as if it were UTC (taken.ts `local`). */
export const dayOfWallClock = (local: number): number => Math.floor(local / DAY_MS)

/** The month (monthOf's numbering) of a day of dayOf. */
export function monthOfDay(day: number): number {
  const date = new Date(day * DAY_MS)
  return date.getUTCFullYear() * 12 + date.getUTCMonth()
}

const DAY = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' })
const DAY_WITH_YEAR = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' })

/** A day of dayOf as "Sat 4 Jul" (the Photos screen's day headings, under their month's); with its year when asked. */
export const dayText = (day: number, withYear = false): string => (withYear ? DAY_WITH_YEAR : DAY).format(day * DAY_MS)

/** A number in this browser's language with at most `digits` decimals ("2.8", "12.2", "35"). */
export const decimalText = (value: number, digits: number): string => new Intl.NumberFormat(undefined, { maximumFractionDigits: digits }).format(value)

const PERCENT = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 0 })

/** A share of a whole (0 to 1) as "37%", never 100% before it is all done (rounded down). */
export const percentText = (fraction: number): string => PERCENT.format(Math.floor(Math.min(1, Math.max(0, fraction)) * 100) / 100)

/** A speed in bytes a second as "2.4 MB/s". */
export const speedText = (bytesPerSecond: number): string => `${sizeText(bytesPerSecond)}/s`

/**
 * The time an upload has left, from an estimate in seconds (null when there is none yet):
 * "about 40 s left", "about 3 min left", "about 2 h 10 min left"; "estimating…" without one.
 */
export function timeLeftText(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return 'estimating…'
  if (seconds < 10) return 'a few seconds left'
  if (seconds < 60) return `about ${NUMBER.format(Math.ceil(seconds / 10) * 10)} s left`
  const minutes = Math.round(seconds / 60)
  if (minutes < 60) return `about ${NUMBER.format(minutes)} min left`
  const hours = Math.floor(minutes / 60)
  const rest = minutes % 60
  return `about ${NUMBER.format(hours)} h${rest === 0 ? '' : ` ${NUMBER.format(rest)} min`} left`
}
