// Search on the device (search.ts, decision 0070): text folded as it is compared, a camera's
// name, an entry from a photo's metadata, every form of query parseQuery reads, search over an
// index (each kind of term, all words must match, newest first, an album's name from the caller,
// put and remove one at a time against a plain filter-and-sort of the same photos), and suggest's
// completions with their counts.
import { describe, expect, it } from 'vitest'
import type { Place, PlaceLookup } from './places.ts'
import {
  cameraText,
  describeQuery,
  fold,
  kindOf,
  parseQuery,
  search,
  SearchIndex,
  searchEntry,
  suggest,
  words,
  type SearchEntry,
  type SearchQuery,
} from './search.ts'

const PARIS: Place = { city: 'Paris', region: 'Île-de-France', country: 'France', countryCode: 'FR' }
const REYKJAVIK: Place = { city: 'Reykjavík', region: 'Capital Region', country: 'Iceland', countryCode: 'IS' }
const MALMO: Place = { city: 'Malmö', region: 'Skåne', country: 'Sweden', countryCode: 'SE' }
/** Places by whole degrees of latitude: 48 Paris, 64 Reykjavík, 55 Malmö; elsewhere none. */
const places: PlaceLookup = ({ latitude }) => ({ 48: PARIS, 64: REYKJAVIK, 55: MALMO })[Math.floor(latitude)] ?? null
const at = {
  paris: { latitude: 48.85, longitude: 2.35 },
  reykjavik: { latitude: 64.14, longitude: -21.94 },
  malmo: { latitude: 55.6, longitude: 13 },
  sea: { latitude: 30, longitude: -40 },
}

const entry = (assetId: string, fields: Partial<SearchEntry> = {}): SearchEntry => ({
  assetId,
  albumId: 'trips',
  name: `${assetId}.jpg`,
  taken: null,
  camera: null,
  place: null,
  favourite: false,
  kind: 'photo',
  description: null,
  ...fields,
})

const ALBUMS = new Map<string, string | null>([
  ['trips', 'Trips'],
  ['family', 'Family & Friends'],
  ['nameless', null],
])

const utc = (year: number, month: number, day = 1, hour = 12) => Date.UTC(year, month - 1, day, hour)

/** A small library: each photo named for what finds it. */
function library(): SearchIndex {
  const index = new SearchIndex({ places })
  index.putAll([
    entry('harbour', { name: 'iceland/harbour-dawn.JPG', taken: utc(2019, 7, 14, 8), camera: 'Canon EOS 5D', place: at.reykjavik }),
    entry('glacier', { name: 'glacier.jpg', taken: utc(2019, 7, 16), camera: 'FUJIFILM X-T3', place: at.reykjavik, favourite: true }),
    entry('puffins', { name: 'puffins.mp4', taken: utc(2019, 7, 15), kind: 'video' }),
    entry('cake', { albumId: 'family', name: 'IMG_1234.JPG', taken: utc(2018, 3, 10), camera: 'Apple iPhone 12', place: at.paris, favourite: true }),
    entry('garden', { albumId: 'family', name: 'garden.jpg', taken: utc(2020, 6, 1), camera: 'NIKON D750', description: 'Roses in first bloom by the shed' }),
    entry('scan', { albumId: 'family', name: 'Großmutter.tif', taken: utc(2017, 12, 24) }),
    entry('bridge', { albumId: 'nameless', name: 'öresund-bridge.jpg', taken: utc(2021, 8, 2), place: at.malmo }),
    entry('undated', { albumId: 'nameless', name: 'undated.png' }),
    entry('boat', { name: 'boat.jpg', taken: utc(2019, 7, 16), place: at.sea }),
  ])
  return index
}

const found = (index: SearchIndex, query: string, options: Parameters<typeof search>[3] = {}): string[] =>
  search(index, ALBUMS, query, options).hits.map((hit) => hit.assetId)

