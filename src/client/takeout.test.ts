// Reading a Google Takeout export (takeout.ts): real-world name pairs for every sidecar rule
// (the pairs of immich-go's matcher tests and issues, ente's and GooglePhotosTakeoutHelper's
// reports; docs/decisions/0071-takeout-import.md), pairs that must not match, photos competing
// for one sidecar, what is skipped and why, sidecar and album JSON read field by field and
// refused when malformed, too large or too deep, album titles and year folders, and the same
// photo in a year folder and an album.
import { describe, expect, it } from 'vitest'
import {
  ALBUM_METADATA_NAMES,
  albumOf,
  groupCopies,
  isYearFolder,
  matchSidecars,
  originalOfEdited,
  parseAlbumMetadata,
  parseSidecar,
  SIDECAR_NAME_LIMIT,
  sidecarNames,
  SUPPLEMENTAL_METADATA,
  SKIPPED_EXPORT_FILE,
  SKIPPED_HIDDEN,
  SKIPPED_NOT_MEDIA,
  SKIPPED_REPEATED,
  TAKEOUT_JSON_MAX_DEPTH,
  TAKEOUT_JSON_MAX_LENGTH,
  TakeoutJsonError,
  type TakeoutJsonProblem,
} from './takeout.ts'

const YEAR = 'Takeout/Google Photos/Photos from 2023'
const inYear = (names: readonly string[]): string[] => names.map((name) => `${YEAR}/${name}`)

/** The sidecar (its name) and the rule matchSidecars gives `media` in a folder of `files` (media included). */
function matchOf(media: string, files: readonly string[]): { sidecar: string | null; via: string | null } {
  const listing = matchSidecars(inYear(files))
  const found = listing.media.find((m) => m.path === `${YEAR}/${media}`)
  if (found === undefined) throw new Error(`${media} is not listed as a photo or video`)
  return { sidecar: found.sidecar?.slice(YEAR.length + 1) ?? null, via: found.via }
}

/** A name of `length` UTF-16 code units ending in `.jpg`. */
const nameOf = (length: number, fill = 'x'): string => `${fill.repeat(length - 4)}.jpg`

