// `coffer-photos albums` (and `albums rename`) and `coffer-photos ls <album>`: what the account
// stores, read from the feed and decrypted on this device.
import { AlbumNameTakenError, albumFiles, namedAlbums, openPlanned, planAlbum, renameAlbum, type Library } from '../../client/albums.ts'
import { metadataTaken, takenIso, takenMonthRange, type TakenOptions } from '../../client/taken.ts'
import { durationText } from '../../client/media.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, Refused, UsageError, type Command, type ExitCode, type Invocation } from './command.ts'
import { albumByName, libraryOf, namedAlbum, outsideTrash, sharedAlbumsOf } from './library.ts'

/** `header` and `rows` as lines of columns two spaces apart, each as wide as its widest cell; the columns at `rightAligned` (sizes) aligned right. */
export function columns(header: readonly string[], rows: readonly (readonly string[])[], rightAligned: readonly number[]): string[] {
  const widths = header.map((title, at) => Math.max(title.length, ...rows.map((row) => row[at]!.length)))
  return [header, ...rows].map((row) =>
    row
      .map((cell, at) => (rightAligned.includes(at) ? cell.padStart(widths[at]!) : cell.padEnd(widths[at]!)))
      .join('  ')
      .trimEnd(),
  )
}

/** An album's files and the wall clocks (taken.ts Taken.local) of its oldest and newest, each file's metadata opened; null dates for an album without files. */
async function albumDates(library: Library, albumId: string, options: TakenOptions): Promise<{ files: number; oldest: number | null; newest: number | null }> {
  let files = 0
  let oldest: number | null = null
  let newest: number | null = null
  for await (const planned of openPlanned(library, await planAlbum(library, albumId))) {
    files++
    if (planned.error !== undefined) continue // counted; its date is not known
    const { local } = metadataTaken(planned.file.metadata, planned.file.envelope.timestamp, options)
    oldest = oldest === null ? local : Math.min(oldest, local)
    newest = newest === null ? local : Math.max(newest, local)
  }
  return { files, oldest, newest }
}

const dayOf = (local: number | null): string | null => (local === null ? null : takenIso({ local, offset: null }).slice(0, 10))

async function listAlbums({ out, signal, home, zone }: Invocation): Promise<ExitCode> {
  const account = await openAccount(home, commandClientOptions(out, signal))
  const library = libraryOf(account)
  const now = Date.now()
  const albums = await namedAlbums(library)
  const own = await Promise.all(albums.map(async (album) => ({ ...album, sharedBy: null, ...(await albumDates(library, album.albumId, { now, zone })) })))
  // Albums shared with this account, after its own, each read with the keys it received.
  const shared = await Promise.all(
    (await sharedAlbumsOf(account)).map(async ({ album, library: sharedLibrary }) => ({
      ...album,
      sharedBy: (await account.client.listMembers(album.albumId)).owner.email,
      ...(await albumDates(sharedLibrary, album.albumId, { now, zone })),
    })),
  )
  const byName = (a: { name: string | null }, b: { name: string | null }) => (a.name ?? '\uffff').localeCompare(b.name ?? '\uffff')
  const rows = [...own.sort(byName), ...shared.sort(byName)]
  for (const row of rows)
    out.event('album', {
      name: row.name,
      album_id: row.albumId,
      files: row.files,
      taken_from: dayOf(row.oldest),
      taken_to: dayOf(row.newest),
      protocol_version: row.protocolVersion,
      ...(row.sharedBy === null ? {} : { shared_by: row.sharedBy }),
    })
  if (rows.length === 0) {
    out.say('no albums yet: `coffer-photos backup <folder>` makes one')
    return EXIT.ok
  }
  const cells = rows.map((row) => [
    `${row.name ?? `(unnamed album ${row.albumId})`}${row.sharedBy === null ? '' : ` (shared by ${row.sharedBy})`}`,
    String(row.files),
    row.oldest === null || row.newest === null ? '' : takenMonthRange(row.oldest, row.newest),
  ])
  for (const line of columns(['NAME', 'FILES', 'TAKEN'], cells, [1])) out.say(line)
  return EXIT.ok
}

async function renameCommand({ positionals, out, signal, home }: Invocation): Promise<ExitCode> {
  if (positionals.length !== 3) throw new UsageError("albums rename takes the album's name and its new name")
  const [, from, to] = positionals as [string, string, string]
  const library = libraryOf(await openAccount(home, commandClientOptions(out, signal)))
  const album = await namedAlbum(library, from)
  try {
    const { name } = await renameAlbum(library, album.albumId, to)
    out.event('renamed', { album_id: album.albumId, from: album.name, to: name })
    out.say(`renamed "${album.name}" to "${name}"`)
    return EXIT.ok
  } catch (error) {
    if (error instanceof AlbumNameTakenError) throw new Refused(error.message)
    throw error
  }
}

export const albums: Command = {
  usage: `usage: coffer-photos albums [--json]
       coffer-photos albums rename <album> <new name> [--json]

  Lists the account's albums by name (decrypted here), in columns: the number of files in each,
  and the months they were taken over ("Jul 2019 – Aug 2021", by the date each was taken, as
  \`ls\` shows it; every file's metadata is opened to read it).

  rename   gives the album a new name, on every device; refused (exit 4) when another album
           has that name. The album keeps its photos, its cover and its id.

  --json   one JSON object per line on stdout: album (one per album, with taken_from and
           taken_to, the first and last days, YYYY-MM-DD, null for an album without files), or
           renamed (album_id, from, to)`,
  options: {},
  run(invocation) {
    const [first] = invocation.positionals
    if (first === undefined) return listAlbums(invocation)
    if (first === 'rename') return renameCommand(invocation)
    throw new UsageError(`albums takes no arguments, or rename <album> <new name> (not "${first}")`)
  },
}

