// What both stores share. Names of writes in progress (a folder's tmp/ files, a bucket's staging
// objects): `<host>-<pid>-i<incarnation>-<random>.part`. Host, pid and this process's
// incarnation tell a cleanup which writers are gone: several instances may share the store, and
// a restarted container's server often has the pid of the one before. And the handling of the
// bytes streamed through: collections during an upload, counted reads.
import { createHash, randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { pipeline, Transform, type Readable } from 'node:stream'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** Another host's write is taken as abandoned once untouched this long. */
const STALE_FOREIGN_MS = 24 * 3600 * 1000
/** Tells this process from an earlier one with the same pid on the same host. */
const INCARNATION = randomBytes(8).toString('hex')
/** Names of earlier versions have no incarnation. */
const WRITER_NAME = /^(.+)-(\d+)-(?:i([0-9a-f]{16})-)?[0-9a-f]+\.part$/

function host(): string {
  return hostname().replace(/[^A-Za-z0-9.-]/g, '_')
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** This process's writes in progress, by name: a cleanup on this process spares exactly these. */
export interface Writes {
  /** A fresh name for a write, counted as in progress until `done`. */
  begin(): string
  done(name: string): void
  /** Whether the write named `name`, last touched at `modifiedMs`, was left behind by its writer. */
  leftBehind(name: string, modifiedMs: number): boolean
}

/**
 * This process's writes in progress, whichever store opened them: the rule is about the process
 * (its pid and incarnation are in every name), and two stores in one process (two instances in
 * one test process) must not take each other's writes for left behind.
 */
const inProgress = new Set<string>()

export function trackWrites(): Writes {
  const me = host()
  return {
    begin() {
      const name = `${me}-${process.pid}-i${INCARNATION}-${randomBytes(8).toString('hex')}.part`
      inProgress.add(name)
      return name
    },
    done(name) {
      inProgress.delete(name)
    },
    leftBehind(name, modifiedMs) {
      const match = WRITER_NAME.exec(name)
      if (match === null) return true
      const [, writerHost, pidText, incarnation] = match
      if (writerHost !== me) return Date.now() - modifiedMs > STALE_FOREIGN_MS
      const pid = Number(pidText)
      if (pid !== process.pid) return !processIsAlive(pid)
      if (incarnation === undefined) return false
      // This process's own: one whose put failed and could not remove it (the store was down).
      return incarnation !== INCARNATION || !inProgress.has(name)
    },
  }
}

/**
 * A streamed upload arrives in socket buffers that only a garbage collection frees, and V8
 * lets some 64 MiB of them pile up before it collects on its own. A young-generation
 * collection (about a millisecond) after every COLLECT_EVERY bytes keeps a gigabyte's upload
 * within a few buffers' worth of memory. `gc` is reached through a fresh context, which is
 * how V8 exposes it once the flag is set at run time.
 */
const COLLECT_EVERY = 16 * 1024 * 1024
const collectYoungGeneration: () => void = (() => {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as (options: { type: 'minor' }) => void
  return () => gc({ type: 'minor' })
})()

/** Counts the bytes of one upload and collects the young generation every COLLECT_EVERY of them. */
export function collectingEvery(): (bytes: number) => void {
  let sinceCollection = 0
  return (bytes) => {
    sinceCollection += bytes
    if (sinceCollection >= COLLECT_EVERY) {
      sinceCollection = 0
      collectYoungGeneration()
    }
  }
}

/**
 * `source` counted as its bytes pass on to the consumer. (A 'data' listener on the source would
 * set it flowing before its consumer is attached, and whatever flowed meanwhile would be lost.)
 * A failure of the source reaches the consumer; a consumer that stops closes the source.
 */
export function countedReads(source: Readable, onRead: (bytes: number) => void): Readable {
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      onRead(chunk.length)
      done(null, chunk)
    },
  })
  pipeline(source, counted, () => {})
  return counted
}

/** The SHA-256 (hex) of everything `stream` yields. */
export async function sha256Of(stream: AsyncIterable<Uint8Array>): Promise<string> {
  const digest = createHash('sha256')
  for await (const chunk of stream) digest.update(chunk)
  return digest.digest('hex')
}