describe('matchSidecars: a photo and its own sidecar', () => {
  // [photo or video, its sidecar, where the pair comes from]
  const pairs: [string, string, string][] = [
    ['PXL_20211013_220651983.jpg', 'PXL_20211013_220651983.jpg.json', 'immich-go matcher_test'],
    ['DSC_0100.JPG', 'DSC_0100.JPG.json', 'immich-go: upper-case extension'],
    ['IMG_20190101_120000.jpeg', 'IMG_20190101_120000.jpeg.json', 'lower-case .jpeg'],
    ['PXL_20231118_035751175.MP.jpg', 'PXL_20231118_035751175.MP.jpg.json', 'immich-go: a name with dots'],
    ['PXL_20220405_090123740.PORTRAIT.jpg', 'PXL_20220405_090123740.PORTRAIT.jpg.json', 'immich-go: a name with dots'],
    ['PXL_20210102_221126856.MP~2.jpg', 'PXL_20210102_221126856.MP~2.jpg.json', 'immich-go #405'],
    ['VID_20200101_101010.mp4', 'VID_20200101_101010.mp4.json', 'a video'],
    // The duplicate index moves after the extension.
    ['DSC_0101(1).JPG', 'DSC_0101.JPG(1).json', 'immich-go matcher_test'],
    ['IMG_2710(1).HEIC', 'IMG_2710.HEIC(1).json', 'immich-go matcher_test'],
    ['IMG_3479(2).JPG', 'IMG_3479.JPG(2).json', 'immich-go docs/misc/google-takeout.md'],
    ['CLIP0001(10).AVI', 'CLIP0001.AVI.supplemental-metadata(10).json', 'immich-go #673: two digits'],
    ['Scan35(1).jpg', 'Scan35.jpg.supplemental-metadata(1).json', 'immich-go #673'],
    // Clipped to 46 code units before `.json`.
    ['PXL_20230809_203449253.LONG_EXPOSURE-02.ORIGINA.jpg', 'PXL_20230809_203449253.LONG_EXPOSURE-02.ORIGIN.json', 'immich-go matcher_test'],
    ['05yqt21kruxwwlhhgrwrdyb6chhwszi9bqmzu16w0 2.jpg', '05yqt21kruxwwlhhgrwrdyb6chhwszi9bqmzu16w0 2.jp.json', 'immich-go matcher_test'],
    ['Screenshot_2024-08-31-00-53-48-647_com.snapchat.jpg', 'Screenshot_2024-08-31-00-53-48-647_com.snapcha.json', 'immich-go matcher_test'],
    ['original_1d4caa6f-16c6-4c3d-901b-9387de10e528_P.jpg', 'original_1d4caa6f-16c6-4c3d-901b-9387de10e528_.json', 'immich-go matcher_test'],
    [
      '😀😃😄😁😆😅😂🤣🥲☺️😊😇🙂🙃😉😌😍🥰😘😗😙😚😋😛.jpg',
      '😀😃😄😁😆😅😂🤣🥲☺️😊😇🙂🙃😉😌😍🥰😘😗😙😚😋.json',
      'immich-go: 46 UTF-16 units, not 46 code points',
    ],
    // Clipped, then the index.
    ['13039_327707840323_537645323_9470255_27214_n(1).jpg', '13039_327707840323_537645323_9470255_27214_n.j(1).json', 'immich-go #613'],
    ['Backyard_ceremony_wedding_photography_xxxxxxx_m(494).jpg', 'Backyard_ceremony_wedding_photography_xxxxxxx_(494).json', 'immich-go matcher_test'],
    // .supplemental-metadata (exports since 2024) and its clippings.
    ['20161105_170829.jpg', '20161105_170829.jpg.supplemental-metadata.json', 'immich-go #652'],
    ['IMG_1159.HEIC', 'IMG_1159.HEIC.supplemental-metadata.json', 'ente #12691'],
    ['MVIMG_20191230_232926.jpg', 'MVIMG_20191230_232926.jpg.supplemental-metadat.json', 'immich-go #652'],
    ['MVIMG_20200207_134534~2.jpg', 'MVIMG_20200207_134534~2.jpg.supplemental-metad.json', 'immich-go #652'],
    ['Screenshot_20200301-161151.png', 'Screenshot_20200301-161151.png.supplemental-me.json', 'immich-go #652'],
    ['Screenshot_20231027_123303_Facebook.jpg', 'Screenshot_20231027_123303_Facebook.jpg.supple.json', 'immich-go #652'],
    ['Screenshot_20231027_123303_Facebook(1).jpg', 'Screenshot_20231027_123303_Facebook.jpg.supple(1).json', 'immich-go #652'],
    // The index left where it is (ente #12691).
    ['skytree (2).jpg', 'skytree (2).jpg.supplemental-metadata.json', 'ente #12691'],
    // Named without the extension: uploaded without one (GooglePhotosTakeoutHelper), and older exports.
    ['2234089303984509579.jpg', '2234089303984509579.supplemental-metadata.json', 'immich-go #674'],
    ['IMG_0001.jpg', 'IMG_0001.json', 'GooglePhotosTakeoutHelper _noExtension'],
    // A newer export that left a long name whole (ente #12691).
    ['a_photo_named_at_length_well_beyond_the_limit.jpeg', 'a_photo_named_at_length_well_beyond_the_limit.jpeg.supplemental-metadata.json', 'ente #12691'],
  ]

  it.each(pairs)('%s ↔ %s (%s)', (media, sidecar) => {
    expect(matchOf(media, [media, sidecar])).toEqual({ sidecar, via: 'own' })
    // The pair holds whichever comes first, and among other photos and sidecars of the folder.
    const crowd = ['IMG_9999.jpg', 'IMG_9999.jpg.json', 'other.png', 'other.png.supplemental-metadata.json']
    expect(matchOf(media, [sidecar, ...crowd, media])).toEqual({ sidecar, via: 'own' })
  })

  it('clips `.supplemental-metadata` at every length, to "." alone, keeping `.json` and the index', () => {
    const kept = [
      '.supplemental-metadata',
      '.supplemental-metadat',
      '.supplemental-metada',
      '.supplemental-metad',
      '.supplemental-meta',
      '.supplemental-met',
      '.supplemental-me',
      '.supplemental-m',
      '.supplemental-',
      '.supplemental',
      '.supplementa',
      '.supplement',
      '.supplemen',
      '.suppleme',
      '.supplem',
      '.supple',
      '.suppl',
      '.supp',
      '.sup',
      '.su',
      '.s',
      '.',
    ]
    kept.forEach((suffix, i) => {
      const media = nameOf(24 + i)
      const sidecar = `${media}${suffix}.json`
      expect(sidecar.length, sidecar).toBe(SIDECAR_NAME_LIMIT + '.json'.length)
      expect(matchOf(media, [media, sidecar]), sidecar).toEqual({ sidecar, via: 'own' })
      // A clipping one character shorter, or longer and still clipped, is not this photo's.
      const wrong = [suffix.length - 1, suffix.length + 1].filter((length) => length >= 1 && length < SUPPLEMENTAL_METADATA.length)
      for (const length of wrong) {
        const other = `${media}${SUPPLEMENTAL_METADATA.slice(0, length)}.json`
        expect(matchOf(media, [media, other]), other).toEqual({ sidecar: null, via: null })
      }
    })
    const indexed = `${'x'.repeat(36)}(1).jpg`
    expect(matchOf(indexed, [indexed, `${'x'.repeat(36)}.jpg.suppl(1).json`])).toEqual({ sidecar: `${'x'.repeat(36)}.jpg.suppl(1).json`, via: 'own' })
  })

  it('clips the name at exactly 46 code units: 46 is whole, 47 loses its last', () => {
    const at46 = nameOf(46)
    expect(matchOf(at46, [at46, `${at46}.json`])).toEqual({ sidecar: `${at46}.json`, via: 'own' })
    const at47 = nameOf(47)
    const clipped = `${at47.slice(0, 46)}.json`
    expect(clipped).toBe(`${'x'.repeat(43)}.jp.json`)
    expect(matchOf(at47, [at47, clipped])).toEqual({ sidecar: clipped, via: 'own' })
    // Clipped at 45 or 47: not Takeout's, not matched.
    const at48 = nameOf(48)
    expect(matchOf(at48, [at48, `${at48.slice(0, 46)}.json`])).toEqual({ sidecar: `${at48.slice(0, 46)}.json`, via: 'own' })
    for (const [media, wrong] of [
      [at47, `${at47.slice(0, 45)}.json`],
      [at48, `${at48.slice(0, 45)}.json`],
      [at48, `${at48.slice(0, 47)}.json`],
    ] as const) {
      expect(matchOf(media, [media, wrong]), wrong).toEqual({ sidecar: null, via: null })
    }
  })

  it('takes either side of a surrogate pair the 46th unit would split, never a lone half', () => {
    const media = `${'a'.repeat(45)}😀.jpg`
    expect(matchOf(media, [media, `${'a'.repeat(45)}.json`])).toEqual({ sidecar: `${'a'.repeat(45)}.json`, via: 'own' })
    expect(matchOf(media, [media, `${'a'.repeat(45)}😀.json`])).toEqual({ sidecar: `${'a'.repeat(45)}😀.json`, via: 'own' })
    expect(sidecarNames(media).some((name) => name !== null && /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(name))).toBe(false)
  })

  it('matches an extension in another case only when the exact name is not there', () => {
    expect(matchOf('IMG_0006.jpg', ['IMG_0006.jpg', 'IMG_0006.JPG.json'])).toEqual({ sidecar: 'IMG_0006.JPG.json', via: 'own' })
    expect(matchOf('IMG_0007.JPG', ['IMG_0007.JPG', 'IMG_0007.jpg.json', 'IMG_0007.JPG.json'])).toEqual({ sidecar: 'IMG_0007.JPG.json', via: 'own' })
  })

  it('reads NFD names (macOS) as their NFC form', () => {
    const nfd = 'Café à Paris.jpg'.normalize('NFD')
    const sidecar = 'Café à Paris.jpg.json'.normalize('NFC')
    expect(matchOf(nfd, [nfd, sidecar])).toEqual({ sidecar, via: 'own' })
  })
})