describe('text as compared', () => {
  it('folds case, accents and the letters that do not decompose', () => {
    expect(fold('Malmö')).toBe('malmo')
    expect(fold('ÉCOLE')).toBe('ecole')
    expect(fold('Großmutter Łódź Ærø')).toBe('grossmutter lodz aero')
    expect(fold('İstanbul')).toBe('istanbul')
    expect(words('IMG_0042.JPG')).toEqual(['img', '0042', 'jpg'])
    expect(words('Reykjavík, Iceland')).toEqual(['reykjavik', 'iceland'])
    expect(words('東京タワー')).toEqual(['東京タワー'])
  })

  it("writes a camera's make once", () => {
    expect(cameraText({ make: 'Canon', model: 'Canon EOS 5D' })).toBe('Canon EOS 5D')
    expect(cameraText({ make: 'NIKON CORPORATION', model: 'NIKON D750' })).toBe('NIKON D750')
    expect(cameraText({ make: 'OLYMPUS IMAGING CORP.', model: 'E-M5' })).toBe('OLYMPUS E-M5')
    expect(cameraText({ make: 'Apple', model: 'iPhone 12' })).toBe('Apple iPhone 12')
    expect(cameraText({ make: 'samsung', model: 'SM-G991B' })).toBe('samsung SM-G991B')
    expect(cameraText({ model: 'X-T3' })).toBe('X-T3')
    expect(cameraText({ make: 'FUJIFILM' })).toBe('FUJIFILM')
    expect(cameraText({})).toBeNull()
    expect(cameraText(undefined)).toBeNull()
  })

  it("makes an entry from a photo's metadata: the wall clock where it was taken, the camera, the position, the kind, the caption", () => {
    const metadata = {
      name: 'trip/IMG_0001.HEIC',
      type: 'image/heic',
      modified: null,
      // 23:30 on 31 July at -07:00: 06:30 on 1 August in UTC.
      captured: Date.UTC(2019, 7, 1, 6, 30),
      capturedSource: 'exif-original' as const,
      capturedOffset: -420,
      camera: { make: 'Apple', model: 'iPhone 12', iso: 100 },
      location: at.paris,
      favourite: true,
      description: 'Dinner at the top',
    }
    expect(searchEntry('a1', 'b1', metadata, '2020-01-01T00:00:00Z')).toEqual({
      assetId: 'a1',
      albumId: 'b1',
      name: 'trip/IMG_0001.HEIC',
      taken: Date.UTC(2019, 6, 31, 23, 30),
      camera: 'Apple iPhone 12',
      place: at.paris,
      favourite: true,
      kind: 'photo',
      description: 'Dinner at the top',
    })
    // No date in the file: its name's, else its upload time in the viewer's zone.
    const plain = { name: 'clip.mov', type: 'video/quicktime', modified: null, captured: null }
    expect(searchEntry('a2', 'b1', plain, Date.UTC(2021, 0, 2, 3), { zone: () => 60 })).toMatchObject({
      taken: Date.UTC(2021, 0, 2, 4),
      kind: 'video',
      favourite: false,
      place: null,
      description: null,
    })
    expect(searchEntry('a3', 'b1', { ...plain, name: 'VID_20200704_101500.mp4' }, 0).taken).toBe(Date.UTC(2020, 6, 4, 10, 15))
    expect(kindOf('VIDEO/MP4')).toBe('video')
    expect(kindOf('image/x-canon-cr3')).toBe('photo')
  })
})

