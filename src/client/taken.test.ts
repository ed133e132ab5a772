// The date taken (taken.ts): every source, in the documented order, what a date in a file name
// looks like, the dates that are not ones, the EXIF offsets and the GPS clock, stored metadata
// of every version, and the wall clock each is shown at (its offset, floating, the viewer's zone).
import { describe, expect, it } from 'vitest'
import {
  capturedFromTags,
  dateTaken,
  exifOffset,
  fileNameDate,
  gpsTime,
  localZone,
  metadataTaken,
  takenIso,
  takenMonthPath,
  viewerZoned,
  zoneOffset,
  type TakenFacts,
  type TakenSource,
} from './taken.ts'

const NOW = Date.UTC(2026, 5, 1)
const UPLOADED = Date.UTC(2026, 0, 2, 3, 4, 5)
const MODIFIED = Date.UTC(2020, 1, 3, 4, 5, 6)

/** Every source the photo could have, each a different time. */
const EVERY_TAG = {
  DateTimeOriginal: '2019:07:04 12:34:56',
  OffsetTimeOriginal: '+02:00',
  SubSecTimeOriginal: '25',
  CreateDate: '2018:01:01 00:00:00',
  OffsetTimeDigitized: '-05:00',
  ModifyDate: '2017:01:01 00:00:00',
  OffsetTime: '+01:00',
  SubSecTime: '5',
  GPSDateStamp: '2016:01:01',
  GPSTimeStamp: [10, 20, 30.75],
}
const facts = (tags: Record<string, unknown>, more: Partial<TakenFacts> = {}): TakenFacts => ({
  tags,
  name: 'IMG_20150505_050505.jpg',
  modified: MODIFIED,
  uploaded: UPLOADED,
  ...more,
})
const without = (...names: string[]) => Object.fromEntries(Object.entries(EVERY_TAG).filter(([name]) => !names.some((n) => name.includes(n))))

/** The viewer's zone in these tests: two hours east, unlike every photo's. */
const VIEWER = 120
const OPTIONS = { now: NOW, zone: () => VIEWER }
const HOUR = 3_600_000