describe('matchSidecars: pairs that are not', () => {
  const strangers: [string, string, string][] = [
    ['PXL_20211013_220651958.jpg', 'PXL_20211013_220651983.jpg.json', 'immich-go: another photo'],
    ['DSC_0102(1).JPG', 'DSC_0102.JPG(2).json', 'immich-go: another index'],
    ['DSC_0103.JPG', 'DSC_0103.JPG(1).json', 'immich-go: the (1) is another photo'],
    ['DSC_0104(1).JPG', 'DSC_0104.JPG.json', 'immich-go: the original’s, not the (1)’s'],
    ['Backyard_ceremony_wedding_photography_xxxxxxx_m(185).jpg', 'Backyard_ceremony_wedding_photography_xxxxxxx_(494).json', 'immich-go'],
    ['original_1d4caa6f-16c6-4c3d-901b-9387de10e528_P(1).jpg', 'original_1d4caa6f-16c6-4c3d-901b-9387de10e528_.json', 'decided: the (1) is another photo'],
    ['PXL_20220405_090123741.PORTRAIT-modifié.jpg', 'PXL_20220405_090123740.PORTRAIT.jpg.json', 'immich-go: another photo’s edit'],
    ['IMG_5000.jpg', 'IMG_500.jpg.json', 'a shorter name is not a clipping'],
    ['IMG_5001.jpg', 'IMG_5001.jpg.supplemental.json.json', 'not a clipping'],
  ]

  it.each(strangers)('%s does not take %s (%s)', (media, sidecar) => {
    const listing = matchSidecars(inYear([media, sidecar]))
    expect(listing.media).toEqual([{ path: `${YEAR}/${media}`, sidecar: null, via: null }])
    expect(listing.unmatched).toEqual([`${YEAR}/${sidecar}`])
  })

  it('looks in the photo’s own folder only', () => {
    const listing = matchSidecars(['Takeout/Google Photos/Trip/IMG_1.jpg', 'Takeout/Google Photos/Photos from 2020/IMG_1.jpg.json'])
    expect(listing.media).toEqual([{ path: 'Takeout/Google Photos/Trip/IMG_1.jpg', sidecar: null, via: null }])
    expect(listing.unmatched).toEqual(['Takeout/Google Photos/Photos from 2020/IMG_1.jpg.json'])
  })
})

describe('matchSidecars: several photos, one folder', () => {
  it('gives each of a name’s duplicates its own (immich-go TEST_DATA/Takeout3)', () => {
    const files = ['DSC_0238(1).JPG', 'DSC_0238.JPG', 'DSC_0238.JPG(1).json', 'DSC_0238.JPG.json', 'DSC_0238_1.JPG', 'DSC_0238_1.JPG.json']
    const listing = matchSidecars(inYear(files))
    expect(listing.media.map((m) => [m.path.slice(YEAR.length + 1), m.sidecar?.slice(YEAR.length + 1), m.via])).toEqual([
      ['DSC_0238(1).JPG', 'DSC_0238.JPG(1).json', 'own'],
      ['DSC_0238.JPG', 'DSC_0238.JPG.json', 'own'],
      ['DSC_0238_1.JPG', 'DSC_0238_1.JPG.json', 'own'],
    ])
    expect(listing.unmatched).toEqual([])
  })

  it('lets the more specific name win: IMG.png keeps IMG.png.json, IMG.jpg takes the older IMG.json', () => {
    const files = ['IMG.png', 'IMG.json', 'IMG.jpg', 'IMG.png.json']
    expect(matchOf('IMG.png', files)).toEqual({ sidecar: 'IMG.png.json', via: 'own' })
    expect(matchOf('IMG.jpg', files)).toEqual({ sidecar: 'IMG.json', via: 'own' })
  })

  it('gives one sidecar two photos want at the same step to the first name; the other has none', () => {
    const files = ['IMG.png', 'IMG.jpg', 'IMG.json']
    expect(matchOf('IMG.jpg', files)).toEqual({ sidecar: 'IMG.json', via: 'own' })
    expect(matchOf('IMG.png', files)).toEqual({ sidecar: null, via: null })
  })

  it('gives a clipped sidecar an original and its edited copy share to the original, and to the copy as an edit', () => {
    const long = 'Wedding_ceremony_in_the_garden_of_the_old_house'
    expect(long.length).toBeGreaterThan(46)
    const files = [`${long}-edited.jpg`, `${long}.jpg`, `${long.slice(0, 46)}.json`]
    expect(matchOf(`${long}.jpg`, files)).toEqual({ sidecar: `${long.slice(0, 46)}.json`, via: 'own' })
    expect(matchOf(`${long}-edited.jpg`, files)).toEqual({ sidecar: `${long.slice(0, 46)}.json`, via: 'edited' })
  })

  it('names a photo without a sidecar and a sidecar without a photo', () => {
    const listing = matchSidecars(inYear(['IMG_0008.jpg', 'IMG_0404.jpg.json', 'IMG_0009.jpg', 'IMG_0009.jpg.json']))
    expect(listing.media).toEqual([
      { path: `${YEAR}/IMG_0008.jpg`, sidecar: null, via: null },
      { path: `${YEAR}/IMG_0009.jpg`, sidecar: `${YEAR}/IMG_0009.jpg.json`, via: 'own' },
    ])
    expect(listing.unmatched).toEqual([`${YEAR}/IMG_0404.jpg.json`])
  })
})