describe('parseQuery', () => {
  /** The dates of a query as [first day, last day] (months of any year as "mM"). */
  const dates = (query: SearchQuery): string[] =>
    query.dates.map((date) =>
      date.month === undefined ? `${new Date(date.from).toISOString().slice(0, 10)}..${new Date(date.to - 1).toISOString().slice(0, 10)}` : `m${date.month}`,
    )

  it.each([
    ['2019', ['2019-01-01..2019-12-31'], '2019'],
    ['July 2019', ['2019-07-01..2019-07-31'], 'July 2019'],
    ['jul 2019', ['2019-07-01..2019-07-31'], 'July 2019'],
    ['SEPT 2020', ['2020-09-01..2020-09-30'], 'September 2020'],
    ['2019-07', ['2019-07-01..2019-07-31'], 'July 2019'],
    ['2019/7', ['2019-07-01..2019-07-31'], 'July 2019'],
    ['2019-07-14', ['2019-07-14..2019-07-14'], '14 July 2019'],
    ['14 July 2019', ['2019-07-14..2019-07-14'], '14 July 2019'],
    ['14th jul 2019', ['2019-07-14..2019-07-14'], '14 July 2019'],
    ['July 14, 2019', ['2019-07-14..2019-07-14'], '14 July 2019'],
    ['29 February 2020', ['2020-02-29..2020-02-29'], '29 February 2020'],
    ['july', ['m7'], 'July'],
    ['2018-2019', ['2018-01-01..2019-12-31'], '2018 – 2019'],
    ['2018 to 2019', ['2018-01-01..2019-12-31'], '2018 – 2019'],
    ['2018 – 2019', ['2018-01-01..2019-12-31'], '2018 – 2019'],
    ['from 2010 until 2012', ['2010-01-01..2012-12-31'], '2010 – 2012'],
    ['between 2018 and 2019', ['2018-01-01..2019-12-31'], '2018 – 2019'],
    ['2019 to 2018', ['2018-01-01..2019-12-31'], '2019 – 2018'],
    ['March 2019 - June 2019', ['2019-03-01..2019-06-30'], 'March 2019 – June 2019'],
    ['March to June 2019', ['2019-03-01..2019-06-30'], 'March – June 2019'],
    ['December to February 2020', ['2019-12-01..2020-02-29'], 'December – February 2020'],
    ['November 2019 to March', ['2019-11-01..2020-03-31'], 'November 2019 – March'],
    ['2019-07-14 to 2019-07-20', ['2019-07-14..2019-07-20'], '14 July 2019 – 20 July 2019'],
    ['June to August', ['m6', 'm7', 'm8'], 'June, July, August'],
    ['November to February', ['m11', 'm12', 'm1', 'm2'], 'November, December, January, February'],
    ['2019 2021', ['2019-01-01..2019-12-31', '2021-01-01..2021-12-31'], '2019, 2021'],
  ])('reads the date %s', (text, expected, label) => {
    const query = parseQuery(text)
    expect(dates(query)).toEqual(expected)
    expect(describeQuery(query)).toBe(label)
    expect(query.words).toEqual([])
  })

  it('leaves what is not a date as words: a year out of range, a day that does not exist, a month of 13', () => {
    expect(parseQuery('1799').dates).toEqual([])
    expect(parseQuery('1799').words).toEqual(['1799'])
    expect(parseQuery('2019-13').words).toEqual(['2019', '13'])
    expect(parseQuery('2019-02-30').dates).toEqual([])
    expect(describeQuery(parseQuery('31 June 2019'))).toBe('"31", June 2019')
    expect(parseQuery('IMG_20190704').words).toEqual(['img', '20190704'])
  })

  it('reads favourites and kinds in any spelling, quoted phrases as words, and leaves out joining words', () => {
    for (const word of ['favourites', 'Favorites', 'FAVOURITE', 'favorite', 'fav', '♥'])
      expect(parseQuery(word), word).toMatchObject({ favourites: true, words: [] })
    for (const word of ['video', 'Videos', 'movies']) expect(parseQuery(word).kind, word).toBe('video')
    for (const word of ['photo', 'PHOTOS', 'pictures', 'images']) expect(parseQuery(word).kind, word).toBe('photo')
    expect(parseQuery('photos and videos').kind).toBeNull()
    expect(parseQuery('"2019" "favourites"')).toMatchObject({ words: ['2019', 'favourites'], dates: [], favourites: false })
    expect(parseQuery('"New  York"  beach').words).toEqual(['new york', 'beach'])
    expect(parseQuery('"unclosed quote').words).toEqual(['unclosed quote'])
    expect(parseQuery('photos taken in Malmö during the summer')).toMatchObject({ words: ['malmo', 'summer'], kind: 'photo' })
    expect(describeQuery(parseQuery('Beach favourites videos July 2019'))).toBe('"beach", July 2019, favourites, videos')
  })
})

