// `coffer-photos restore <album> <dest>`: every file of the album back into a folder, each
// decrypted, checked against its hash and written under its name (and subfolder) only once
// whole and verified (src/client/node/files.ts writeRestored). Resumable: a file already there
// with the same size and modification time is kept as it is; what a crash left half-written
// is removed.
import { mkdir, opendir, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { albumFiles } from '../../client/albums.ts'
import type { RestoredFile } from '../../client/files.ts'
import { PARTIAL_SUFFIX, safeRelativePath, writeRestored } from '../../client/node/files.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { countOption, libraryOf, namedAlbum } from './library.ts'
import { transferProgress } from './transfer-progress.ts'

/** Removes the partial files an interrupted restore left (hidden, ending in PARTIAL_SUFFIX). */
async function removePartials(folder: string): Promise<number> {
  let removed = 0
  for await (const entry of await opendir(folder)) {
    const at = path.join(folder, entry.name)
    if (entry.isDirectory()) removed += await removePartials(at)
    else if (entry.isFile() && entry.name.startsWith('.') && entry.name.endsWith(PARTIAL_SUFFIX)) {
      await unlink(at)
      removed++
    }
  }
  return removed
}

/** A second file of the same name in the album gets its asset id's start before the extension. */
function uniqueName(name: string, assetId: string, taken: Set<string>): string {
  let chosen = name
  if (taken.has(chosen)) {
    const extension = path.posix.extname(name)
    chosen = `${name.slice(0, name.length - extension.length)} (${assetId.slice(0, 8)})${extension}`
  }
  taken.add(chosen)
  return chosen
}

type Outcome = 'restored' | 'unchanged' | 'failed'

export const restore: Command = {
  name: 'restore',
  summary: 'restore an album into a folder, every file checked (resumable)',
  usage: `usage: coffer-photos restore <album> <dest> [--overwrite] [--concurrency N] [--json]

  Downloads every file of the album, checks its hash, decrypts it and writes it into <dest>
  under its name and subfolder with its modification time. A file appears under its name only
  once whole and verified; a tampered or damaged file is refused, named, and nothing is left
  in its place. Run it again to continue: files already there with the same size and
  modification time are kept.

  --overwrite        replace a different file already at a file's name (by default it is kept
                     and that file is reported as not restored)
  --concurrency N    files in flight at once (1-64, default 4)`,
  options: { overwrite: { type: 'boolean' }, concurrency: { type: 'string' } },
  async run({ positionals, values, out, signal }) {
    if (positionals.length !== 2) throw new UsageError('restore takes an album name and a destination folder')
    const concurrency = countOption(values.concurrency, 'concurrency', 4)
    const dest = path.resolve(positionals[1]!)
    const library = libraryOf(await openAccount(commandClientOptions(out, signal)))
    const album = await namedAlbum(library, positionals[0])
    await mkdir(dest, { recursive: true })
    const partials = await removePartials(dest)
    if (partials > 0) out.warn(`coffer-photos: removed ${partials} partial file${partials === 1 ? '' : 's'} an interrupted restore left`)

    const files: RestoredFile[] = []
    for await (const file of albumFiles(library, album.albumId)) files.push(file)
    const totals = { files: files.length, bytes: files.reduce((sum, f) => sum + f.metadata.size, 0) }
    out.say(`restoring ${totals.files} files (${bytesText(totals.bytes)}) from album "${album.name}" into ${dest}`)
    out.event('start', { album: album.name, album_id: album.albumId, files: totals.files, bytes: totals.bytes })
    const progress = transferProgress(out, totals)
    const taken = new Set<string>()
    const planned = files.map((file) => ({ file, name: uniqueName(file.metadata.name, file.assetId, taken) }))
    const counts: Record<Outcome, number> = { restored: 0, unchanged: 0, failed: 0 }
    const failures: string[] = []
    const one = async ({ file, name }: (typeof planned)[number]): Promise<void> => {
      let outcome: Outcome = 'restored'
      let error: string | undefined
      try {
        const final = path.join(dest, ...safeRelativePath(name))
        const existing = await stat(final).catch(() => null)
        if (existing !== null && existing.isFile() && existing.size === file.metadata.size && Math.floor(existing.mtimeMs) === file.metadata.modified) outcome = 'unchanged'
        else if (existing !== null && values.overwrite !== true) throw new Error(`a different file is already at ${final}; move it, or run with --overwrite`)
        else await writeRestored(file, dest, { name })
      } catch (caught) {
        outcome = 'failed'
        error = (caught as Error).message
        failures.push(error)
        progress.note(`coffer-photos: ${error}`)
      }
      counts[outcome]++
      progress.advance(file.metadata.size, name)
      out.event('file', { path: name, outcome, size: file.metadata.size, asset_id: file.assetId, ...(error === undefined ? {} : { error }) })
    }
    let next = 0
    const worker = async (): Promise<void> => {
      while (!signal.aborted && next < planned.length) await one(planned[next++]!)
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    progress.stop()
    const stopped = next < planned.length
    out.event('summary', { ...counts, files: totals.files, stopped })
    out.say(`${stopped ? 'stopped: ' : ''}${counts.restored} restored, ${counts.unchanged} already there, ${counts.failed} failed, of ${totals.files} files`)
    for (const failure of failures) out.warn(`failed: ${failure}`)
    return stopped ? EXIT.interrupted : counts.failed > 0 ? EXIT.failed : EXIT.ok
  },
}
