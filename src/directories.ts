// Creating the folders the operator names (DATA_DIR, BLOB_DIR, the SQLite file's folder).
import { mkdirSync, statSync } from 'node:fs'
import path from 'node:path'

/** mkdir of one level: false when the parent is missing, true when made or already a folder. */
function makeLevel(directory: string): boolean {
  try {
    mkdirSync(directory)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return false
    if (code === 'EEXIST' && statSync(directory).isDirectory()) return true
    throw error
  }
}

/**
 * `mkdir -p` that fails rather than spinning: Node's recursive mkdir retries for ever where a
 * file system answers ENOENT under a parent that exists (/proc, some FUSE mounts), which hung
 * start-up with DATA_DIR=/proc/.... Here each level is tried once more after its parent, and a
 * second ENOENT is the answer. Start-up only: it blocks, and start-up has nothing else to do.
 */
export function makeDirectory(directory: string): void {
  const resolved = path.resolve(directory)
  if (makeLevel(resolved)) return
  const parent = path.dirname(resolved)
  if (parent !== resolved) makeDirectory(parent)
  // The parent is there and this level still cannot be made: the file system's own error says why.
  if (!makeLevel(resolved)) mkdirSync(resolved)
}