describe('dateTaken', () => {
  it('tries the sources in the documented order, each with its own offset, the wall clock where it was taken as local', () => {
    const order = [
      [EVERY_TAG, { at: Date.UTC(2019, 6, 4, 10, 34, 56, 250), source: 'exif-original', offset: 120, local: Date.UTC(2019, 6, 4, 12, 34, 56, 250) }],
      [without('Original'), { at: Date.UTC(2018, 0, 1, 5), source: 'exif-digitized', offset: -300, local: Date.UTC(2018, 0, 1) }],
      [
        without('Original', 'Digitized', 'CreateDate'),
        { at: Date.UTC(2016, 11, 31, 23, 0, 0, 500), source: 'exif-modified', offset: 60, local: Date.UTC(2017, 0, 1, 0, 0, 0, 500) },
      ],
      // The GPS clock is UTC, shown at the camera's zone when an EXIF offset tag names it (OffsetTime is left here).
      [
        without('Original', 'Digitized', 'CreateDate', 'ModifyDate'),
        { at: Date.UTC(2016, 0, 1, 10, 20, 30, 750), source: 'gps', offset: 60, local: Date.UTC(2016, 0, 1, 11, 20, 30, 750) },
      ],
      // A file name's time is a wall clock without a zone: floating.
      [{}, { at: Date.UTC(2015, 4, 5, 5, 5, 5), source: 'file-name', offset: null, local: Date.UTC(2015, 4, 5, 5, 5, 5) }],
    ] as const
    for (const [tags, taken] of order) expect(dateTaken(facts(tags), OPTIONS), JSON.stringify(tags)).toEqual(taken)
    // A modification or upload time is a moment with no place: shown in the viewer's zone.
    const viewed = (at: number) => ({ at, offset: VIEWER, local: at + VIEWER * 60_000 })
    expect(dateTaken(facts({}, { name: 'holiday.jpg' }), OPTIONS)).toEqual({ ...viewed(MODIFIED), source: 'file-modified' })
    expect(dateTaken(facts({}, { name: 'holiday.jpg', modified: null }), OPTIONS)).toEqual({ ...viewed(UPLOADED), source: 'uploaded' })
    expect(dateTaken(facts({}, { tags: null, name: 'holiday.jpg', modified: null }), OPTIONS)).toEqual({ ...viewed(UPLOADED), source: 'uploaded' })
    expect(viewerZoned('file-modified') && viewerZoned('uploaded')).toBe(true)
    expect(['exif-original', 'exif', 'gps', 'file-name'].some((source) => viewerZoned(source as TakenSource))).toBe(false)
  })

  it('passes over a tag that is not a real date to the next source', () => {
    const broken = { ...EVERY_TAG, DateTimeOriginal: '0000:00:00 00:00:00', CreateDate: '2021:02:30 12:00:00', ModifyDate: '    :  :     :  :  ' }
    expect(dateTaken(facts(broken), OPTIONS).source).toBe('gps')
    const noGps = { GPSDateStamp: '2016:13:01', GPSTimeStamp: [10, 20, 30] }
    expect(dateTaken(facts(noGps), OPTIONS).source).toBe('file-name')
  })

  it('keeps a photo taken late on the last day of a month in that month at its offset, though it is the next month in UTC', () => {
    const lateJuly = dateTaken(facts({ DateTimeOriginal: '2019:07:31 23:30:00', OffsetTimeOriginal: '-07:00' }), OPTIONS)
    expect(lateJuly).toEqual({ at: Date.UTC(2019, 7, 1, 6, 30), source: 'exif-original', offset: -420, local: Date.UTC(2019, 6, 31, 23, 30) })
    expect(takenMonthPath(lateJuly.local)).toBe('2019/07')
    expect(takenIso(lateJuly)).toBe('2019-07-31T23:30:00-07:00')
    // East of UTC, the first of the month is still the last of the one before in UTC.
    const earlyAugust = dateTaken(facts({ DateTimeOriginal: '2019:08:01 00:30:00', OffsetTimeOriginal: '+09:00' }), OPTIONS)
    expect([new Date(earlyAugust.at).toISOString(), takenMonthPath(earlyAugust.local), takenIso(earlyAugust)]).toEqual([
      '2019-07-31T15:30:00.000Z',
      '2019/08',
      '2019-08-01T00:30:00+09:00',
    ])
  })

  it("shows a floating time (no offset tag, or one that is not an offset) as its wall clock, whatever the viewer's zone", () => {
    for (const offset of [undefined, '+25:00', '+05:60', '05:00', 'Z']) {
      const floating = dateTaken(facts({ DateTimeOriginal: '2019:07:04 12:34:56', OffsetTimeOriginal: offset }), OPTIONS)
      expect(floating, String(offset)).toEqual({
        at: Date.UTC(2019, 6, 4, 12, 34, 56),
        source: 'exif-original',
        offset: null,
        local: Date.UTC(2019, 6, 4, 12, 34, 56),
      })
      expect(takenIso(floating)).toBe('2019-07-04T12:34:56')
    }
    // The GPS clock without any EXIF offset tag: UTC, offset 0.
    expect(dateTaken(facts({ GPSDateStamp: '2016:01:01', GPSTimeStamp: [10, 20, 30] }), OPTIONS)).toMatchObject({ source: 'gps', offset: 0 })
  })

  it('reads what the metadata recorded: captured with its source and offset (v 3), or as `exif`, floating (v 1 and 2)', () => {
    const stored = { name: 'IMG_20150505_050505.jpg', modified: MODIFIED, uploaded: UPLOADED }
    expect(dateTaken({ ...stored, captured: 1_000, capturedSource: 'gps', capturedOffset: 0 }, OPTIONS)).toEqual({
      at: 1_000,
      source: 'gps',
      offset: 0,
      local: 1_000,
    })
    expect(dateTaken({ ...stored, captured: HOUR, capturedSource: 'exif-original', capturedOffset: -90 }, OPTIONS)).toEqual({
      at: HOUR,
      source: 'exif-original',
      offset: -90,
      local: -HOUR / 2,
    })
    expect(dateTaken({ ...stored, captured: 1_000, capturedSource: 'exif-digitized', capturedOffset: null }, OPTIONS)).toMatchObject({
      offset: null,
      local: 1_000,
    })
    expect(dateTaken({ ...stored, captured: 1_000 }, OPTIONS)).toEqual({ at: 1_000, source: 'exif', offset: null, local: 1_000 })
    expect(dateTaken({ ...stored, captured: null, capturedSource: null, capturedOffset: null }, OPTIONS).source).toBe('file-name')
    expect(dateTaken({ ...stored, captured: null }, OPTIONS).source).toBe('file-name')
  })
})

