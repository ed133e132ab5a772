// Walking a folder for the files to back up: photos and videos by extension (node/files.ts
// mediaTypeOf knows them), in a stable order (names sorted, folders as they come), hidden
// files and folders and empty files skipped (".name": system files, our own partial restores), symbolic links
// not followed (a link can loop or leave the folder). Streams: a library of any size is walked
// without listing it all in memory.
import { opendir, stat } from 'node:fs/promises'
import path from 'node:path'
import type { MediaFacts } from '../files.ts'
import type { Candidate } from '../sync.ts'
import { fileSource, mediaTypeOf } from './files.ts'

export interface WalkedFile {
  /** Relative to the root, "/" between names. */
  readonly path: string
  readonly file: string
  readonly size: number
  readonly modified: number
}

export const BACKED_UP_TYPES = /^(image\/(jpeg|png|gif|webp|heic|heif|avif|tiff|x-adobe-dng)|video\/(mp4|quicktime))$/

export async function* walkMedia(root: string, relative = ''): AsyncGenerator<WalkedFile> {
  const folder = path.join(root, relative)
  const names: { name: string; isDirectory: boolean; isFile: boolean }[] = []
  for await (const entry of await opendir(folder)) {
    if (entry.name.startsWith('.')) continue
    names.push({ name: entry.name, isDirectory: entry.isDirectory(), isFile: entry.isFile() })
  }
  names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of names) {
    const child = relative === '' ? entry.name : `${relative}/${entry.name}`
    if (entry.isDirectory) yield* walkMedia(root, child)
    else if (entry.isFile && BACKED_UP_TYPES.test(mediaTypeOf(entry.name))) {
      const file = path.join(root, child)
      const info = await stat(file)
      if (info.size === 0) continue // not a photo; and the empty content names the album's own record (albums.ts)
      yield { path: child, file, size: info.size, modified: Math.floor(info.mtimeMs) }
    }
  }
}

/** A walked file as the sync engine's candidate; `describe` adds derivatives and EXIF (node/media.ts). */
export function candidateOf(walked: WalkedFile, describe?: (file: string, type: string) => Promise<MediaFacts>): Candidate {
  const type = mediaTypeOf(walked.file)
  return {
    path: walked.path,
    size: walked.size,
    modified: walked.modified,
    source: () => fileSource(walked.file, { name: walked.path }),
    ...(describe === undefined ? {} : { describe: () => describe(walked.file, type) }),
  }
}