describe('matchSidecars: edited copies', () => {
  const edits: [string, string, string, string][] = [
    ['PXL_20220405_090123740.PORTRAIT-modifié.jpg', 'PXL_20220405_090123740.PORTRAIT.jpg', 'PXL_20220405_090123740.PORTRAIT.jpg.json', 'immich-go: French'],
    ['IMAG0061-edited.JPG', 'IMAG0061.JPG', 'IMAG0061.JPG.supplemental-metadata.json', 'immich-go #698'],
    ['IMG-20230325-WA0122~2-edited.jpg', 'IMG-20230325-WA0122~2.jpg', 'IMG-20230325-WA0122~2.jpg.supplemental-metadat.json', 'immich-go #674'],
    ['2234089303984509579-edited.jpg', '2234089303984509579.jpg', '2234089303984509579.supplemental-metadata.json', 'immich-go #674'],
    [
      'Screenshot_20231027_123303_Facebook-edited.jpg',
      'Screenshot_20231027_123303_Facebook.jpg',
      'Screenshot_20231027_123303_Facebook.jpg.supple.json',
      'immich-go #652',
    ],
    ['IMG_1000-bearbeitet.jpg', 'IMG_1000.jpg', 'IMG_1000.jpg.json', 'immich-go: German'],
    ['IMG_1001-modificato.jpg', 'IMG_1001.jpg', 'IMG_1001.jpg.json', 'immich-go: Italian'],
    ['IMG_1002-ha editado.jpg', 'IMG_1002.jpg', 'IMG_1002.jpg.json', 'GooglePhotosTakeoutHelper: Spanish'],
    ['IMG_1003-EDITED.JPG', 'IMG_1003.JPG', 'IMG_1003.JPG.json', 'the suffix in any case'],
    ['IMG_1004-edited(1).jpg', 'IMG_1004(1).jpg', 'IMG_1004.jpg(1).json', 'an edit of the (1)'],
    ['IMG_1005(1)-edited.jpg', 'IMG_1005(1).jpg', 'IMG_1005.jpg(1).json', 'an edit of the (1)'],
  ]

  it.each(edits)('%s shares %s’s sidecar %s (%s)', (edited, original, sidecar) => {
    for (const files of [
      [edited, original, sidecar],
      [sidecar, edited],
    ]) {
      expect(matchOf(edited, files), files.join(', ')).toEqual({ sidecar, via: 'edited' })
    }
    expect(matchOf(original, [edited, original, sidecar])).toEqual({ sidecar, via: 'own' })
    expect(matchSidecars(inYear([edited, original, sidecar])).unmatched).toEqual([])
  })

  it('reads the French suffix written in NFD', () => {
    const edited = 'IMG_2000-modifié.jpg'.normalize('NFD')
    expect(matchOf(edited, [edited, 'IMG_2000.jpg.json'])).toEqual({ sidecar: 'IMG_2000.jpg.json', via: 'edited' })
  })

  it('keeps an edited copy’s own sidecar when it has one', () => {
    const files = ['IMG_2001-edited.jpg', 'IMG_2001.jpg', 'IMG_2001.jpg.json', 'IMG_2001-edited.jpg.json']
    expect(matchOf('IMG_2001-edited.jpg', files)).toEqual({ sidecar: 'IMG_2001-edited.jpg.json', via: 'own' })
    expect(matchOf('IMG_2001.jpg', files)).toEqual({ sidecar: 'IMG_2001.jpg.json', via: 'own' })
  })

  it('reads a name as an edit only for a known suffix, with something before it', () => {
    expect(originalOfEdited('IMG_1-edited.jpg')).toBe('IMG_1.jpg')
    expect(originalOfEdited('PXL_1.PORTRAIT-modifié.jpg')).toBe('PXL_1.PORTRAIT.jpg')
    expect(originalOfEdited('IMG_1-edited(2).HEIC')).toBe('IMG_1(2).HEIC')
    expect(originalOfEdited('-edited.jpg')).toBeNull()
    expect(originalOfEdited('IMG_1-edit.jpg')).toBeNull()
    expect(originalOfEdited('IMG_1.jpg')).toBeNull()
    expect(originalOfEdited('party-mix.jpg')).toBeNull()
    expect(matchOf('party-mix.jpg', ['party-mix.jpg', 'party.jpg', 'party.jpg.json'])).toEqual({ sidecar: null, via: null })
  })
})