describe('metadataTaken', () => {
  it("takes the upload time from the manifest timestamp, shown in the viewer's zone", () => {
    const metadata = { name: 'a.jpg', modified: null, captured: null }
    expect(metadataTaken(metadata, '2026-01-02T03:04:05.000Z', OPTIONS)).toEqual({
      at: UPLOADED,
      source: 'uploaded',
      offset: VIEWER,
      local: UPLOADED + 2 * HOUR,
    })
    expect(metadataTaken({ ...metadata, capturedSource: null }, UPLOADED, OPTIONS)).toMatchObject({ at: UPLOADED, source: 'uploaded' })
    expect(metadataTaken({ ...metadata, captured: 7, capturedSource: 'exif-modified', capturedOffset: 60 }, UPLOADED, OPTIONS)).toEqual({
      at: 7,
      source: 'exif-modified',
      offset: 60,
      local: 7 + HOUR,
    })
  })

  it("takes this machine's zone unless given one", () => {
    const modified = Date.UTC(2024, 4, 1, 12)
    expect(metadataTaken({ name: 'a.jpg', modified, captured: null }, UPLOADED).offset).toBe(-new Date(modified).getTimezoneOffset() || 0)
    expect(localZone(modified)).toBe(-new Date(modified).getTimezoneOffset() || 0)
  })
})

