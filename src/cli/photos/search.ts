// `coffer-photos search <query>...` (docs/photos.md, "Searching"; decision 0070): every album the
// account reads, searched on this device by what the photos' encrypted metadata says. The index
// is kept sealed in the config folder's state.sqlite (client/node/search-store.ts) and brought up
// to date first from each album's feed, from where it last stopped (client/search-sync.ts): only
// new and changed photos have their metadata opened. The query is client/search.ts's.
import path from 'node:path'
import { albumName } from '../../client/format/ids.ts'
import { openSearchStore, type StoredAlbumIndex } from '../../client/node/search-store.ts'
import { loadPlaces, mapLink, type Place } from '../../client/places.ts'
import { describeQuery, search as searchIndex, SearchIndex, searchEntry, type SearchHit } from '../../client/search.ts'
import { refreshAlbumIndex, type AlbumRefresh } from '../../client/search-sync.ts'
import { takenIso } from '../../client/taken.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { columns } from './albums.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { checkedTrash, countOption, libraryOf, sharedLibrariesOf, type PhotosLibrary } from './library.ts'

/** Hits listed unless --limit says otherwise: the newest; the count says how many there are. */
const DEFAULT_LIMIT = 100
const LIMIT_MAX = 1_000_000

/** True when a refresh changed nothing the store keeps: no write. */
function unchanged(stored: StoredAlbumIndex | null, refresh: AlbumRefresh): boolean {
  if (stored === null || refresh.put.length > 0 || refresh.removed.length > 0) return false
  const [before, after] = [stored.state, refresh.state]
  return (
    before.through === after.through &&
    before.name === after.name &&
    before.record.length === after.record.length &&
    JSON.stringify(before.retry) === JSON.stringify(after.retry)
  )
}

const plural = (count: number, word: string): string => `${count.toLocaleString('en')} ${word}${count === 1 ? '' : 's'}`

/** A hit's place for a person: its name, or where no place is near, its position. */
const placeCell = (hit: SearchHit): string => hit.placeName ?? (hit.place === null ? '' : `${hit.place.latitude.toFixed(4)}, ${hit.place.longitude.toFixed(4)}`)

function placeJson(hit: SearchHit, place: Place | null): Record<string, unknown> | null {
  if (hit.place === null) return null
  return {
    name: hit.placeName,
    city: place?.city ?? null,
    region: place?.region ?? null,
    country: place?.country ?? null,
    country_code: place?.countryCode ?? null,
    latitude: hit.place.latitude,
    longitude: hit.place.longitude,
    map: mapLink(hit.place),
  }
}