describe('matchSidecars: Live Photos', () => {
  it('gives the video of a Live Photo its photo’s sidecar', () => {
    for (const [photo, video, sidecar] of [
      ['IMG_1234.HEIC', 'IMG_1234.MOV', 'IMG_1234.HEIC.json'],
      ['IMG_1235.HEIC', 'IMG_1235.MP4', 'IMG_1235.HEIC.supplemental-metadata.json'],
      ['IMG_1236.JPG', 'IMG_1236.mov', 'IMG_1236.JPG.supplemental-metadata.json'],
      ['IMG_1237.jpg', 'img_1237.MOV', 'IMG_1237.jpg.json'],
    ] as const) {
      const files = [video, photo, sidecar]
      expect(matchOf(photo, files), photo).toEqual({ sidecar, via: 'own' })
      expect(matchOf(video, files), video).toEqual({ sidecar, via: 'live' })
    }
  })

  it('gives an old-style sidecar without extension to the photo, and the video shares it', () => {
    const files = ['IMG_1238.MOV', 'IMG_1238.HEIC', 'IMG_1238.json']
    expect(matchOf('IMG_1238.HEIC', files)).toEqual({ sidecar: 'IMG_1238.json', via: 'own' })
    expect(matchOf('IMG_1238.MOV', files)).toEqual({ sidecar: 'IMG_1238.json', via: 'live' })
    // The photo wins even where the video's name comes first ("M" before "j").
    const upper = ['IMG_1243.MOV', 'IMG_1243.jpg', 'IMG_1243.json']
    expect(matchOf('IMG_1243.jpg', upper)).toEqual({ sidecar: 'IMG_1243.json', via: 'own' })
    expect(matchOf('IMG_1243.MOV', upper)).toEqual({ sidecar: 'IMG_1243.json', via: 'live' })
  })

  it('keeps a video’s own sidecar, and gives none to a video without a photo of its name', () => {
    expect(matchOf('IMG_1239.MOV', ['IMG_1239.MOV', 'IMG_1239.HEIC', 'IMG_1239.HEIC.json', 'IMG_1239.MOV.json'])).toEqual({
      sidecar: 'IMG_1239.MOV.json',
      via: 'own',
    })
    expect(matchOf('IMG_1240.MOV', ['IMG_1240.MOV', 'IMG_1241.HEIC', 'IMG_1241.HEIC.json'])).toEqual({ sidecar: null, via: null })
    // A photo does not take a video's sidecar as a Live Photo.
    expect(matchOf('IMG_1242.HEIC', ['IMG_1242.HEIC', 'IMG_1242.MOV', 'IMG_1242.MOV.json'])).toEqual({ sidecar: null, via: null })
  })
})

describe('matchSidecars: what is not a photo', () => {
  it('lists album metadata, skips with a reason, and reads a path repeated in two archives once', () => {
    const listing = matchSidecars([
      'Takeout/archive_browser.html',
      'Takeout/Google Photos/',
      'Takeout/Google Photos/shared_album_comments.json',
      'Takeout/Google Photos/user-generated-memory-titles.json',
      'Takeout/Google Photos/print-subscriptions.json',
      'Takeout/Google Photos/Trip/metadata.json',
      'Takeout/Google Photos/Trip/IMG_1.jpg',
      'Takeout/Google Photos/Trip/IMG_1.jpg.json',
      'Takeout/Google Photos/Voyage/métadonnées.json'.normalize('NFD'),
      'Takeout/Google Photos/Reise/Metadaten.json',
      'Takeout/Google Photos/Trip/notes.txt',
      'Takeout/Google Photos/Trip/.DS_Store',
      '__MACOSX/Takeout/Google Photos/Trip/._IMG_1.jpg',
      'Takeout/Google Photos/Trip/IMG_1.jpg',
      'Takeout/Google Photos/Trip/IMG_1.jpg.json',
    ])
    expect(listing.media).toEqual([{ path: 'Takeout/Google Photos/Trip/IMG_1.jpg', sidecar: 'Takeout/Google Photos/Trip/IMG_1.jpg.json', via: 'own' }])
    expect(listing.albumMetadata).toEqual([
      { folder: 'Takeout/Google Photos/Trip', path: 'Takeout/Google Photos/Trip/metadata.json' },
      { folder: 'Takeout/Google Photos/Voyage', path: 'Takeout/Google Photos/Voyage/métadonnées.json'.normalize('NFD') },
      { folder: 'Takeout/Google Photos/Reise', path: 'Takeout/Google Photos/Reise/Metadaten.json' },
    ])
    expect(listing.unmatched).toEqual([])
    expect(listing.skipped).toEqual([
      { path: 'Takeout/archive_browser.html', reason: SKIPPED_NOT_MEDIA },
      { path: 'Takeout/Google Photos/Trip/notes.txt', reason: SKIPPED_NOT_MEDIA },
      { path: 'Takeout/Google Photos/Trip/.DS_Store', reason: SKIPPED_HIDDEN },
      { path: '__MACOSX/Takeout/Google Photos/Trip/._IMG_1.jpg', reason: SKIPPED_HIDDEN },
      { path: 'Takeout/Google Photos/Trip/IMG_1.jpg', reason: SKIPPED_REPEATED },
      { path: 'Takeout/Google Photos/Trip/IMG_1.jpg.json', reason: SKIPPED_REPEATED },
      { path: 'Takeout/Google Photos/shared_album_comments.json', reason: SKIPPED_EXPORT_FILE },
      { path: 'Takeout/Google Photos/user-generated-memory-titles.json', reason: SKIPPED_EXPORT_FILE },
      { path: 'Takeout/Google Photos/print-subscriptions.json', reason: SKIPPED_EXPORT_FILE },
    ])
  })

  it('knows the album metadata names of immich-go’s table, and lists one per folder', () => {
    expect(ALBUM_METADATA_NAMES).toContain('metadata.json')
    for (const name of ALBUM_METADATA_NAMES) {
      expect(matchSidecars([`Album/${name}`]).albumMetadata, name).toEqual([{ folder: 'Album', path: `Album/${name}` }])
    }
    const two = matchSidecars(['Album/metadata.json', 'Album/métadonnées.json'])
    expect(two.albumMetadata).toEqual([{ folder: 'Album', path: 'Album/metadata.json' }])
    expect(two.unmatched).toEqual(['Album/métadonnées.json'])
  })
})