describe('capturedFromTags and the EXIF and GPS times', () => {
  it('reads an EXIF time at its offset, as UTC without one, with its fraction of a second', () => {
    expect(capturedFromTags({ DateTimeOriginal: '2021:07:04 12:34:56', OffsetTimeOriginal: '-05:30' })).toEqual({
      at: Date.UTC(2021, 6, 4, 18, 4, 56),
      source: 'exif-original',
      offset: -330,
    })
    expect(capturedFromTags({ DateTimeOriginal: '2021:07:04 12:34:56', SubSecTimeOriginal: 7 })).toEqual({
      at: Date.UTC(2021, 6, 4, 12, 34, 56, 700),
      source: 'exif-original',
      offset: null,
    })
    // Each date takes its own offset tag, not another's.
    expect(capturedFromTags({ CreateDate: '2021:07:04 12:34:56', OffsetTimeOriginal: '+09:00' })).toEqual({
      at: Date.UTC(2021, 6, 4, 12, 34, 56),
      source: 'exif-digitized',
      offset: null,
    })
    expect(capturedFromTags({ ModifyDate: '2021:07:04 12:34:56', OffsetTime: '+09:00' })?.at).toBe(Date.UTC(2021, 6, 4, 3, 34, 56))
    expect(capturedFromTags({})).toBeNull()
  })

  it('gives the GPS clock the first EXIF offset tag the file has, else 0', () => {
    const gps = { GPSDateStamp: '2019:07:04', GPSTimeStamp: [12, 0, 0] }
    const at = Date.UTC(2019, 6, 4, 12)
    expect(capturedFromTags(gps)).toEqual({ at, source: 'gps', offset: 0 })
    expect(capturedFromTags({ ...gps, OffsetTime: '+01:00', OffsetTimeDigitized: '-03:00' })).toEqual({ at, source: 'gps', offset: -180 })
    expect(capturedFromTags({ ...gps, OffsetTime: '+01:00', OffsetTimeDigitized: '-03:00', OffsetTimeOriginal: '+05:45' })).toEqual({
      at,
      source: 'gps',
      offset: 345,
    })
    expect(capturedFromTags({ ...gps, OffsetTimeOriginal: 'nonsense', OffsetTime: '+01:00' })).toEqual({ at, source: 'gps', offset: 60 })
  })

  it('reads an offset tag within ±18:00 with minutes under 60, and nothing else', () => {
    for (const [tag, minutes] of [
      ['+02:00', 120],
      ['-05:30', -330],
      [' +05:45 ', 345],
      ['+14:00', 840],
      ['-12:00', -720],
      ['+18:00', 1080],
      ['-18:00', -1080],
      ['+00:00', 0],
    ] as const)
      expect(exifOffset(tag), tag).toBe(minutes)
    expect(Object.is(exifOffset('-00:00'), 0)).toBe(true) // not -0
    for (const tag of ['+18:01', '-19:00', '+05:60', '05:00', '+5:00', '+0500', 'Z', '', undefined, 120, null]) expect(exifOffset(tag), String(tag)).toBeNull()
  })

  it('reads the GPS clock as UTC, and only a real date and time with both stamps', () => {
    expect(gpsTime('2019:07:04', [12, 34, 56])).toBe(Date.UTC(2019, 6, 4, 12, 34, 56))
    expect(gpsTime('2019-07-04', '12:34:56.5')).toBe(Date.UTC(2019, 6, 4, 12, 34, 56, 500))
    for (const [date, time] of [
      ['2019:07:04', undefined],
      [undefined, [12, 34, 56]],
      ['2019:02:29', [0, 0, 0]],
      ['2019:07:04', [24, 0, 0]],
      ['2019:07:04', [12, 60, 0]],
      ['2019:07:04', [12, 0, 60]],
      ['2019:07:04', [12.5, 0, 0]],
      ['2019:07:04', [12, 0]],
      ['2019:07:04', [-1, 0, 0]],
      ['2019:07:04', [Number.NaN, 0, 0]],
      ['20190704', [12, 0, 0]],
    ] as const)
      expect(gpsTime(date, time), `${String(date)} ${JSON.stringify(time)}`).toBeNull()
  })
})

