// The grid's layout (docs/decisions/0032-grid-of-a-million.md): the rows of N photos grouped by
// month at a width, each month a heading row then rows of `columns` tiles. Given each photo's day
// too (the Photos screen, decision 0055), the sections are days: each a heading row (taller at
// the first day of a month, which also heads the month) then its rows. Computed in a worker
// (workers/layout.worker.ts) and handed back as typed arrays, a few MB for a million photos; the
// page's thread only looks rows up in them (binary searches), whatever the album's size.
export interface Layout {
  /** Photos laid out. */
  readonly count: number
  readonly columns: number
  /** Each row's top, in CSS pixels from the grid's top; one more at the end: the grid's height. */
  readonly rowTop: Float64Array
  /** Each row's first photo (a heading row: its month's first photo). */
  readonly rowItem: Int32Array
  /** Each row's section (month). */
  readonly rowSection: Int32Array
  /** Each section's heading row. */
  readonly sectionRow: Int32Array
  /** Each section's first photo; one more at the end: `count`. */
  readonly sectionItem: Int32Array
  /** Each section's month (lib/format.ts monthOf). */
  readonly sectionMonth: Int32Array
  /** Each section's day (lib/format.ts dayOf), or NO_DAY in every section when the photos are grouped by month only. */
  readonly sectionDay: Int32Array
}

/** A section's day when the photos are grouped by month only (a day number is any other Int32: days before 1970 are negative). */
export const NO_DAY = -0x80000000

export interface Sizes {
  readonly columns: number
  /** A row of tiles with the gap below it. */
  readonly rowHeight: number
  /** A month's heading row (a day's, when grouped by day). */
  readonly headingHeight: number
  /** Grouped by day: the heading row of a month's first day, which names the month too. */
  readonly monthHeadingHeight?: number
}

/**
 * The layout of photos whose months are `months` (in grid order: a new section at each change of
 * month), or, given `days` (same length), whose days are `days` (a new section at each change of
 * day or month).
 */
export function computeLayout(months: Int32Array, { columns, rowHeight, headingHeight, monthHeadingHeight = headingHeight }: Sizes, days?: Int32Array): Layout {
  const count = months.length
  const starts = (i: number): boolean => i === 0 || months[i] !== months[i - 1] || (days !== undefined && days[i] !== days[i - 1])
  let sections = 0
  for (let i = 0; i < count; i++) if (starts(i)) sections++
  const sectionItem = new Int32Array(sections + 1)
  const sectionMonth = new Int32Array(sections)
  const sectionDay = new Int32Array(sections).fill(NO_DAY)
  let rows = 0
  for (let i = 0, s = 0; i < count; i++) {
    if (starts(i)) {
      sectionItem[s] = i
      sectionMonth[s] = months[i]!
      if (days !== undefined) sectionDay[s] = days[i]!
      s++
    }
  }
  sectionItem[sections] = count
  for (let s = 0; s < sections; s++) rows += 1 + Math.ceil((sectionItem[s + 1]! - sectionItem[s]!) / columns)
  const rowTop = new Float64Array(rows + 1)
  const rowItem = new Int32Array(rows)
  const rowSection = new Int32Array(rows)
  const sectionRow = new Int32Array(sections)
  let row = 0
  let top = 0
  for (let s = 0; s < sections; s++) {
    sectionRow[s] = row
    rowTop[row] = top
    rowItem[row] = sectionItem[s]!
    rowSection[row] = s
    top += days !== undefined && (s === 0 || sectionMonth[s] !== sectionMonth[s - 1]) ? monthHeadingHeight : headingHeight
    row++
    for (let item = sectionItem[s]!; item < sectionItem[s + 1]!; item += columns) {
      rowTop[row] = top
      rowItem[row] = item
      rowSection[row] = s
      top += rowHeight
      row++
    }
  }
  rowTop[rows] = top
  return { count, columns, rowTop, rowItem, rowSection, sectionRow, sectionItem, sectionMonth, sectionDay }
}

/** True when section `s` is the first of its month (grouped by month, every section is). */
export const startsMonth = (layout: Layout, s: number): boolean => s === 0 || layout.sectionMonth[s] !== layout.sectionMonth[s - 1]

/** The grid's height. */
export const heightOf = (layout: Layout): number => layout.rowTop[layout.rowTop.length - 1]!

/** The number of rows. */
export const rowsOf = (layout: Layout): number => layout.rowItem.length

/** The last index of `sorted` whose value is at most `value` (0 when none is). */
function lastAtMost(sorted: Float64Array | Int32Array, value: number, length: number): number {
  let low = 0
  let high = length - 1
  while (low < high) {
    const middle = (low + high + 1) >> 1
    if (sorted[middle]! <= value) low = middle
    else high = middle - 1
  }
  return Math.max(0, low)
}

/** The row at `y` pixels from the grid's top. */
export const rowAt = (layout: Layout, y: number): number => lastAtMost(layout.rowTop, y, rowsOf(layout))

/** The row of tiles holding photo `item` (a heading row shares its first photo and comes before it). */
export const rowOfItem = (layout: Layout, item: number): number => lastAtMost(layout.rowItem, item, rowsOf(layout))

/** True when `row` is a section's heading (a month's, or a day's). */
export const isHeading = (layout: Layout, row: number): boolean => layout.sectionRow[layout.rowSection[row]!] === row

/** The photos of a row of tiles: [first, end). */
export function itemsOf(layout: Layout, row: number): [number, number] {
  const first = layout.rowItem[row]!
  return [first, Math.min(first + layout.columns, layout.sectionItem[layout.rowSection[row]! + 1]!)]
}