describe('sidecarNames', () => {
  it('gives a fixed number of slots, the exact name first', () => {
    for (const name of ['a.jpg', 'IMG(1).jpg', 'noextension', nameOf(60), `${'a'.repeat(45)}😀.jpg`]) {
      const names = sidecarNames(name)
      expect(names.length, name).toBe(24)
      expect(names[0], name).toBe(name.includes('(1)') ? 'IMG.jpg(1).json' : `${name}.json`)
    }
    expect(sidecarNames('noextension').slice(16)).toEqual(Array(8).fill(null))
  })
})

const SIDECAR = {
  title: 'IMG_20190713_153456.jpg',
  description: 'Picnic by the lake',
  imageViews: '12',
  creationTime: { timestamp: '1563100000', formatted: 'Jul 14, 2019, 10:26:40 AM UTC' },
  photoTakenTime: { timestamp: '1563024896', formatted: 'Jul 13, 2019, 1:34:56 PM UTC' },
  geoData: { latitude: 48.8583701, longitude: 2.2944813, altitude: 35.1, latitudeSpan: 0, longitudeSpan: 0 },
  geoDataExif: { latitude: 48.85, longitude: 2.29, altitude: 35.1, latitudeSpan: 0, longitudeSpan: 0 },
  people: [{ name: 'Alice' }, { name: '' }, { name: 'Bob' }, 'Carol', { nom: 'Dan' }],
  url: 'https://photos.google.com/photo/AF1Qip',
  googlePhotosOrigin: { mobileUpload: { deviceType: 'ANDROID_PHONE' } },
  favorited: true,
}
const sidecar = (fields: Record<string, unknown>, without: readonly string[] = []): string =>
  JSON.stringify(Object.fromEntries(Object.entries({ ...SIDECAR, ...fields }).filter(([key]) => !without.includes(key))))

/** The problem a call refuses with: it must throw a TakeoutJsonError, nothing else. */
function problemOf(call: () => unknown): TakeoutJsonProblem | 'none' {
  try {
    call()
    return 'none'
  } catch (error) {
    if (!(error instanceof TakeoutJsonError)) throw error
    return error.problem
  }
}

