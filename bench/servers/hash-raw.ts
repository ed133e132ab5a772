// The ceiling of the deep-verify scenario: raw re-reading and re-hashing of blob files, in a
// child of its own. Loop i streams the files of group i (the same files, grouped as the
// scenario's verify requests group them) one after another through an fs read stream (default
// 64 KiB chunks, as the blob store opens them) into a SHA-256, and checks that the digest is
// the file's name (a blob is named by its hash), as a deep scan does. Hashing runs on this
// process's event loop, reads on the libuv pool: the same split as in the server.
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import path from 'node:path'
import { serveParent, startOrDie, timedLoops, type LoopRun } from '../lib/child-side.ts'

/** Its result counts bytes (`units`) and passes over a group (`operations`). */
export interface HashRun extends LoopRun {
  /** Absolute paths of blob files, one group per loop. */
  readonly groups: readonly (readonly string[])[]
}

async function rehash(file: string): Promise<number> {
  const digest = createHash('sha256')
  let bytes = 0
  for await (const chunk of createReadStream(file)) {
    digest.update(chunk as Buffer)
    bytes += (chunk as Buffer).length
  }
  if (digest.digest('hex') !== path.basename(file)) throw new Error(`${file}: its SHA-256 is not its name`)
  return bytes
}

await startOrDie(async () => {
  const run = ({ groups, ...loops }: HashRun) =>
    timedLoops(loops, async (loop) => {
      let bytes = 0
      for (const file of groups[loop % groups.length] ?? []) bytes += await rehash(file)
      return bytes
    })
  serveParent({}, { onRequest: (body) => run(body as HashRun) })
})
