// `coffer-photos rm <album> <name-or-asset-id>...` and `coffer-photos replace <album> <name>
// <file>`: deleting photos from an album (to Recently deleted, or for good with --for-good) and
// storing a new version of one (after an edit), as signed lifecycle writes (src/client/edits.ts,
// src/client/trash.ts). Every device of the account sees the change
// after its next ls or restore. An album upgrade the server announces on the way (426) is
// carried out by the client (src/client/protocol.ts); nothing is asked of the person.
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { albumFiles, type Library, type NamedAlbum, type PlanOptions } from '../../client/albums.ts'
import { AssetRetainedError, deleteFile, replaceFile } from '../../client/edits.ts'
import { trashFile } from '../../client/trash.ts'
import { fileSource } from '../../client/node/files.ts'
import { describeMedia } from '../../client/node/media.ts'
import { openSyncState } from '../../client/node/state.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, Interrupted, UsageError, type Command } from './command.ts'
import { describeError } from './output.ts'
import { libraryOf, namedAlbum, outsideTrash } from './library.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export interface Listed {
  readonly assetId: string
  readonly name: string
  readonly size: number
}

/** The album's files as `ls` lists them (its record left out; those `which` leaves out too). */
export async function listed(library: Library, album: NamedAlbum, which: PlanOptions): Promise<Listed[]> {
  const files: Listed[] = []
  for await (const file of albumFiles(library, album.albumId, which)) files.push({ assetId: file.assetId, name: file.metadata.name, size: file.metadata.size })
  return files
}

/** The file a command-line argument names: its name as `ls` shows it, or its asset id. A name several files share must be given by asset id. */
export function resolve(files: readonly Listed[], album: NamedAlbum, given: string): Listed {
  if (UUID.test(given)) {
    const byId = files.find((f) => f.assetId === given.toLowerCase())
    if (byId !== undefined) return byId
  }
  const named = files.filter((f) => f.name === given)
  if (named.length === 1) return named[0]!
  if (named.length > 1)
    throw new UsageError(
      `${named.length} files of album "${album.name}" are named "${given}": give the asset id of the one you mean (${named.map((f) => f.assetId).join(', ')}; \`coffer-photos ls ${album.name} --json\` shows them)`,
    )
  throw new UsageError(`album "${album.name}" has no file "${given}" (\`coffer-photos ls ${album.name}\` lists them)`)
}

/** A date as the trash's messages give it: the day, in UTC (YYYY-MM-DD). */
export const dayText = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** A name as a shell takes it back: quoted when it holds anything but plain characters. */
function quoted(name: string): string {
  return /^[\w./-]+$/.test(name) ? name : `'${name.replaceAll("'", `'\\''`)}'`
}

export const rm: Command = {
  usage: `usage: coffer-photos rm <album> <name-or-asset-id>... [--for-good] [--yes] [--json]

  Moves files of the album to Recently deleted: each is named as \`coffer-photos ls\` shows it
  (its subfolder included) or by its asset id. Every device of the account stops listing and
  restoring them after its next command; the server keeps them 30 days (\`coffer-photos trash
  ls\`), then deletes them for good and frees their space. \`coffer-photos trash restore\` brings
  one back before then. Files already on a device's disk stay there. A file under a retention
  date cannot be deleted before it.

  --for-good   delete at once, not to Recently deleted (asks for confirmation on a terminal)
  --yes        delete for good without asking (needed without a terminal)
  --json       one JSON object per line on stdout: trashed or deleted (one per file), summary`,
  options: { 'for-good': { type: 'boolean' }, yes: { type: 'boolean' } },
  async run({ positionals, values, out, signal, home, prompts }) {
    const [albumName, ...names] = positionals
    if (albumName === undefined || names.length === 0) throw new UsageError('rm takes an album name and at least one file name or asset id')
    const forGood = values['for-good'] === true
    const library = libraryOf(await openAccount(home, commandClientOptions(out, signal)))
    const album = await namedAlbum(library, albumName)
    const files = await listed(library, album, await outsideTrash(library, out))
    const chosen = [...new Map(names.map((given) => resolve(files, album, given)).map((f) => [f.assetId, f])).values()]
    const what = chosen.length === 1 ? `"${chosen[0]!.name}"` : `${chosen.length} files (${bytesText(chosen.reduce((sum, f) => sum + f.size, 0))})`
    // Moving to Recently deleted can be undone, so it is not asked about; deleting for good is.
    if (forGood && !(await prompts.confirmed(values.yes === true, { message: `Delete ${what} from album "${album.name}" for good?`, signal })))
      throw new Interrupted('nothing was deleted')
    let deleted = 0
    let keptUntil = 0
    const failures: { file: Listed; error: unknown }[] = []
    for (const file of chosen) {
      if (signal.aborted) break
      try {
        if (forGood) {
          const result = await deleteFile(library, album.albumId, file.assetId)
          out.event('deleted', { name: file.name, asset_id: file.assetId, size: file.size, sync_seq: result.syncSeq })
          out.say(`deleted ${file.name}`)
        } else {
          const result = await trashFile(library, album.albumId, file.assetId)
          keptUntil = Math.max(keptUntil, result.purgeAt)
          out.event('trashed', { name: file.name, asset_id: file.assetId, size: file.size, purge_at: new Date(result.purgeAt).toISOString() })
          out.say(`moved ${file.name} to Recently deleted; kept until ${dayText(result.purgeAt)}`)
        }
        deleted++
      } catch (error) {
        failures.push({ file, error })
        const retained = error instanceof AssetRetainedError ? error.retainedUntil : undefined
        const message =
          error instanceof AssetRetainedError
            ? `"${file.name}" is kept by the server${retained === null ? '' : ` until ${retained}`} (a retention date): it cannot be deleted before then`
            : `"${file.name}": ${describeError(error).message}`
        out.event('failed', { name: file.name, asset_id: file.assetId, error: message, ...(retained === undefined ? {} : { retained_until: retained }) })
        out.warn(`coffer-photos: ${message}`)
      }
    }
    out.event('summary', { [forGood ? 'deleted' : 'trashed']: deleted, failed: failures.length, files: chosen.length })
    const done = forGood ? 'deleted' : 'moved to Recently deleted'
    if (chosen.length > 1 || failures.length === 0)
      out.say(`${deleted} ${done}${failures.length === 0 ? '' : `, ${failures.length} not deleted`}, of ${chosen.length} file${chosen.length === 1 ? '' : 's'}`)
    if (keptUntil > 0) out.say(`\`coffer-photos trash restore ${quoted(albumName)} <name>...\` brings ${deleted === 1 ? 'it' : 'them'} back until then`)
    if (signal.aborted) return EXIT.interrupted
    if (failures.length === 0) return EXIT.ok
    // Only refusals (retention): the server said no, and trying again does not help.
    const exits = failures.map(({ error }) => (error instanceof AssetRetainedError ? EXIT.refused : describeError(error).exit))
    return exits.every((exit) => exit === exits[0]) ? exits[0]! : EXIT.failed
  },
}