describe('search', () => {
  it('finds by a word of the name, description, camera, album or place; three letters or more anywhere, fewer at the start of a word', () => {
    const index = library()
    expect(found(index, 'harbour')).toEqual(['harbour'])
    expect(found(index, 'iceland')).toEqual(['glacier', 'harbour']) // its folder, and Reykjavík's country
    expect(found(index, 'dawn')).toEqual(['harbour'])
    expect(found(index, 'awn')).toEqual(['harbour'])
    expect(found(index, 'aw')).toEqual([])
    expect(found(index, 'da')).toEqual(['harbour'])
    expect(found(index, '1234')).toEqual(['cake'])
    expect(found(index, '234')).toEqual(['cake'])
    expect(found(index, 'canon')).toEqual(['harbour'])
    expect(found(index, 'EOS 5d')).toEqual(['harbour'])
    expect(found(index, 'iphone')).toEqual(['cake'])
    expect(found(index, 'paris')).toEqual(['cake'])
    expect(found(index, 'ile de france')).toEqual(['cake'])
    expect(found(index, 'reykjavik')).toEqual(['glacier', 'harbour'])
    expect(found(index, 'malmo')).toEqual(['bridge']) // Malmö, folded
    expect(found(index, 'ØRESUND')).toEqual(['bridge'])
    expect(found(index, 'grossmutter')).toEqual(['scan'])
    expect(found(index, 'friends')).toEqual(['garden', 'cake', 'scan']) // the album "Family & Friends"
    expect(found(index, 'trips puffins')).toEqual(['puffins']) // every word must match, each anything
    expect(found(index, 'canon paris')).toEqual([])
    expect(found(index, '"canon eos"')).toEqual(['harbour'])
    expect(found(index, '"eos canon"')).toEqual([])
    // The caption (an import's description) as the name: a word, a phrase; never a phrase from the name into it.
    expect(found(index, 'bloom')).toEqual(['garden'])
    expect(found(index, 'Shed nikon')).toEqual(['garden'])
    expect(found(index, '"first bloom"')).toEqual(['garden'])
    expect(found(index, '"jpg roses"')).toEqual([])
  })

  it('finds by dates, favourites and kind, with words', () => {
    const index = library()
    expect(found(index, '2019')).toEqual(['boat', 'glacier', 'puffins', 'harbour'])
    expect(found(index, 'July 2019')).toEqual(['boat', 'glacier', 'puffins', 'harbour'])
    expect(found(index, '2019-07-14')).toEqual(['harbour'])
    expect(found(index, '2018-2019')).toEqual(['boat', 'glacier', 'puffins', 'harbour', 'cake'])
    expect(found(index, 'March 2018 to June 2020')).toEqual(['garden', 'boat', 'glacier', 'puffins', 'harbour', 'cake'])
    expect(found(index, 'december')).toEqual(['scan'])
    expect(found(index, 'June to August')).toEqual(['bridge', 'garden', 'boat', 'glacier', 'puffins', 'harbour'])
    expect(found(index, '2017 2021')).toEqual(['bridge', 'scan'])
    expect(found(index, 'favourites')).toEqual(['glacier', 'cake'])
    expect(found(index, 'favourites 2019')).toEqual(['glacier'])
    expect(found(index, 'videos')).toEqual(['puffins'])
    expect(found(index, 'photos iceland')).toEqual(['glacier', 'harbour'])
    expect(found(index, 'videos 2018')).toEqual([])
  })

  it('orders newest taken first, undated last, a tie by asset id; counts all, lists up to the limit', () => {
    const index = library()
    expect(found(index, '')).toEqual(['bridge', 'garden', 'boat', 'glacier', 'puffins', 'harbour', 'cake', 'scan', 'undated'])
    const result = search(index, ALBUMS, '', { limit: 3 })
    expect(result.total).toBe(9)
    expect(result.hits.map((hit) => hit.assetId)).toEqual(['bridge', 'garden', 'boat'])
    expect(result.hits[0]).toMatchObject({ album: null, placeName: 'Malmö, Sweden', name: 'öresund-bridge.jpg' })
    expect(result.hits[2]).toMatchObject({ album: 'Trips', placeName: null, place: at.sea })
  })

  it('takes album names from the caller (a rename shows at once), an album to search in, and photos to leave out', () => {
    const index = library()
    expect(found(index, 'holiday')).toEqual([])
    const renamed = new Map(ALBUMS).set('trips', 'Summer holiday')
    expect(search(index, renamed, 'holiday').hits.map((hit) => [hit.assetId, hit.album])).toEqual([
      ['boat', 'Summer holiday'],
      ['glacier', 'Summer holiday'],
      ['puffins', 'Summer holiday'],
      ['harbour', 'Summer holiday'],
    ])
    expect(found(index, '2019', { albumId: 'family' })).toEqual([])
    expect(found(index, '', { albumId: 'family' })).toEqual(['garden', 'cake', 'scan'])
    expect(found(index, 'favourites', { exclude: new Set(['glacier']) })).toEqual(['cake'])
    expect(search(index, ALBUMS, 'favourites', { exclude: new Set(['glacier']) }).total).toBe(1)
  })

  it('puts a new version in place of the old and removes a photo', () => {
    const index = library()
    expect(found(index, '2019')).toEqual(['boat', 'glacier', 'puffins', 'harbour'])
    index.put(entry('harbour', { name: 'harbour-noon.jpg', taken: utc(2019, 7, 17), favourite: true }))
    expect(index.size).toBe(9)
    expect(found(index, '2019')).toEqual(['harbour', 'boat', 'glacier', 'puffins'])
    expect(found(index, 'dawn')).toEqual([])
    expect(found(index, 'favourites 2019')).toEqual(['harbour', 'glacier'])
    expect(index.remove('glacier')).toBe(true)
    expect(index.remove('glacier')).toBe(false)
    expect(index.get('glacier')).toBeUndefined()
    expect(found(index, 'favourites')).toEqual(['harbour', 'cake'])
    expect(index.placeOf('cake')).toBe(PARIS)
    expect([...index.entries()].length).toBe(8)
  })

  it('answers as a plain filter and sort of the same photos would, through puts and removes one at a time', () => {
    let seed = 41
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!
    const NAMES = ['beach', 'Harbour', 'IMG_0042', 'snow', 'Öland', 'dinner', 'DSC01234']
    const CAMERAS = [null, 'Canon EOS 5D', 'Apple iPhone 12', 'NIKON D750']
    const PLACES = [null, at.paris, at.reykjavik, at.malmo, at.sea]
    const albums = new Map([
      ['a', 'Trips'],
      ['b', 'Family'],
      ['c', 'Work 2020'],
    ])
    const randomEntry = (id: number): SearchEntry =>
      entry(`asset-${id}`, {
        albumId: pick(['a', 'b', 'c']),
        name: `${pick(NAMES)}-${id}.${pick(['jpg', 'heic', 'mov'])}`,
        taken:
          random() < 0.1 ? null : utc(2015 + Math.floor(random() * 8), 1 + Math.floor(random() * 12), 1 + Math.floor(random() * 28), Math.floor(random() * 24)),
        camera: pick(CAMERAS),
        place: pick(PLACES),
        favourite: random() < 0.2,
        kind: random() < 0.15 ? 'video' : 'photo',
      })
    // The same search, written plainly: each photo's words, the rule for a word, a filter, a sort.
    const reference = (photos: Map<string, SearchEntry>, text: string): string[] => {
      const query = parseQuery(text)
      const wordsOf = (photo: SearchEntry): string[] => {
        const place = photo.place === null ? null : places(photo.place)
        const names = place === null ? [] : [place.city, place.region, place.country].filter((name) => name !== null)
        return [photo.name, photo.camera ?? '', ...names].flatMap(words)
      }
      const matchesWord = (photoWords: readonly string[], word: string): boolean =>
        word.includes(' ')
          ? ` ${photoWords.join(' ')} `.includes(word.length >= 3 ? word : ` ${word}`)
          : photoWords.some((w) => (word.length >= 3 ? w.includes(word) : w.startsWith(word)))
      return [...photos.values()]
        .filter((photo) => {
          if (query.favourites && !photo.favourite) return false
          if (query.kind !== null && photo.kind !== query.kind) return false
          if (query.dates.length > 0) {
            if (photo.taken === null) return false
            const month = new Date(photo.taken).getUTCMonth() + 1
            if (!query.dates.some((date) => (date.month === undefined ? photo.taken! >= date.from && photo.taken! < date.to : month === date.month)))
              return false
          }
          return query.words.every((word) => matchesWord(wordsOf(photo), word) || matchesWord(words(albums.get(photo.albumId)!), word))
        })
        .sort((a, b) => (a.taken === b.taken ? (a.assetId < b.assetId ? -1 : 1) : a.taken === null ? 1 : b.taken === null ? -1 : b.taken - a.taken))
        .map((photo) => photo.assetId)
    }
    const QUERIES = [
      '',
      '2019',
      'beach',
      'img',
      'sn',
      '1234',
      'paris 2016',
      'favourites',
      'videos',
      'march to june',
      'work',
      'family beach',
      'canon',
      '2016-2018 photos',
      'iceland',
      'ol',
      'an',
    ]
    const index = new SearchIndex({ places })
    const photos = new Map<string, SearchEntry>()
    let next = 0
    for (let round = 0; round < 40; round++) {
      // Many at once (the order sorted again), then a few (patched in place), some replaced, some removed.
      const changes = round === 0 ? 600 : Math.floor(random() * 20)
      for (let i = 0; i < changes; i++) {
        const roll = random()
        if (roll < 0.15 && photos.size > 0) {
          const id = pick([...photos.keys()])
          photos.delete(id)
          index.remove(id)
        } else {
          const replaced = roll < 0.3 && photos.size > 0 ? Number(pick([...photos.keys()]).slice(6)) : next++
          const photo = randomEntry(replaced)
          photos.set(photo.assetId, photo)
          index.put(photo)
        }
      }
      const text = QUERIES[round % QUERIES.length]!
      const result = search(index, albums, text)
      expect(
        result.hits.map((hit) => hit.assetId),
        `round ${round}: ${text}`,
      ).toEqual(reference(photos, text))
      expect(result.total).toBe(result.hits.length)
      expect(index.size).toBe(photos.size)
    }
  })
})

