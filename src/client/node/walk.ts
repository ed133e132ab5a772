// Walking a folder for the files to back up: photos and videos by extension (node/files.ts
// mediaTypeOf knows them, camera RAW and the common video containers among them; an empty one
// too), in a stable order (names sorted, folders as they come), hidden files and folders skipped
// (".name": system files, our own partial restores), symbolic links not followed (a link can loop
// or leave the folder). Streams: a library of any size is walked without listing it all in
// memory. What it skips that a person may expect backed up (a file not a photo or video, a link)
// and a subfolder that cannot be listed (permissions, a failing disk) are told to the caller, who
// names them (decision 0048): the rest of the folder is still walked.
import { lstat, opendir } from 'node:fs/promises'
import path from 'node:path'
import type { MediaFacts } from '../files.ts'
import { BACKED_UP_TYPES } from '../media-types.ts'
import type { Candidate } from '../sync.ts'
import { fileSource, mediaTypeOf, modifiedMs, type DiskFileSource } from './files.ts'

export interface WalkedFile {
  /** Relative to the root, "/" between names. */
  readonly path: string
  readonly file: string
  readonly size: number
  readonly modified: number
  /** The file's identity on its file system (device and inode numbers): a moved or renamed file keeps it. */
  readonly identity: string
}

export { BACKED_UP_TYPES }

/** A subfolder the walk could not list (relative to the root, "/" between names), and why. */
export interface UnreadableFolder {
  readonly path: string
  readonly error: string
}

/** A file the walk leaves out (relative to the root, "/" between names), and why. */
export interface SkippedFile {
  readonly path: string
  readonly reason: string
}

export interface WalkReport {
  /** A subfolder that cannot be listed: skipped. Without it, the walk ends with its error. */
  readonly onUnreadable?: (folder: UnreadableFolder) => void
  /** A file that is not backed up: not a photo or video by its name, a symbolic link, not a regular file. */
  readonly onSkipped?: (file: SkippedFile) => void
}

/**
 * The photos and videos under `root`/`relative`. The folder itself must be listable (it throws
 * otherwise); what else the walk meets and leaves out goes to `report`.
 */
export async function* walkMedia(root: string, relative = '', report: WalkReport = {}): AsyncGenerator<WalkedFile> {
  yield* walkListed(root, relative, await listing(path.join(root, relative)), report)
}

interface Entry {
  readonly name: string
  readonly isDirectory: boolean
  readonly isFile: boolean
  readonly isLink: boolean
}

/** A folder's entries, hidden ones left out, sorted by name. */
async function listing(folder: string): Promise<Entry[]> {
  const entries: Entry[] = []
  for await (const entry of await opendir(folder)) {
    if (entry.name.startsWith('.')) continue
    entries.push({ name: entry.name, isDirectory: entry.isDirectory(), isFile: entry.isFile(), isLink: entry.isSymbolicLink() })
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

async function* walkListed(root: string, relative: string, entries: readonly Entry[], report: WalkReport): AsyncGenerator<WalkedFile> {
  for (const entry of entries) {
    const child = relative === '' ? entry.name : `${relative}/${entry.name}`
    if (entry.isDirectory) {
      let inner: Entry[]
      try {
        inner = await listing(path.join(root, child))
      } catch (error) {
        if (report.onUnreadable === undefined) throw error
        report.onUnreadable({ path: child, error: (error as Error).message })
        continue
      }
      yield* walkListed(root, child, inner, report)
    } else if (entry.isLink) report.onSkipped?.({ path: child, reason: 'a symbolic link (not followed)' })
    else if (!entry.isFile) report.onSkipped?.({ path: child, reason: 'not a regular file' })
    else if (!BACKED_UP_TYPES.test(mediaTypeOf(child))) report.onSkipped?.({ path: child, reason: 'not a photo or video (by its name)' })
    else {
      const walked = await walkedFile(root, child)
      if (walked !== null) yield walked
    }
  }
}

/**
 * The file at `relative` (to the root, "/" between names) as the walk finds it, or null when the
 * walk skips it: not a photo or video by its name, a link, not a file, gone. Hidden folders on
 * the way are the caller's to skip (walkMedia never enters them).
 */
export async function walkedFile(root: string, relative: string): Promise<WalkedFile | null> {
  if (!BACKED_UP_TYPES.test(mediaTypeOf(relative)) || path.posix.basename(relative).startsWith('.')) return null
  const file = path.join(root, ...relative.split('/'))
  const info = await lstat(file, { bigint: true }).catch(() => null)
  if (info === null || !info.isFile()) return null
  return { path: relative, file, size: Number(info.size), modified: modifiedMs(info), identity: `${info.dev}:${info.ino}` }
}

/**
 * A walked file as the sync engine's candidate; `describe` adds derivatives and EXIF
 * (node/media.ts). A file of at most `inMemoryMax` bytes is read once, and `describe` is given
 * its bytes rather than its path (node/files.ts fileSource); a video always its path, which
 * ffmpeg reads itself, seeking to the index an MP4 may keep at its end (a pipe cannot seek).
 */
export function candidateOf(
  walked: WalkedFile,
  options: { describe?: (file: string | Uint8Array, type: string) => Promise<MediaFacts>; inMemoryMax?: number } = {},
): Candidate {
  const type = mediaTypeOf(walked.file)
  let loaded: Promise<DiskFileSource> | undefined
  // Once per candidate: a retry, and the description, use the same read.
  const source = (): Promise<DiskFileSource> =>
    (loaded ??= fileSource(walked.file, { name: walked.path, ...(options.inMemoryMax === undefined ? {} : { inMemoryMax: options.inMemoryMax }) }))
  const describe = options.describe
  return {
    path: walked.path,
    size: walked.size,
    modified: walked.modified,
    identity: walked.identity,
    source,
    ...(describe === undefined
      ? {}
      : { describe: async () => describe(type.startsWith('video/') ? walked.file : ((await source()).bytes ?? walked.file), type) }),
  }
}
