// `coffer-photos trash ls | restore | empty`: Recently deleted (decision 0059). What `rm` moved
// there stays 30 days, listed and restorable, before the server deletes it for good; `empty`
// does that at once. Each entry's signed delete is checked (src/client/trash.ts), so a server
// cannot make a file look deleted.
import { albumNameOf, type Library, type NamedAlbum } from '../../client/albums.ts'
import { deleteForGood, restoreFromTrash, type TrashedFile } from '../../client/trash.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { columns } from './albums.ts'
import { EXIT, Interrupted, UsageError, type Command } from './command.ts'
import { dayText, listed, resolve, type Listed } from './edit.ts'
import { checkedTrash, libraryOf, namedAlbum } from './library.ts'
import { describeError } from './output.ts'

const DAY_MS = 86_400_000

interface TrashedListed extends Listed {
  readonly album: NamedAlbum
  readonly trashed: TrashedFile
}

/** The files in the trash of these albums (all when not given), named as `ls` named them, album by album, oldest first in each. */
async function trashedFiles(library: Library, files: readonly TrashedFile[], only?: NamedAlbum): Promise<TrashedListed[]> {
  const byAlbum = new Map<string, TrashedFile[]>()
  for (const file of files) if (only === undefined || file.albumId === only.albumId) byAlbum.set(file.albumId, [...(byAlbum.get(file.albumId) ?? []), file])
  const out: TrashedListed[] = []
  for (const [albumId, inAlbum] of byAlbum) {
    const album = only ?? { albumId, name: await albumNameOf(library, albumId), cover: null, protocolVersion: '' }
    const held = new Map(inAlbum.map((file) => [file.assetId, file]))
    for (const file of await listed(library, album, { keep: (assetId) => held.has(assetId) })) out.push({ ...file, album, trashed: held.get(file.assetId)! })
  }
  return out
}

const daysLeft = (file: TrashedFile, now: number) => Math.max(0, Math.ceil((file.purgeAt - now) / DAY_MS))

export const trash: Command = {
  usage: `usage: coffer-photos trash ls [--json]
       coffer-photos trash restore <album> <name-or-asset-id>... [--json]
       coffer-photos trash empty [--yes] [--json]

  Recently deleted: the files \`coffer-photos rm\` deleted, kept by the server 30 days before it
  deletes them for good. \`ls\` lists them with the day each goes; \`restore\` brings files of an
  album back (named as \`ls\` showed them, or by asset id); \`empty\` deletes them all for good
  now (asks for confirmation on a terminal).

  --yes    empty without asking (needed without a terminal)
  --json   one JSON object per line on stdout: trashed (ls, one per file), restored, deleted, summary`,
  options: { yes: { type: 'boolean' } },
  async run({ positionals, values, out, signal, home, prompts }) {
    const [action, albumName, ...names] = positionals
    if (action !== 'ls' && action !== 'restore' && action !== 'empty') throw new UsageError('trash takes ls, restore or empty')
    if (action !== 'restore' && positionals.length > 1) throw new UsageError(`trash ${action} takes no arguments`)
    if (action === 'restore' && (albumName === undefined || names.length === 0))
      throw new UsageError('trash restore takes an album name and at least one file name or asset id')
    const library = libraryOf(await openAccount(home, commandClientOptions(out, signal)))
    const { files } = await checkedTrash(library, out)

    if (action === 'ls') {
      const now = Date.now()
      const rows = (await trashedFiles(library, files)).map((file) => {
        out.event('trashed', {
          album: file.album.name,
          album_id: file.album.albumId,
          name: file.name,
          asset_id: file.assetId,
          size: file.size,
          trashed_at: new Date(file.trashed.trashedAt).toISOString(),
          purge_at: new Date(file.trashed.purgeAt).toISOString(),
        })
        return [
          file.album.name ?? file.album.albumId,
          file.name,
          bytesText(file.size),
          dayText(file.trashed.trashedAt),
          dayText(file.trashed.purgeAt),
          String(daysLeft(file.trashed, now)),
        ]
      })
      if (rows.length === 0) out.say('Recently deleted is empty')
      else for (const line of columns(['ALBUM', 'NAME', 'SIZE', 'DELETED', 'GOES ON', 'DAYS LEFT'], rows, [2, 5])) out.say(line)
      return EXIT.ok
    }

    if (action === 'restore') {
      const album = await namedAlbum(library, albumName)
      const held = await trashedFiles(library, files, album)
      const chosen = [...new Map(names.map((given) => resolve(held, album, given) as TrashedListed).map((f) => [f.assetId, f])).values()]
      for (const file of chosen) {
        await restoreFromTrash(library, album.albumId, file.assetId)
        out.event('restored', { name: file.name, asset_id: file.assetId })
        out.say(`restored ${file.name}`)
      }
      out.event('summary', { restored: chosen.length })
      return EXIT.ok
    }

    const all = await trashedFiles(library, files)
    if (all.length === 0) {
      out.say('Recently deleted is empty')
      return EXIT.ok
    }
    const what = `${all.length} file${all.length === 1 ? '' : 's'} (${bytesText(all.reduce((sum, f) => sum + f.size, 0))})`
    if (!(await prompts.confirmed(values.yes === true, { message: `Delete ${what} in Recently deleted for good?`, signal })))
      throw new Interrupted('nothing was deleted')
    let deleted = 0
    let failed = 0
    for (const file of all) {
      if (signal.aborted) break
      try {
        await deleteForGood(library, file.trashed)
        deleted++
        out.event('deleted', { name: file.name, asset_id: file.assetId, size: file.size })
        out.say(`deleted ${file.name}`)
      } catch (error) {
        failed++
        const { message } = describeError(error)
        out.event('failed', { name: file.name, asset_id: file.assetId, error: message })
        out.warn(`coffer-photos: "${file.name}": ${message}`)
      }
    }
    out.event('summary', { deleted, failed, files: all.length })
    out.say(`${deleted} deleted for good${failed === 0 ? '' : `, ${failed} not deleted`}, of ${all.length} file${all.length === 1 ? '' : 's'}`)
    if (signal.aborted) return EXIT.interrupted
    return failed === 0 ? EXIT.ok : EXIT.failed
  },
}
