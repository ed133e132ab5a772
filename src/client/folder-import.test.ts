import { describe, expect, it } from 'vitest'
import type { MediaFacts } from './files.ts'
import {
  favouritesOf,
  folderFacts,
  isPhotoDetailsName,
  parsePhotoDetails,
  PHOTO_DETAILS_MAX_LENGTH,
  PhotoDetailsError,
  sidecarDateAgrees,
} from './folder-import.ts'
import type { XmpFacts } from './xmp.ts'

const at = (iso: string): number => Date.parse(iso)
const NO_SIDECAR: XmpFacts = { takenAt: null, offset: null, dateTag: null, precision: null, location: null, description: null, rating: null }
const sidecar = (facts: Partial<XmpFacts>): XmpFacts => ({ ...NO_SIDECAR, ...facts })
/** A file as node/media.ts describes it: its EXIF date (a moment, and the offset of its wall clock, or floating). */
const file = (captured: number | null, offset: number | null = null, extra: Partial<MediaFacts> = {}): MediaFacts => ({
  captured,
  capturedSource: captured === null ? null : 'exif-original',
  capturedOffset: captured === null ? null : offset,
  width: 4,
  height: 3,
  camera: null,
  location: null,
  derivatives: [],
  ...extra,
})
const options = { location: true, name: 'trip/IMG_1.jpg', now: at('2025-01-01T00:00:00Z') }
const dateOf = (facts: MediaFacts) => [facts.captured, facts.capturedSource, facts.capturedOffset]

describe('folderFacts: the date taken', () => {
  it("takes the sidecar's date over the file's own when they differ, at the sidecar's offset", () => {
    const facts = folderFacts(
      file(at('2019-07-04T10:00:00Z'), 120),
      { sidecar: sidecar({ takenAt: at('2018-01-02T03:04:05Z'), offset: -300, precision: 'second' }) },
      options,
    )
    expect(dateOf(facts)).toEqual([at('2018-01-02T03:04:05Z'), 'xmp', -300])
  })

  it('takes it floating (offset null) when it states no offset, and when the file has no date', () => {
    expect(
      dateOf(folderFacts(file(at('2019-07-04T10:00:00Z'), 120), { sidecar: sidecar({ takenAt: at('2019-07-05T10:00:00Z'), precision: 'second' }) }, options)),
    ).toEqual([at('2019-07-05T10:00:00Z'), 'xmp', null])
    expect(dateOf(folderFacts(file(null), { sidecar: sidecar({ takenAt: at('2019-07-05T10:00:00Z'), precision: 'minute' }) }, options))).toEqual([
      at('2019-07-05T10:00:00Z'),
      'xmp',
      null,
    ])
  })

  it("keeps the file's own date when the sidecar says the same to its precision: the same wall clock, no other offset", () => {
    // 12:34:56.250 at +02:00 in the file; the sidecar's floating 12:34:56, or the same at +02:00.
    const own = file(at('2019-07-04T10:34:56.250Z'), 120)
    for (const same of [
      { takenAt: at('2019-07-04T12:34:56Z'), offset: null, precision: 'second' as const },
      { takenAt: at('2019-07-04T10:34:56Z'), offset: 120, precision: 'second' as const },
      { takenAt: at('2019-07-04T12:34:00Z'), offset: null, precision: 'minute' as const },
    ])
      expect(dateOf(folderFacts(own, { sidecar: sidecar(same) }, options)), JSON.stringify(same)).toEqual([
        at('2019-07-04T10:34:56.250Z'),
        'exif-original',
        120,
      ])
    // One second off, or the same wall clock at another offset: the sidecar's.
    expect(folderFacts(own, { sidecar: sidecar({ takenAt: at('2019-07-04T12:34:57Z'), precision: 'second' }) }, options).capturedSource).toBe('xmp')
    expect(dateOf(folderFacts(own, { sidecar: sidecar({ takenAt: at('2019-07-04T11:34:56Z'), offset: 60, precision: 'second' }) }, options))).toEqual([
      at('2019-07-04T11:34:56Z'),
      'xmp',
      60,
    ])
    // A floating file and a sidecar that adds the offset to the same wall clock: the sidecar says more.
    expect(
      dateOf(
        folderFacts(file(at('2019-07-04T12:34:56Z')), { sidecar: sidecar({ takenAt: at('2019-07-04T10:34:56Z'), offset: 120, precision: 'second' }) }, options),
      ),
    ).toEqual([at('2019-07-04T10:34:56Z'), 'xmp', 120])
  })

  it("with a date alone (precision day), keeps the file's own time on that day, else takes the day's midnight, floating", () => {
    const day = sidecar({ takenAt: at('2019-07-04T00:00:00Z'), precision: 'day' })
    // 23:30 at -07:00 on 4 July is 5 July in UTC: the wall clock's day is compared.
    expect(dateOf(folderFacts(file(at('2019-07-05T06:30:00Z'), -420), { sidecar: day }, options))).toEqual([at('2019-07-05T06:30:00Z'), 'exif-original', -420])
    expect(dateOf(folderFacts(file(at('2019-07-05T12:00:00Z'), 0), { sidecar: day }, options))).toEqual([at('2019-07-04T00:00:00Z'), 'xmp', null])
    expect(dateOf(folderFacts(file(null), { sidecar: day }, options))).toEqual([at('2019-07-04T00:00:00Z'), 'xmp', null])
    // Without a date in the file, the date in its name counts as its own (the reader takes it when captured is null).
    expect(dateOf(folderFacts(file(null), { sidecar: day }, { ...options, name: 'IMG_20190704_183000.jpg' }))).toEqual([null, null, null])
    expect(folderFacts(file(null), { sidecar: day }, { ...options, name: 'IMG_20190705_183000.jpg' }).capturedSource).toBe('xmp')
  })

  it('compares days before 1970 too (negative wall clocks)', () => {
    const day = sidecar({ takenAt: at('1965-03-01T00:00:00Z'), precision: 'day' })
    expect(sidecarDateAgrees(file(at('1965-03-01T15:00:00Z')), day, 'scan.jpg')).toBe(true)
    expect(sidecarDateAgrees(file(at('1965-02-28T23:59:59Z')), day, 'scan.jpg')).toBe(false)
  })

  it("leaves the file's date alone when the sidecar has none", () => {
    expect(dateOf(folderFacts(file(at('2019-07-04T10:00:00Z'), 120), { sidecar: sidecar({ description: 'x' }) }, options))).toEqual([
      at('2019-07-04T10:00:00Z'),
      'exif-original',
      120,
    ])
  })
})