describe('parseSidecar', () => {
  it('reads every field', () => {
    expect(parseSidecar(sidecar({}))).toEqual({
      title: 'IMG_20190713_153456.jpg',
      description: 'Picnic by the lake',
      takenMs: 1_563_024_896_000,
      geo: { latitude: 48.8583701, longitude: 2.2944813 },
      favorited: true,
      trashed: false,
      archived: false,
      fromPartner: false,
      people: ['Alice', 'Bob'],
      url: 'https://photos.google.com/photo/AF1Qip',
    })
  })

  it('reads the date taken from photoTakenTime only, in ms; 0, absent or not a number is none', () => {
    const taken = (photoTakenTime: unknown) => parseSidecar(sidecar({ photoTakenTime })).takenMs
    expect(taken({ timestamp: '1563024896' })).toBe(1_563_024_896_000)
    expect(taken({ timestamp: 1_563_024_896 })).toBe(1_563_024_896_000)
    expect(taken({ timestamp: '-315619200' })).toBe(-315_619_200_000)
    for (const none of [{ timestamp: '0' }, { timestamp: 0 }, { timestamp: '' }, { timestamp: 'soon' }, { timestamp: '1.5' }, {}, '1563024896', null]) {
      expect(taken(none), JSON.stringify(none)).toBeNull()
    }
    expect(taken({ timestamp: '99999999999999' })).toBeNull()
    // creationTime is the upload, never the date taken.
    expect(parseSidecar(sidecar({}, ['photoTakenTime'])).takenMs).toBeNull()
  })

  it('reads the position from geoData, else geoDataExif; 0,0 and impossible positions are none', () => {
    const geo = (fields: Record<string, unknown>) => parseSidecar(sidecar(fields)).geo
    const exif = { latitude: 48.85, longitude: 2.29 }
    expect(geo({ geoData: { latitude: 0, longitude: 0, altitude: 0 } })).toEqual(exif)
    expect(geo({ geoData: undefined })).toEqual(exif)
    expect(geo({ geoData: { latitude: -33.8568, longitude: 151.2153 }, geoDataExif: undefined })).toEqual({ latitude: -33.8568, longitude: 151.2153 })
    expect(geo({ geoData: { latitude: 0, longitude: 0 }, geoDataExif: { latitude: 0, longitude: 0 } })).toBeNull()
    expect(geo({ geoData: { latitude: 91, longitude: 0 }, geoDataExif: { latitude: 0, longitude: 181 } })).toBeNull()
    expect(geo({ geoData: { latitude: '48.8', longitude: '2.3' }, geoDataExif: null })).toBeNull()
    // 0 on one axis is a real place (the equator, Greenwich).
    expect(geo({ geoData: { latitude: 0, longitude: 32.5 } })).toEqual({ latitude: 0, longitude: 32.5 })
  })

  it('reads the flags as true only when true', () => {
    const flags = (fields: Record<string, unknown>) => {
      const read = parseSidecar(sidecar(fields))
      return [read.favorited, read.trashed, read.archived, read.fromPartner]
    }
    expect(flags({ favorited: undefined })).toEqual([false, false, false, false])
    expect(flags({ favorited: 'true', trashed: 1, archived: 'yes' })).toEqual([false, false, false, false])
    expect(flags({ favorited: true, trashed: true, archived: true, googlePhotosOrigin: { fromPartnerSharing: {} } })).toEqual([true, true, true, true])
  })

  it('reads empty text as none, and text of another type as none', () => {
    const read = parseSidecar(sidecar({ title: '', description: '   ', url: 42, people: 'Alice' }))
    expect([read.title, read.description, read.url, read.people]).toEqual([null, null, null, []])
  })

  it('accepts a byte-order mark', () => {
    expect(parseSidecar(`\uFEFF${sidecar({})}`).takenMs).toBe(1_563_024_896_000)
  })

  it('refuses what is not a photo’s sidecar, malformed, too large or too deep, with a TakeoutJsonError only', () => {
    const deep = `{"photoTakenTime": {"timestamp": "1"}, "x": ${'['.repeat(TAKEOUT_JSON_MAX_DEPTH)}${']'.repeat(TAKEOUT_JSON_MAX_DEPTH)}}`
    const shallow = `{"photoTakenTime": {"timestamp": "1"}, "x": ${'['.repeat(TAKEOUT_JSON_MAX_DEPTH - 2)}${']'.repeat(TAKEOUT_JSON_MAX_DEPTH - 2)}}`
    const cases: [string, TakeoutJsonProblem | 'none'][] = [
      ['', 'malformed'],
      ['not json', 'malformed'],
      ['{"title": "a",', 'malformed'],
      ['[]', 'malformed'],
      ['null', 'malformed'],
      ['"text"', 'malformed'],
      ['42', 'malformed'],
      ['{}', 'not-a-sidecar'],
      ['{"title": "Trip", "description": "", "access": "protected", "date": {"timestamp": "1563024896"}}', 'not-a-sidecar'],
      ['{"photoTakenTime": "1563024896"}', 'not-a-sidecar'],
      ['{"creationTime": {"timestamp": "1563024896"}}', 'none'],
      [deep, 'too-deep'],
      [shallow, 'none'],
      ['['.repeat(100_000), 'too-deep'],
      [`{"photoTakenTime": {"timestamp": "1"}, "title": "${'['.repeat(100)}\\"{{{"}`, 'none'],
      [`{"photoTakenTime": {"timestamp": "1"}, "description": "${'x'.repeat(TAKEOUT_JSON_MAX_LENGTH)}"}`, 'too-large'],
      [sidecar({ description: 'x'.repeat(TAKEOUT_JSON_MAX_LENGTH - 1000) }), 'none'],
    ]
    for (const [json, problem] of cases)
      expect(
        problemOf(() => parseSidecar(json)),
        json.slice(0, 80),
      ).toBe(problem)
    expect(problemOf(() => parseSidecar(42 as unknown as string))).toBe('malformed')
    expect(problemOf(() => parseSidecar(undefined as unknown as string))).toBe('malformed')
    const error = (() => {
      try {
        parseSidecar('not json')
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(TakeoutJsonError)
    expect((error as Error).name).toBe('TakeoutJsonError')
    expect((error as Error).message).toMatch(/^sidecar: not JSON/)
  })
})

describe('parseAlbumMetadata', () => {
  it('reads the title and description, in the albumData wrapper of older exports too', () => {
    const album = { title: 'Trip to Rome', description: 'Spring 2019', access: 'protected', date: { timestamp: '1556000000', formatted: '…' } }
    expect(parseAlbumMetadata(JSON.stringify(album))).toEqual({ title: 'Trip to Rome', description: 'Spring 2019' })
    expect(parseAlbumMetadata(JSON.stringify({ albumData: album }))).toEqual({ title: 'Trip to Rome', description: 'Spring 2019' })
    expect(parseAlbumMetadata(JSON.stringify({ title: '', description: '' }))).toEqual({ title: null, description: null })
  })

  it('refuses a photo’s sidecar, a file without a title, and malformed input', () => {
    expect(problemOf(() => parseAlbumMetadata(sidecar({})))).toBe('not-album-metadata')
    expect(problemOf(() => parseAlbumMetadata('{"description": "x"}'))).toBe('not-album-metadata')
    expect(problemOf(() => parseAlbumMetadata('{"title": 42}'))).toBe('not-album-metadata')
    expect(problemOf(() => parseAlbumMetadata('{'))).toBe('malformed')
    expect(problemOf(() => parseAlbumMetadata(`{"title": "a", "x": ${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`))).toBe('too-deep')
  })
})

describe('albumOf and isYearFolder', () => {
  const metadata = (title: string) => JSON.stringify({ title, description: '', access: 'protected' })

  it('never makes a year folder an album, in any language found', () => {
    for (const folder of [
      'Takeout/Google Photos/Photos from 2019',
      'Takeout/Google Fotos/Fotos von 2024',
      'Takeout/Google Photos/Photos de 2021',
      'Takeout/Google Fotos/Fotos de 2020',
      'Takeout/Google Fotos/Fotos del 2018',
      'Takeout/Google Foto/Foto da 2002',
      "Takeout/Google Foto's/Foto's van 2015",
      'Takeout/Google Foto_s/Foto_s van 2015',
      'Photos from 1999/',
    ]) {
      expect(isYearFolder(folder), folder).toBe(true)
      expect(albumOf(folder), folder).toBeNull()
      expect(albumOf(folder, metadata('Photos from 2019')), folder).toBeNull()
    }
    for (const folder of [
      'Takeout/Google Photos/Photos from 2019 trip',
      'Takeout/Google Photos/Photos from 19',
      'Takeout/Google Photos/photos from 2019',
      'Photos from 2019/Rome',
    ]) {
      expect(isYearFolder(folder), folder).toBe(false)
    }
    expect(albumOf('Takeout/Google Photos/Photos from 2019 trip')).toBe('Photos from 2019 trip')
  })

  it('takes the title from the album’s metadata, else the folder’s name', () => {
    expect(albumOf('Takeout/Google Photos/_Esquadern_ 2020', metadata('"Esquadern" 2020'))).toBe('"Esquadern" 2020')
    expect(albumOf('Takeout/Google Photos/Trip', JSON.stringify({ albumData: { title: 'Trip to Rome' } }))).toBe('Trip to Rome')
    expect(albumOf('Takeout/Google Photos/Trip')).toBe('Trip')
    expect(albumOf('Takeout/Google Photos/Trip/', null)).toBe('Trip')
    expect(albumOf('Takeout/Google Photos/Untitled(2)', metadata(''))).toBe('Untitled(2)')
    expect(albumOf('Takeout/Google Photos/Sans titre(9)', metadata(''))).toBe('Sans titre(9)')
    // Unreadable metadata: the folder is still an album, named as its folder.
    for (const broken of ['{', '[]', sidecar({}), `{"title": "${'x'.repeat(TAKEOUT_JSON_MAX_LENGTH)}"}`]) {
      expect(albumOf('Takeout/Google Photos/Trip', broken), broken.slice(0, 40)).toBe('Trip')
    }
  })

  it('does not make the export’s own folders, the trash, the archive or Failed Videos albums, unless their metadata names one', () => {
    for (const folder of [
      '',
      'Takeout',
      'Takeout/Google Photos',
      'Takeout/Google Fotos',
      'Takeout/Google Foto',
      'Takeout/Fotky Google',
      'Takeout/Google Фото',
      'Takeout/Google Photos/Trash',
      'Takeout/Google Photos/Bin',
      'Takeout/Google Photos/Corbeille',
      'Takeout/Google Fotos/Papierkorb',
      'Takeout/Google Photos/Archive',
      'Takeout/Google Photos/Failed Videos',
    ]) {
      expect(albumOf(folder), folder).toBeNull()
    }
    expect(albumOf('Takeout/Google Photos/Archive', metadata('Archive'))).toBe('Archive')
  })
})

describe('groupCopies', () => {
  it('makes a photo of its year folder’s copy and its albums’ copies: same name, same size', () => {
    const files = [
      { path: 'Takeout/Google Photos/Photos from 2022/130917ad28385b5a-photo.jpg', size: 167_551 },
      { path: 'Takeout/Google Photos/Amsterdam 2022/130917ad28385b5a-photo.jpg', size: 167_551 },
      { path: 'Takeout/Google Photos/1 anno fa/130917ad28385b5a-photo.jpg', size: 167_551 },
      { path: 'Takeout/Google Photos/Photos from 2022/IMG_1.jpg', size: 10 },
    ]
    expect(groupCopies(files)).toEqual([
      [
        'Takeout/Google Photos/Photos from 2022/130917ad28385b5a-photo.jpg',
        'Takeout/Google Photos/Amsterdam 2022/130917ad28385b5a-photo.jpg',
        'Takeout/Google Photos/1 anno fa/130917ad28385b5a-photo.jpg',
      ],
      ['Takeout/Google Photos/Photos from 2022/IMG_1.jpg'],
    ])
  })

  it('tells photos of one name and another size apart', () => {
    expect(
      groupCopies([
        { path: 'Photos from 2022/IMG_1.jpg', size: 10 },
        { path: 'Trip/IMG_1.jpg', size: 11 },
      ]),
    ).toEqual([['Photos from 2022/IMG_1.jpg'], ['Trip/IMG_1.jpg']])
  })

  it('sees a copy numbered differently in another folder', () => {
    expect(
      groupCopies([
        { path: 'Photos from 2022/IMG_1.jpg', size: 10 },
        { path: 'Photos from 2022/IMG_1(1).jpg', size: 20 },
        { path: 'Trip/IMG_1.jpg', size: 20 },
      ]),
    ).toEqual([['Photos from 2022/IMG_1.jpg'], ['Photos from 2022/IMG_1(1).jpg', 'Trip/IMG_1.jpg']])
  })

  it('keeps apart what it cannot tell: two files of one name and size in a folder', () => {
    expect(
      groupCopies([
        { path: 'Photos from 2022/IMG_1.jpg', size: 20 },
        { path: 'Photos from 2022/IMG_1(1).jpg', size: 20 },
        { path: 'Trip/IMG_1.jpg', size: 20 },
      ]),
    ).toEqual([['Photos from 2022/IMG_1.jpg'], ['Photos from 2022/IMG_1(1).jpg'], ['Trip/IMG_1.jpg']])
  })

  it('matches NFD and NFC names, and keeps other extensions apart', () => {
    expect(
      groupCopies([
        { path: 'Photos from 2022/Café.jpg'.normalize('NFD'), size: 5 },
        { path: 'Trip/Café.jpg'.normalize('NFC'), size: 5 },
        { path: 'Trip/Café.png', size: 5 },
      ]),
    ).toEqual([['Photos from 2022/Café.jpg'.normalize('NFD'), 'Trip/Café.jpg'.normalize('NFC')], ['Trip/Café.png']])
  })
})
