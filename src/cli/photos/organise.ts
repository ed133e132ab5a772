// `coffer-photos cp`, `mv`, `fav` and `unfav`: copying and moving photos between albums and
// marking favourites (src/client/organise.ts, decision 0061), none of which sends a photo's
// bytes again. Photos are named as `rm` names them: as `ls` shows them, or by asset id.
import type { Library, NamedAlbum } from '../../client/albums.ts'
import { openAlbum } from '../../client/albums.ts'
import { copyToAlbum, moveToAlbum, setFavourite } from '../../client/organise.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, UsageError, type Command, type ExitCode, type Invocation } from './command.ts'
import { listed, resolve, type Listed } from './edit.ts'
import { libraryOf, namedAlbum, outsideTrash } from './library.ts'
import { describeError } from './output.ts'

/**
 * Runs `work` on each photo named, one after another, saying each outcome (`event` with the
 * fields it answers, and a line), then a summary; a failure is said and the next photo goes on.
 */
async function eachPhoto(
  { out, signal }: Invocation,
  library: Library,
  album: NamedAlbum,
  names: readonly string[],
  event: string,
  work: (file: Listed) => Promise<{ readonly fields: Record<string, unknown>; readonly line: string }>,
): Promise<ExitCode> {
  const files = await listed(library, album, await outsideTrash(library, out))
  const chosen = [...new Map(names.map((given) => resolve(files, album, given)).map((f) => [f.assetId, f])).values()]
  let done = 0
  const exits: ExitCode[] = []
  for (const file of chosen) {
    if (signal.aborted) break
    try {
      const { fields, line } = await work(file)
      done++
      out.event(event, { name: file.name, asset_id: file.assetId, ...fields })
      out.say(line)
    } catch (error) {
      const described = describeError(error)
      exits.push(described.exit)
      out.event('failed', { name: file.name, asset_id: file.assetId, error: described.message })
      out.warn(`coffer-photos: "${file.name}": ${described.message}`)
    }
  }
  out.event('summary', { done, failed: exits.length, files: chosen.length })
  if (chosen.length > 1) out.say(`${done} done${exits.length === 0 ? '' : `, ${exits.length} failed`}, of ${chosen.length} files`)
  if (signal.aborted) return EXIT.interrupted
  if (exits.length === 0) return EXIT.ok
  return exits.every((exit) => exit === exits[0]) ? exits[0]! : EXIT.failed
}

/** cp and mv: `<album> <name-or-asset-id>... <to-album>`. */
function copying(verb: 'cp' | 'mv'): Command {
  const moving = verb === 'mv'
  return {
    usage: `usage: coffer-photos ${verb} <album> <name-or-asset-id>... <to-album> [--json]

  ${
    moving
      ? `Moves photos into another album: each is copied there, then deleted from <album> for good
  once the copy is stored (a move is not a deletion: nothing goes to a trash). If the move stops
  between the two, the photo is in both albums, never in neither: run it again.`
      : `Copies photos into another album: the photo is then in both, each with its own asset.`
  } Photos are named as
  \`coffer-photos ls\` shows them (their subfolder included) or by asset id. <to-album> is made
  when there is none of that name. Nothing of a photo is uploaded again: the new album's entry
  names the same encrypted original and thumbnails (each original is downloaded and decrypted
  once, to name the copy by its content). A photo the album holds already is left as it is.
  The favourite mark goes with the photo.

  --json    one JSON object per line on stdout: ${moving ? 'moved' : 'copied'} (one per photo), summary`,
    options: {},
    async run(invocation) {
      const { positionals } = invocation
      if (positionals.length < 3)
        throw new UsageError(`${verb} takes an album name, at least one file name or asset id, and the album to ${verb === 'mv' ? 'move' : 'copy'} them to`)
      const [albumName, ...rest] = positionals as [string, ...string[]]
      const toName = rest.pop()!
      const library = libraryOf(await openAccount(invocation.home, commandClientOptions(invocation.out, invocation.signal)))
      const album = await namedAlbum(library, albumName)
      const to = await openAlbum(library, toName)
      if (to.albumId === album.albumId) throw new UsageError(`the photos are in album "${album.name}" already`)
      const into = { ...library, protocolVersion: to.protocolVersion }
      return eachPhoto(invocation, library, album, rest, moving ? 'moved' : 'copied', async (file) => {
        const result = moving
          ? await moveToAlbum(into, album.albumId, file.assetId, to.albumId)
          : await copyToAlbum(into, album.albumId, file.assetId, to.albumId)
        const already = result.status === 'present' ? ` (album "${to.name}" had it already)` : ''
        return {
          fields: { to_album: to.name, to_asset_id: result.assetId, status: result.status },
          line: `${moving ? 'moved' : 'copied'} ${file.name} to album "${to.name}"${already}`,
        }
      })
    },
  }
}

/** fav and unfav: `<album> <name-or-asset-id>...`. */
function marking(on: boolean): Command {
  const verb = on ? 'fav' : 'unfav'
  return {
    usage: `usage: coffer-photos ${verb} <album> <name-or-asset-id>... [--json]

  ${on ? 'Marks photos as favourites' : 'Takes the favourite mark off photos'} (\`ls\` shows a ♥ in FAV; the web app's Favourites
  lists them). The mark is kept in the photo's encrypted metadata, so the server cannot tell
  a favourite: a new version of the metadata is stored, the photo itself is not sent again.
  Photos are named as \`coffer-photos ls\` shows them or by asset id.

  --json    one JSON object per line on stdout: favourite (one per photo), summary`,
    options: {},
    async run(invocation) {
      const [albumName, ...names] = invocation.positionals
      if (albumName === undefined || names.length === 0) throw new UsageError(`${verb} takes an album name and at least one file name or asset id`)
      const library = libraryOf(await openAccount(invocation.home, commandClientOptions(invocation.out, invocation.signal)))
      const album = await namedAlbum(library, albumName)
      return eachPhoto(invocation, library, album, names, 'favourite', async (file) => {
        const result = await setFavourite(library, album.albumId, file.assetId, on)
        const was = result.status === 'unchanged' ? ` (it was ${on ? '' : 'not '}one already)` : ''
        return { fields: { favourite: on, status: result.status }, line: `${on ? 'marked' : 'unmarked'} ${file.name}${was}` }
      })
    },
  }
}

export const cp = copying('cp')
export const mv = copying('mv')
export const fav = marking(true)
export const unfav = marking(false)
