// `backup --include` / `--exclude`: which walked files a backup takes, by glob patterns matched
// with Node's own path.matchesGlob (docs/photos.md, "Choosing files"). A pattern with a "/" is
// matched against the file's whole path in the folder ("2024/**/*.mov"); one without, against
// its name alone, at any depth ("*.mov"), as restic and .gitignore do.
import path from 'node:path'

/** Whether a file, by its path relative to the folder ("/" between names), is backed up. */
export type PathFilter = (relative: string) => boolean

/** An --include or --exclude pattern that cannot match anything (empty). */
export class PatternError extends Error {
  override readonly name = 'PatternError'
}

function matcher(pattern: string): PathFilter {
  if (pattern.trim() === '') throw new PatternError('a pattern cannot be empty')
  if (!pattern.includes('/')) return (relative) => path.posix.matchesGlob(path.posix.basename(relative), pattern)
  // A leading "/" or "./" anchors a pattern at the folder, as it reads.
  const whole = pattern.replace(/^\.?\//, '')
  return (relative) => path.posix.matchesGlob(relative, whole)
}

/** Files matching any of `include` (every file when none is given) and none of `exclude`. */
export function pathFilter(include: readonly string[], exclude: readonly string[]): PathFilter {
  const included = include.map(matcher)
  const excluded = exclude.map(matcher)
  return (relative) => (included.length === 0 || included.some((matches) => matches(relative))) && !excluded.some((matches) => matches(relative))
}

/** The files of `files` that `filter` keeps. */
export async function* filtered<T extends { readonly path: string }>(files: AsyncIterable<T> | Iterable<T>, filter: PathFilter): AsyncGenerator<T> {
  for await (const file of files) if (filter(file.path)) yield file
}
