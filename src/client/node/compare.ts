// The local side of a comparison with the album (../compare.ts): the photos and videos of a
// folder as backup walks them (walk.ts: the same files, under the same relative names), each
// read as a stream when its turn comes.
import { createReadStream } from 'node:fs'
import type { LocalFile } from '../compare.ts'
import { walkMedia } from './walk.ts'

export async function* localFiles(root: string): AsyncGenerator<LocalFile> {
  for await (const walked of walkMedia(root))
    yield { path: walked.path, size: walked.size, modified: walked.modified, open: () => createReadStream(walked.file) }
}