describe('fileNameDate', () => {
  it('reads the names cameras, phones and apps give', () => {
    const cases: [string, number][] = [
      ['IMG_20190704_123456.jpg', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['VID_20190704_123456.mp4', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['20190704_123456.jpg', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['PXL_20190704_123456789.jpg', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['PXL_20190704_123456789.MP.jpg', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['2019-07-04 12.34.56.jpg', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['2019-07-04 12.34.56-1.jpg', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['2019-07-04.jpg', Date.UTC(2019, 6, 4)],
      ['Screenshot_2019-07-04-12-34-56.png', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['Screenshot_20190704-123456.png', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['Screenshot 2019-07-04 at 12.34.56.png', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['IMG-20190704-WA0001.jpg', Date.UTC(2019, 6, 4)],
      ['signal-2019-07-04-123456.jpg', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['2019_07_04_12_34_56.jpg', Date.UTC(2019, 6, 4, 12, 34, 56)],
      ['holiday/2019-07-04T12:34:56.jpg', Date.UTC(2019, 6, 4, 12, 34, 56)],
      // Only the file's own name counts, not its folder.
      ['2018-01-01/IMG_20190704_123456.jpg', Date.UTC(2019, 6, 4, 12, 34, 56)],
    ]
    for (const [name, at] of cases) expect(fileNameDate(name, NOW), name).toBe(at)
  })

  it('reads no date that does not exist, no year outside 1900 to next year, and no date inside a longer number', () => {
    for (const name of [
      'IMG_0001.jpg',
      'DSC_1234.JPG',
      'holiday.jpg',
      'IMG_20190230_123456.jpg', // 30 February
      'IMG_20191304_123456.jpg', // month 13
      'IMG_20190700_123456.jpg', // day 0
      'IMG_18990704_123456.jpg',
      'IMG_20280101_000000.jpg', // beyond next year (NOW is 2026)
      '1562243696000.jpg', // a number, not a date
      '120190704.jpg',
      '2019-07_04.jpg', // the separators differ
      '2018-01-01/IMG_0001.jpg', // a folder's date is not the file's
    ])
      expect(fileNameDate(name, NOW), name).toBeNull()
    expect(fileNameDate('IMG_20270101_000000.jpg', NOW)).toBe(Date.UTC(2027, 0, 1))
  })

  it('keeps the date when the time after it is not one, and takes the first real date', () => {
    expect(fileNameDate('IMG_20190704_996699.jpg', NOW)).toBe(Date.UTC(2019, 6, 4))
    expect(fileNameDate('IMG_20190230_20190704.jpg', NOW)).toBe(Date.UTC(2019, 6, 4))
  })
})

describe('takenMonthPath', () => {
  it('is the year and month of a wall clock read in UTC (Taken.local)', () => {
    expect(takenMonthPath(Date.UTC(2019, 6, 31, 23, 59, 59))).toBe('2019/07')
    expect(takenMonthPath(Date.UTC(2019, 7, 1))).toBe('2019/08')
    expect(takenMonthPath(Date.UTC(1999, 0, 1))).toBe('1999/01')
  })
})

describe('takenIso', () => {
  it('writes the wall clock with its offset ("Z" for 0), without a zone when floating, milliseconds only when there are some', () => {
    const local = Date.UTC(2019, 6, 4, 12, 34, 56)
    expect(takenIso({ local, offset: 120 })).toBe('2019-07-04T12:34:56+02:00')
    expect(takenIso({ local, offset: -570 })).toBe('2019-07-04T12:34:56-09:30')
    expect(takenIso({ local, offset: 0 })).toBe('2019-07-04T12:34:56Z')
    expect(takenIso({ local: local + 5, offset: null })).toBe('2019-07-04T12:34:56.005')
    expect(takenIso({ local: Date.UTC(-1, 0, 1), offset: null })).toBe('-000001-01-01T00:00:00')
    expect(takenIso({ local: Date.UTC(12_345, 0, 1), offset: null })).toBe('+012345-01-01T00:00:00')
    // What it writes is the moment again.
    expect(Date.parse(takenIso({ local: local + HOUR, offset: 60 }))).toBe(local)
  })
})

describe('zoneOffset', () => {
  it('reads an IANA zone through Intl, its offset at each moment (summer time), to the minute', () => {
    const newYork = zoneOffset('America/New_York')!
    expect([newYork(Date.UTC(2019, 6, 4)), newYork(Date.UTC(2019, 0, 4))]).toEqual([-240, -300])
    expect(zoneOffset('Asia/Kolkata')!(Date.UTC(2019, 6, 4))).toBe(330)
    expect(zoneOffset(':Europe/Paris')!(Date.UTC(2019, 0, 4))).toBe(60) // as TZ may write it
    expect(Object.is(zoneOffset('UTC')!(Date.UTC(2019, 0, 4)), 0)).toBe(true)
    expect(zoneOffset('America/New_York')!(Date.UTC(1850, 0, 1))).toBe(-296) // local mean time, -04:56:02
    expect(zoneOffset('Not/A_Zone')).toBeNull()
  })
})
