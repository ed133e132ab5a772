// Times as a person reads them, in the browser's language and time zone.
const FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/** An RFC 3339 time (or ms since the epoch) as "12 Mar 2026, 14:02"; the text itself when it is not a time. */
export function whenText(time: string | number): string {
  const date = new Date(time)
  return Number.isNaN(date.getTime()) ? String(time) : FORMAT.format(date)
}