export const replace: Command = {
  usage: `usage: coffer-photos replace <album> <name-or-asset-id> <file> [--location] [--json]

  Stores <file> as the new version of an album's file (named as \`coffer-photos ls\` shows it, or
  by asset id): encrypted with a new thumbnail and preview, under the same name and asset, the
  previous version's space freed. Every device of the account lists and restores the new
  version after its next command. When <file> is the file a \`backup\` of this device sent (the
  same name in the backed-up folder), the next backup knows it and sends nothing.

  --location   keep the GPS position from the photo's EXIF (encrypted like the rest); off by default
  --json       one JSON object per line on stdout: replaced`,
  options: { location: { type: 'boolean' } },
  async run({ positionals, values, out, signal, home, resolvePath, ffmpeg, zone }) {
    if (positionals.length !== 3) throw new UsageError("replace takes an album name, the file's name in the album, and the new file")
    const [albumName, given, local] = positionals as [string, string, string]
    const file = resolvePath(local)
    const info = await stat(file).catch(() => null)
    if (info === null || !info.isFile()) throw new UsageError(`${local} is not a file`)
    if (info.size === 0) throw new UsageError(`${local} is empty`)
    const account = await openAccount(home, commandClientOptions(out, signal))
    const library = libraryOf(account)
    const album = await namedAlbum(library, albumName)
    const target = resolve(await listed(library, album, await outsideTrash(library, out)), album, given)
    const source = await fileSource(file, { name: target.name })
    const state = openSyncState(path.join(account.home, 'state.sqlite'))
    try {
      let uploadId: string | null = null
      const result = await replaceFile({ ...library, albumId: album.albumId, protocolVersion: album.protocolVersion }, target.assetId, source, {
        describe: () => describeMedia(file, source.type, { location: values.location === true, ffmpeg, zone }),
        onUploadOpened: async (id) => {
          uploadId = id
          await state.uploadOpened(id)
        },
      }).finally(async () => {
        if (uploadId !== null) await state.uploadEnded(uploadId)
      })
      // Nothing is recorded of the backed-up folder's file: the next backup finds the album moved
      // on, and keeps this version (or records it, when that file is this one: decision 0047).
      out.event('replaced', { name: target.name, asset_id: target.assetId, size: source.size, sent_bytes: result.sentBytes })
      out.say(`replaced ${target.name} in album "${album.name}" with ${local} (${bytesText(source.size)})`)
      return EXIT.ok
    } finally {
      state.close()
    }
  },
}