describe('folderFacts: place, description, favourite', () => {
  const paris = { latitude: 48.8566, longitude: 2.3522 }
  const rome = { latitude: 41.9, longitude: 12.5 }

  it("takes the sidecar's place over the file's EXIF position, the file's when the sidecar has none, none without places", () => {
    expect(folderFacts(file(null, null, { location: rome }), { sidecar: sidecar({ location: paris }) }, options).location).toEqual(paris)
    expect(folderFacts(file(null, null, { location: rome }), { sidecar: sidecar({}) }, options).location).toEqual(rome)
    expect(folderFacts(file(null), { sidecar: sidecar({ location: paris }) }, { ...options, location: false }).location).toBeNull()
  })

  it('makes the description fit (descriptionOf), and gives none for none', () => {
    expect(folderFacts(file(null), { sidecar: sidecar({ description: 'Line one\r\nline\u0007two' }) }, options).description).toBe('Line one\nline two')
    expect(folderFacts(file(null), { sidecar: sidecar({}) }, options)).not.toHaveProperty('description')
  })

  it("does not make a rating a favourite; Apple's mark does, with or without a sidecar", () => {
    expect(folderFacts(file(null), { sidecar: sidecar({ rating: 5 }) }, options)).not.toHaveProperty('favourite')
    expect(folderFacts(file(null), { sidecar: null, favourite: true }, options).favourite).toBe(true)
    expect(folderFacts(file(null), { sidecar: sidecar({ rating: 1 }), favourite: true }, options).favourite).toBe(true)
    expect(folderFacts(file(null), { sidecar: null, favourite: false }, options)).not.toHaveProperty('favourite')
  })

  it('returns the file as it is without a sidecar or a mark', () => {
    const own = file(at('2019-07-04T10:00:00Z'), 120, { location: rome })
    expect(folderFacts(own, { sidecar: null }, options)).toEqual(own)
  })
})

