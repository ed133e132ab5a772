// `coffer-photos albums` and `coffer-photos ls <album>`: what the account stores, read from the
// feed and decrypted on this device.
import { albumFiles, livePositions, namedAlbums } from '../../client/albums.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { libraryOf, namedAlbum } from './library.ts'

/** `header` and `rows` as lines of columns two spaces apart, each as wide as its widest cell; the columns at `rightAligned` (sizes) aligned right. */
function columns(header: readonly string[], rows: readonly (readonly string[])[], rightAligned: readonly number[]): string[] {
  const widths = header.map((title, at) => Math.max(title.length, ...rows.map((row) => row[at]!.length)))
  return [header, ...rows].map((row) =>
    row
      .map((cell, at) => (rightAligned.includes(at) ? cell.padStart(widths[at]!) : cell.padEnd(widths[at]!)))
      .join('  ')
      .trimEnd(),
  )
}

export const albums: Command = {
  usage: `usage: coffer-photos albums [--json]

  Lists the account's albums by name (decrypted here), with the number of files in each.

  --json   one JSON object per line on stdout: album (one per album)`,
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
  time (or, without one, the modification time), decrypted here; one file a line, in columns
  under a header, and a last line with the count and the total size.

  --json   one JSON object per line on stdout: file (one per file)`,
  options: {},
  async run({ positionals, out, signal, home }) {
    if (positionals.length !== 1) throw new UsageError('ls takes one album name')
    const library = libraryOf(await openAccount(home, commandClientOptions(out, signal)))
    const album = await namedAlbum(library, positionals[0])
    const files = [] // what is listed, not the opened files (their streams and keys)
    for await (const file of albumFiles(library, album.albumId)) files.push({ assetId: file.assetId, metadata: file.metadata })
    files.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0))
    let bytes = 0
    const rows: string[][] = []
    for (const file of files) {
      const { name, size, type, captured, modified, width, height } = file.metadata
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
      rows.push([
        name,
        bytesText(size),
        type,
        width !== null && height !== null ? `${width}×${height}` : '',
        when === null ? '' : new Date(when).toISOString().slice(0, 19).replace('T', ' '),
      ])
    }
    if (rows.length > 0) for (const line of columns(['NAME', 'SIZE', 'TYPE', 'DIMENSIONS', 'TAKEN (UTC)'], rows, [1])) out.say(line)
    out.say(`${files.length} file${files.length === 1 ? '' : 's'}, ${bytesText(bytes)}`)
    return EXIT.ok
  },
}
