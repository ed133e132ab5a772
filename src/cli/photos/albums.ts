// `coffer-photos albums` and `coffer-photos ls <album>`: what the account stores, read from the
// feed and decrypted on this device.
import { albumFiles, livePositions, namedAlbums } from '../../client/albums.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { libraryOf, namedAlbum } from './library.ts'

export const albums: Command = {
  usage: `usage: coffer-photos albums [--json]

  Lists the account's albums by name (decrypted here), with the number of files in each.`,
  options: {},
  async run({ positionals, out, signal, home }) {
    if (positionals.length > 0) throw new UsageError('albums takes no arguments')
    const library = libraryOf(await openAccount(home, commandClientOptions(out, signal)))
    const albums = await namedAlbums(library)
    const rows = await Promise.all(
      albums.map(async (album) => ({
        ...album,
        files: Math.max(0, (await livePositions(library.client, album.albumId)).latest.size - (album.name === null ? 0 : 1)),
      })),
    )
    rows.sort((a, b) => (a.name ?? '\uffff').localeCompare(b.name ?? '\uffff'))
    for (const row of rows) {
      out.event('album', { name: row.name, album_id: row.albumId, files: row.files, protocol_version: row.protocolVersion })
      out.say(`${row.name ?? `(unnamed album ${row.albumId})`}  ${row.files} file${row.files === 1 ? '' : 's'}`)
    }
    if (rows.length === 0) out.say('no albums yet: `coffer-photos backup <folder>` makes one')
    return EXIT.ok
  },
}

export const ls: Command = {
  usage: `usage: coffer-photos ls <album> [--json]

  Lists the album's files by name (with their subfolder): size, type, dimensions, and the capture
  time (or, without one, the modification time), decrypted here.`,
  options: {},
  async run({ positionals, out, signal, home }) {
    if (positionals.length !== 1) throw new UsageError('ls takes one album name')
    const library = libraryOf(await openAccount(home, commandClientOptions(out, signal)))
    const album = await namedAlbum(library, positionals[0])
    const files = [] // what is listed, not the opened files (their streams and keys)
    for await (const file of albumFiles(library, album.albumId)) files.push({ assetId: file.assetId, metadata: file.metadata })
    files.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0))
    let count = 0
    let bytes = 0
    for (const file of files) {
      const { name, size, type, captured, modified, width, height } = file.metadata
      count++
      bytes += size
      out.event('file', {
        name,
        size,
        type,
        captured,
        modified,
        width,
        height,
        asset_id: file.assetId,
        derivatives: file.metadata.blobs.filter((b) => b.kind !== 'original').map((b) => b.kind),
      })
      const when = captured ?? modified
      out.say(
        `${name}  ${bytesText(size)}  ${type}${width !== null && height !== null ? `  ${width}×${height}` : ''}${when === null ? '' : `  ${new Date(when).toISOString().slice(0, 19).replace('T', ' ')}`}`,
      )
    }
    out.say(`${count} file${count === 1 ? '' : 's'}, ${bytesText(bytes)}`)
    return EXIT.ok
  },
}