describe("Apple's Photo Details.csv", () => {
  const HEADER = 'imgName,fileChecksum,favorite,hidden,deleted,originalCreationDate,viewCount,importDate'

  it('knows its names: Photo Details.csv and its numbered parts, in any case', () => {
    for (const name of ['Photo Details.csv', 'Photo Details-1.csv', 'photo details-12.CSV']) expect(isPhotoDetailsName(name), name).toBe(true)
    for (const name of ['Photo Details (1).csv', 'Photo Details.csv.xmp', 'Photos.csv', 'Goa 2021.csv']) expect(isPhotoDetailsName(name), name).toBe(false)
  })

  it('reads each row: the name and the favourite mark; quoted dates with commas, CRLF, a byte-order mark', () => {
    const text = `\uFEFF${HEADER}\r\nIMG_0001.HEIC,AfQj57ORF2JIumUCjO+PawZ9nqPg,yes,no,no,"Saturday June 4,2022 12:11 PM GMT",10,"Saturday June 4,2022 12:11 PM GMT"\r\nIMG_0002.JPG,x,no,no,no,"Sunday June 5,2022 1:00 AM GMT",0,\r\n\r\n"Café ""quoted"".jpg",y,YES,no,no,"Monday June 6,2022 9:00 PM GMT",1,\r\n`
    expect(parsePhotoDetails(text)).toEqual({
      rows: [
        { name: 'IMG_0001.HEIC', favourite: true },
        { name: 'IMG_0002.JPG', favourite: false },
        { name: 'Café "quoted".jpg', favourite: true },
      ],
      skipped: 0,
    })
  })

  it('skips a row of another length (an unquoted date with its comma) or without a name, and counts it', () => {
    const text = `${HEADER}\nIMG_1.JPG,x,yes,no,no,Sunday June 27,2021 9:00 AM GMT,0,\n,x,yes,no,no,"d",0,\nIMG_2.JPG,x,maybe,no,no,"d",0,`
    expect(parsePhotoDetails(text)).toEqual({ rows: [{ name: 'IMG_2.JPG', favourite: null }], skipped: 2 })
  })

  it('reads names in NFC (a name from macOS may be decomposed)', () => {
    expect(parsePhotoDetails(`${HEADER}\nCafe\u0301.jpg,x,yes,no,no,"d",0,`).rows[0]!.name).toBe('Caf\u00e9.jpg')
  })

  it('refuses a file too large, not closed, or without the two columns, with PhotoDetailsError', () => {
    const problem = (text: string) => {
      try {
        parsePhotoDetails(text)
        return null
      } catch (error) {
        expect(error).toBeInstanceOf(PhotoDetailsError)
        return (error as PhotoDetailsError).problem
      }
    }
    expect(problem(`${HEADER}\nIMG_1.JPG,x,yes,no,no,"June 4,0,`)).toBe('malformed')
    expect(problem('Images\nIMG_1.JPG\n')).toBe('not-photo-details')
    expect(problem('')).toBe('not-photo-details')
    expect(problem(`${HEADER}\n${'x'.repeat(PHOTO_DETAILS_MAX_LENGTH)}`)).toBe('too-large')
  })

  it('makes a favourite of a name some row marks yes and none no', () => {
    const first = parsePhotoDetails(`${HEADER}\nA.jpg,x,yes,no,no,d,0,\nB.jpg,x,yes,no,no,d,0,\nC.jpg,x,no,no,no,d,0,`)
    const second = parsePhotoDetails(`${HEADER}\nB.jpg,x,no,no,no,d,0,\nD.jpg,x,yes,no,no,d,0,`)
    expect([...favouritesOf([first, second])].sort()).toEqual(['A.jpg', 'D.jpg'])
  })
})
