// Entries of an append-only list (a history of events, the words of a phrase) with their place in
// it: 1 for the first. The place is the entry's identity, and a React key that stays with it when
// the list grows or is shown newest first.

export interface Numbered<T> {
  readonly entry: T
  /** 1 for the first (the oldest of a history). */
  readonly number: number
}

export function numbered<T>(entries: readonly T[]): Numbered<T>[] {
  return entries.map((entry, index) => ({ entry, number: index + 1 }))
}

/** A history kept oldest first, shown newest first. */
export function newestFirst<T>(entries: readonly T[]): Numbered<T>[] {
  return numbered(entries).reverse()
}
