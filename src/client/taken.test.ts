// The date taken (taken.ts): every source, in the documented order, what a date in a file name
// looks like, the dates that are not ones, the EXIF offsets and the GPS clock, and stored
// metadata of every version.
import { describe, expect, it } from 'vitest'
import { capturedFromTags, dateTaken, fileNameDate, gpsTime, metadataTaken, takenMonthPath, type TakenFacts } from './taken.ts'

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

describe('dateTaken', () => {
  it('tries the sources in the documented order, each with its own offset', () => {
    const order = [
      [EVERY_TAG, { at: Date.UTC(2019, 6, 4, 10, 34, 56, 250), source: 'exif-original' }],
      [without('Original'), { at: Date.UTC(2018, 0, 1, 5), source: 'exif-digitized' }],
      [without('Original', 'Digitized', 'CreateDate'), { at: Date.UTC(2016, 11, 31, 23, 0, 0, 500), source: 'exif-modified' }],
      [without('Original', 'Digitized', 'CreateDate', 'ModifyDate'), { at: Date.UTC(2016, 0, 1, 10, 20, 30, 750), source: 'gps' }],
      [{}, { at: Date.UTC(2015, 4, 5, 5, 5, 5), source: 'file-name' }],
    ] as const
    for (const [tags, taken] of order) expect(dateTaken(facts(tags), NOW), JSON.stringify(tags)).toEqual(taken)
    expect(dateTaken(facts({}, { name: 'holiday.jpg' }), NOW)).toEqual({ at: MODIFIED, source: 'file-modified' })
    expect(dateTaken(facts({}, { name: 'holiday.jpg', modified: null }), NOW)).toEqual({ at: UPLOADED, source: 'uploaded' })
    expect(dateTaken(facts({}, { tags: null, name: 'holiday.jpg', modified: null }), NOW)).toEqual({ at: UPLOADED, source: 'uploaded' })
  })

  it('passes over a tag that is not a real date to the next source', () => {
    const broken = { ...EVERY_TAG, DateTimeOriginal: '0000:00:00 00:00:00', CreateDate: '2021:02:30 12:00:00', ModifyDate: '    :  :     :  :  ' }
    expect(dateTaken(facts(broken), NOW).source).toBe('gps')
    const noGps = { GPSDateStamp: '2016:13:01', GPSTimeStamp: [10, 20, 30] }
    expect(dateTaken(facts(noGps), NOW).source).toBe('file-name')
  })

  it('reads what the metadata recorded: captured with its source (v 3), or as `exif` (v 1 and 2)', () => {
    const stored = { name: 'IMG_20150505_050505.jpg', modified: MODIFIED, uploaded: UPLOADED }
    expect(dateTaken({ ...stored, captured: 1_000, capturedSource: 'gps' }, NOW)).toEqual({ at: 1_000, source: 'gps' })
    expect(dateTaken({ ...stored, captured: 1_000 }, NOW)).toEqual({ at: 1_000, source: 'exif' })
    expect(dateTaken({ ...stored, captured: null, capturedSource: null }, NOW).source).toBe('file-name')
    expect(dateTaken({ ...stored, captured: null }, NOW).source).toBe('file-name')
  })
})

describe('metadataTaken', () => {
  it('takes the upload time from the manifest timestamp', () => {
    const metadata = { name: 'a.jpg', modified: null, captured: null }
    expect(metadataTaken(metadata, '2026-01-02T03:04:05.000Z', NOW)).toEqual({ at: UPLOADED, source: 'uploaded' })
    expect(metadataTaken({ ...metadata, capturedSource: null }, UPLOADED, NOW)).toEqual({ at: UPLOADED, source: 'uploaded' })
    expect(metadataTaken({ ...metadata, captured: 7, capturedSource: 'exif-modified' }, UPLOADED, NOW)).toEqual({ at: 7, source: 'exif-modified' })
  })
})

describe('capturedFromTags and the EXIF and GPS times', () => {
  it('reads an EXIF time at its offset, as UTC without one, with its fraction of a second', () => {
    expect(capturedFromTags({ DateTimeOriginal: '2021:07:04 12:34:56', OffsetTimeOriginal: '-05:30' })?.at).toBe(Date.UTC(2021, 6, 4, 18, 4, 56))
    expect(capturedFromTags({ DateTimeOriginal: '2021:07:04 12:34:56', SubSecTimeOriginal: 7 })?.at).toBe(Date.UTC(2021, 6, 4, 12, 34, 56, 700))
    // Each date takes its own offset tag, not another's.
    expect(capturedFromTags({ CreateDate: '2021:07:04 12:34:56', OffsetTimeOriginal: '+09:00' })?.at).toBe(Date.UTC(2021, 6, 4, 12, 34, 56))
    expect(capturedFromTags({ ModifyDate: '2021:07:04 12:34:56', OffsetTime: '+09:00' })?.at).toBe(Date.UTC(2021, 6, 4, 3, 34, 56))
    expect(capturedFromTags({})).toBeNull()
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
  it('is the UTC year and month', () => {
    expect(takenMonthPath(Date.UTC(2019, 6, 31, 23, 59, 59))).toBe('2019/07')
    expect(takenMonthPath(Date.UTC(2019, 7, 1))).toBe('2019/08')
    expect(takenMonthPath(Date.UTC(1999, 0, 1))).toBe('1999/01')
  })
})