describe('suggest', () => {
  const labels = (list: ReturnType<typeof suggest>): string[] => list.map((s) => `${s.kind} ${s.label} ${s.count} → ${s.text}`)

  it('completes a year, a month of a year and a month after its name, with how many photos each finds', () => {
    const index = library()
    expect(labels(suggest(index, ALBUMS, '201'))).toEqual(['date 2019 4 → 2019', 'date 2017 1 → 2017', 'date 2018 1 → 2018'])
    expect(labels(suggest(index, ALBUMS, 'jul'))).toEqual(['date July (every year) 4 → July', 'date July 2019 4 → July 2019'])
    expect(labels(suggest(index, ALBUMS, 'ju'))).toEqual(['date July (every year) 4 → July', 'date July 2019 4 → July 2019', 'date June (every year) 1 → June'])
    expect(labels(suggest(index, ALBUMS, 'July 20'))).toEqual(['date July 2019 4 → July 2019'])
    expect(labels(suggest(index, ALBUMS, 'videos 20'))).toEqual(['date 2019 1 → videos 2019'])
  })

  it('completes places, cameras, albums, favourites and kinds, counting with the rest of the query', () => {
    const index = library()
    expect(labels(suggest(index, ALBUMS, 'ice'))).toEqual(['place Iceland 2 → Iceland'])
    expect(labels(suggest(index, ALBUMS, 'rey'))).toEqual(['place Reykjavík, Iceland 2 → Reykjavík'])
    expect(labels(suggest(index, ALBUMS, 'ca'))).toEqual(['place Capital Region, Iceland 2 → Capital Region', 'camera Canon EOS 5D 1 → Canon EOS 5D'])
    expect(labels(suggest(index, ALBUMS, 'fa'))).toEqual(['album Family & Friends 3 → Family & Friends', 'favourites Favourites 2 → favourites'])
    expect(labels(suggest(index, ALBUMS, 'fu'))).toEqual(['camera FUJIFILM X-T3 1 → FUJIFILM X-T3'])
    expect(suggest(index, ALBUMS, 'fri')[0]).toMatchObject({ kind: 'album', albumId: 'family' })
    expect(labels(suggest(index, ALBUMS, '2019 fa'))).toEqual(['favourites Favourites 1 → 2019 favourites'])
    expect(labels(suggest(index, ALBUMS, 'Friends fa'))).toEqual([
      'album Family & Friends 3 → Friends Family & Friends',
      'favourites Favourites 1 → Friends favourites',
    ])
    expect(labels(suggest(index, ALBUMS, 'vid'))).toEqual(['kind Videos 1 → videos'])
    expect(labels(suggest(index, ALBUMS, 'mal'))).toEqual(['place Malmö, Sweden 1 → Malmö'])
    expect(labels(suggest(index, ALBUMS, 'ska'))).toEqual(['place Skåne, Sweden 1 → Skåne'])
    expect(suggest(index, ALBUMS, 'fa', { limit: 1 })).toHaveLength(1)
  })

  it('suggests nothing after a space or for a word nothing starts with, quotes what would read as something else', () => {
    const index = library()
    expect(suggest(index, ALBUMS, '')).toEqual([])
    expect(suggest(index, ALBUMS, 'ice ')).toEqual([])
    expect(suggest(index, ALBUMS, 'zzz')).toEqual([])
    const albums = new Map(ALBUMS).set('trips', 'Trip 2019')
    expect(labels(suggest(index, albums, 'tri'))).toEqual(['album Trip 2019 4 → "Trip 2019"'])
    expect(search(index, albums, '"Trip 2019"').total).toBe(4)
    // At most three of a kind: the years of a long library leave room for the rest.
    const many = new SearchIndex()
    many.putAll(Array.from({ length: 10 }, (_, i) => entry(`y${i}`, { taken: utc(2010 + i, 1), camera: i === 0 ? 'Model 2' : null })))
    expect(suggest(many, ALBUMS, '2').map((s) => s.kind)).toEqual(['date', 'date', 'date', 'camera'])
  })
})