// Of a date taken's wall clock (taken.ts Taken.local), which reads in UTC.
const MONTH = new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' })

export const ls: Command = {
  usage: `usage: coffer-photos ls <album> [--json]

  Lists the album's files, decrypted here, newest first by the date each was taken, under a
  heading for each month ("July 2019"): one file a line in columns under a header (name with
  its subfolder, size, type, dimensions and a video's length (m:ss), the date taken, FROM:
  where that date came from, FAV: ♥ for a favourite, and in an album others are in, ADDED BY: who added it),
  and a last line with the count and the total size. The date taken is the first of: EXIF
  DateTimeOriginal (exif-original), CreateDate (exif-digitized), ModifyDate (exif-modified),
  the GPS date and time (gps), a date in the file's name (file-name), its modification time at
  backup (file-modified), its upload time (uploaded); \`exif\` for a file backed up before
  coffer-photos recorded which EXIF date it read. Dates and months are the clock where the
  photo was taken (the camera's, at its EXIF offset; UTC for the GPS clock without one); a
  modification or upload time is shown in your time zone (TZ).

  --json   one JSON object per line on stdout: file (one per file, in the same order), with
           taken (ISO 8601 at that clock: with its offset when known, "2019-07-31T23:30:00-07:00",
           else without a zone, "2019-07-04T12:34:56"), taken_source, duration (a video's
           length in milliseconds, else null), favourite, and
           added_by (an email, or "you") in an album others are in`,
  options: {},
  async run({ positionals, out, signal, home, zone }) {
    if (positionals.length !== 1) throw new UsageError('ls takes one album name')
    const account = await openAccount(home, commandClientOptions(out, signal))
    const { album, library } = await albumByName(account, positionals[0])
    // In an album others are in: who added each file (its signed manifest's writer), by email.
    const people = await account.client.listMembers(album.albumId)
    const shared = people.members.length > 0 || people.owner.user_id !== account.userId
    const emails = new Map([[people.owner.user_id, people.owner.email], ...people.members.map((member) => [member.user_id, member.email] as const)])
    const addedBy = (writer: string): string => (writer === account.userId ? 'you' : (emails.get(writer) ?? writer))
    const now = Date.now()
    const files = [] // what is listed, not the opened files (their streams and keys)
    for await (const file of albumFiles(library, album.albumId, await outsideTrash(library, out)))
      files.push({
        assetId: file.assetId,
        metadata: file.metadata,
        taken: metadataTaken(file.metadata, file.envelope.timestamp, { now, zone }),
        writer: file.envelope.created_by_user,
      })
    // Newest first by the wall clock, as the months group them: a photo at 23:30 on 31 July at
    // -07:00 is under July, below one taken at 00:30 on 1 August in Tokyo, hours before it. Then
    // the moment, a name, then an asset id settle a tie, so that the order is the same every time.
    const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
    files.sort((a, b) => b.taken.local - a.taken.local || b.taken.at - a.taken.at || byName(a.metadata.name, b.metadata.name) || byName(a.assetId, b.assetId))
    let bytes = 0
    const rows: string[][] = []
    const months: { readonly heading: string; readonly rows: number }[] = []
    for (const file of files) {
      const { name, size, type, captured, capturedOffset, modified, width, height } = file.metadata
      const duration = file.metadata.duration ?? null
      const taken = takenIso(file.taken)
      bytes += size
      out.event('file', {
        name,
        size,
        type,
        taken,
        taken_source: file.taken.source,
        captured,
        captured_offset: capturedOffset ?? null,
        modified,
        width,
        height,
        duration,
        asset_id: file.assetId,
        favourite: file.metadata.favourite === true,
        location: file.metadata.location === undefined ? null : [file.metadata.location.latitude, file.metadata.location.longitude],
        description: file.metadata.description ?? null,
        ...(shared ? { added_by: addedBy(file.writer) } : {}),
        derivatives: file.metadata.blobs.filter((b) => b.kind !== 'original').map((b) => b.kind),
      })
      rows.push([
        name,
        bytesText(size),
        type,
        [width !== null && height !== null ? `${width}×${height}` : '', duration === null ? '' : durationText(duration)]
          .filter((cell) => cell !== '')
          .join(' '),
        new Date(file.taken.local).toISOString().slice(0, 19).replace('T', ' '),
        file.taken.source,
        file.metadata.favourite === true ? '♥' : '',
        ...(shared ? [addedBy(file.writer)] : []),
      ])
      const heading = MONTH.format(file.taken.local)
      if (months.at(-1)?.heading === heading) months.push({ heading, rows: months.pop()!.rows + 1 })
      else months.push({ heading, rows: 1 })
    }
    if (rows.length > 0) {
      // One header over every month, so that the columns line up down the whole list.
      const [header, ...lines] = columns(['NAME', 'SIZE', 'TYPE', 'DIMENSIONS', 'TAKEN', 'FROM', 'FAV', ...(shared ? ['ADDED BY'] : [])], rows, [1])
      out.say(header!)
      for (const month of months) {
        out.say('')
        out.say(month.heading)
        for (const line of lines.splice(0, month.rows)) out.say(line)
      }
      out.say('')
    }
    out.say(`${files.length} file${files.length === 1 ? '' : 's'}, ${bytesText(bytes)}`)
    return EXIT.ok
  },
}
