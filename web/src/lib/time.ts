// Times as a person reads them, in the browser's language and time zone.
const FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/** An RFC 3339 time (or ms since the epoch) as "12 Mar 2026, 14:02"; the text itself when it is not a time. */
export function whenText(time: string | number): string {
  const date = new Date(time)
  return Number.isNaN(date.getTime()) ? String(time) : FORMAT.format(date)
}

/**
 * A month as one number, year × 12 + month (0 for January), in the browser's time zone: what the
 * grid groups photos by and its date scrubber names. Answers -1 for a text that is not a time.
 */
export function monthOf(time: string | number): number {
  const date = new Date(time)
  return Number.isNaN(date.getTime()) ? -1 : date.getFullYear() * 12 + date.getMonth()
}

const MONTH = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' })

/** A month of monthOf as "March 2024"; "Undated" for -1. */
export function monthText(month: number): string {
  return month < 0 ? 'Undated' : MONTH.format(Date.UTC(Math.floor(month / 12), month % 12, 15))
}

/** The year of a month of monthOf. */
export const yearOf = (month: number): number => Math.floor(month / 12)

const MONTH_SHORT = new Intl.DateTimeFormat(undefined, { month: 'short', timeZone: 'UTC' })

/** A month of monthOf as "Mar" (the scrubber's labels within one year). */
export const monthShortText = (month: number): string => (month < 0 ? 'Undated' : MONTH_SHORT.format(Date.UTC(yearOf(month), month % 12, 15)))