export const search: Command = {
  usage: `usage: coffer-photos search <query>... [--album <name>] [--limit N] [--json]

  Finds photos and videos in every album you can read (yours and those shared with you) by
  what their encrypted metadata says, here on this device: the server sees no query. Lists
  each one found, newest taken first (the date taken, its name, album and place), and how many
  there are. Case and accents do not matter ("malmo" finds Malmö).

  A query is words, dates and keywords, in any order; a photo is found when it matches all:
    words        each must start a word of the photo's name, camera, album or place (a word of
                 3 letters or more may be anywhere in one: "1234" finds IMG_1234.JPG); a place
                 is the town, region and country where the photo was taken, named here from a
                 table shipped with coffer-photos (backups keep positions only with --location)
    "in quotes"  a phrase, never read as a date or keyword ("2019" in a name)
    dates        2019, "July 2019", "jul 2019", 2019-07, 2019-07-14, "14 July 2019", a month
                 of any year (July), and ranges: 2018-2019, "2018 to 2019", "March 2019 - June
                 2019", "March to June 2019", "between 2018 and 2019"
    favourites   favourites only (also: favorites, favourite, fav)
    videos       videos only (also: video, movies); photos: photos only

  The first search reads every album and opens each photo's metadata, as \`albums\` does; the
  index it builds is kept in the config folder's state.sqlite, encrypted under the account's
  key, and each later search reads only what the albums' feeds gained since. Photos in Recently
  deleted are left out.

  --album <name>  only that album
  --limit N       list at most N (default ${DEFAULT_LIMIT}, the newest); the count is of them all
  --json          one JSON object per line on stdout: indexed (albums, photos, opened, updated,
                  removed, failed), hit (one per photo listed: asset_id, album_id, album, name,
                  taken, kind, favourite, camera, place with its map link), summary (total, shown,
                  query as understood)`,
  options: { album: { type: 'string' }, limit: { type: 'string' } },
  async run({ positionals, values, out, signal, home, zone }) {
    const text = positionals.join(' ').trim()
    const wantedAlbum = typeof values.album === 'string' ? values.album : undefined
    if (text === '' && wantedAlbum === undefined) throw new UsageError('search takes what to look for: words, a date, "favourites", "videos" ...')
    const limit = countOption(values.limit, 'limit', DEFAULT_LIMIT, LIMIT_MAX)
    const account = await openAccount(home, commandClientOptions(out, signal))
    const own = libraryOf(account)
    const readable: Array<{ readonly albumId: string; readonly library: PhotosLibrary }> = [
      ...(await account.client.listAlbums()).albums.map((album) => ({ albumId: album.album_id, library: own })),
      ...(await sharedLibrariesOf(account)).map((shared) => ({ albumId: shared.albumId, library: shared.library })),
    ]

    // Bring the index up to date, album by album, from where each stopped.
    const indexes: Array<{ readonly albumId: string; readonly index: StoredAlbumIndex }> = []
    const totals = { opened: 0, updated: 0, removed: 0, failed: 0 }
    const store = await openSearchStore(path.join(account.home, 'state.sqlite'), account.masterKey)
    try {
      const listed = new Set(readable.map((album) => album.albumId))
      for (const albumId of store.albumIds()) if (!listed.has(albumId)) store.drop(albumId) // left, unshared or deleted
      for (const { albumId, library } of readable) {
        if (signal.aborted) break
        const stored = await store.load(albumId)
        const held = new Map((stored?.chunks ?? []).flatMap((chunk) => chunk.map((asset) => [asset.assetId, asset.version] as const)))
        const refresh = await refreshAlbumIndex(library, albumId, stored?.state ?? null, held, { signal })
        indexes.push({ albumId, index: unchanged(stored, refresh) ? stored! : await store.update(albumId, stored, refresh) })
        totals.opened += refresh.opened
        totals.updated += refresh.put.length
        totals.removed += refresh.removed.length
        totals.failed += refresh.failed.length
        for (const error of refresh.failed) out.warn(`coffer-photos: left out of the search, its metadata does not open: ${error.message}`)
      }
    } finally {
      store.close()
    }

    const names = new Map(indexes.map(({ albumId, index }) => [albumId, index.state.name]))
    let albumId: string | undefined
    if (wantedAlbum !== undefined) {
      const wanted = albumName(wantedAlbum)
      albumId = indexes.find(({ index }) => index.state.name === wanted)?.albumId
      if (albumId === undefined) throw new UsageError(`there is no album "${wanted}" (\`coffer-photos albums\` lists them)`)
    }
    const assets = indexes.flatMap(({ albumId, index }) => index.chunks.flatMap((chunk) => chunk.map((asset) => ({ albumId, asset }))))
    // The table of place names is loaded only when a photo has a position.
    const places = assets.some(({ asset }) => asset.metadata.location !== undefined) ? await loadPlaces() : null
    const index = new SearchIndex({ places })
    const now = Date.now()
    for (const { albumId, asset } of assets) index.put(searchEntry(asset.assetId, albumId, asset.metadata, asset.uploaded, { now, zone }))
    out.event('indexed', { albums: indexes.length, photos: index.size, ...totals })
    if (totals.opened > 0 && !out.json)
      out.warn(
        `coffer-photos: indexed ${plural(totals.opened, 'new or changed file')} (the index is kept encrypted in ${path.join(account.home, 'state.sqlite')})`,
      )

    const trashed = new Set((await checkedTrash(own, out)).files.map((file) => file.assetId))
    const found = searchIndex(index, names, text, { limit, exclude: trashed, ...(albumId === undefined ? {} : { albumId }) })
    const understood = [describeQuery(found.query), ...(albumId === undefined ? [] : [`in album "${names.get(albumId)}"`])]
      .filter((part) => part !== '')
      .join(', ')
    const rows: string[][] = []
    for (const hit of found.hits) {
      const taken = hit.taken === null ? null : takenIso({ local: hit.taken, offset: null })
      out.event('hit', {
        asset_id: hit.assetId,
        album_id: hit.albumId,
        album: hit.album,
        name: hit.name,
        taken,
        kind: hit.kind,
        favourite: hit.favourite,
        camera: hit.camera,
        place: placeJson(hit, index.placeOf(hit.assetId)),
      })
      rows.push([taken === null ? '' : taken.slice(0, 19).replace('T', ' '), `${hit.name}${hit.favourite ? ' ♥' : ''}`, hit.album ?? '', placeCell(hit)])
    }
    out.event('summary', { total: found.total, shown: found.hits.length, query: understood })
    if (found.total === 0) {
      out.say(`nothing found (${understood})`)
      return EXIT.ok
    }
    for (const line of columns(['TAKEN', 'NAME', 'ALBUM', 'PLACE'], rows, [])) out.say(line)
    out.say('')
    const shown = found.hits.length < found.total ? `, the newest ${found.hits.length} listed (--limit N lists more)` : ''
    out.say(`${plural(found.total, 'file')} found (${understood})${shown}`)
    return EXIT.ok
  },
}
