// `coffer-photos import folder` (docs/photos.md, "Importing a folder with sidecars"; decision
// 0071, "The folder import"), in-process against a real server, on a folder built here: photos
// with and without EXIF dates, XMP sidecars as darktable, Lightroom, Apple Photos and Immich
// (ExifTool) write them, one that cannot be read, one no photo takes, and a part of Apple's
// privacy export of iCloud Photos with its Photo Details.csv. Each photo's date (the sidecar's
// over the file's own, unless they agree to the sidecar's precision), place, description and
// favourite mark as `ls --json` gives them; --no-location; a rerun that sends nothing.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writePhoto, type PhotoOptions } from '../support/photos.ts'
import { events, expectOk, photos, type PhotosRun, listedFiles, summaryOf } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string
let laptop: string
let root: string

const ENV = { env: { TZ: 'UTC', COFFER_FFMPEG: 'off' } }
const ALBUM = 'Trip'
const APPLE = 'iCloud Photos Part 1 of 1/Photos'
const at = (iso: string): number => Date.parse(iso)

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-import-folder-'))
  laptop = path.join(work, 'laptop')
  root = path.join(work, ALBUM)
  expectOk(await photos(laptop, ['login', server.url, '--register', '--email', uniqueEmail('import-folder'), '--password-stdin'], { stdin: PASSWORD }))
  expectOk(await photos(laptop, ['setup', '--yes', '--device-name', 'Laptop']))
}, 120_000)

afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

let seed = 0
async function photo(relative: string, options: Partial<PhotoOptions> = {}): Promise<void> {
  await writePhoto(path.join(root, relative), { format: 'jpeg', width: 24, height: 16, seed: ++seed, ...options })
}
async function text(relative: string, content: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, relative)), { recursive: true })
  await writeFile(path.join(root, relative), content)
}

/** darktable: attributes on rdf:Description, EXIF's own date form with milliseconds, GPS as "DDD,MM.mmmmmmK", a rating. */
const darktable = (date: string, latitude: string, longitude: string, description: string) => `<?xml version="1.0" encoding="UTF-8"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 4.4.0-Exiv2">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about=""
    xmlns:exif="http://ns.adobe.com/exif/1.0/"
    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:darktable="http://darktable.sf.net/"
   exif:DateTimeOriginal="${date}"
   exif:GPSLatitude="${latitude}"
   exif:GPSLongitude="${longitude}"
   xmp:Rating="5"
   darktable:xmp_version="5"
   darktable:history_end="0">
   <dc:description>
    <rdf:Alt>
     <rdf:li xml:lang="x-default">${description}</rdf:li>
    </rdf:Alt>
   </dc:description>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
`

/** Lightroom Classic: a RAW+JPEG pair's IMG_1.xmp, attributes, hundredths of a second and the offset, develop settings. */
const lightroom = (date: string) => `<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="Adobe XMP Core 7.0-c000 1.000000, 0000/00/00-00:00:00        ">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about=""
    xmlns:exif="http://ns.adobe.com/exif/1.0/"
    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"
    xmlns:crs="http://ns.adobe.com/camera-raw-settings/1.0/"
   exif:DateTimeOriginal="${date}"
   exif:GPSLatitude="22,54.408S"
   exif:GPSLongitude="43,10.374W"
   xmp:ModifyDate="2020-02-01T09:00:00.00-03:00"
   xmp:CreateDate="${date}"
   photoshop:DateCreated="${date}"
   crs:Version="12.0"
   crs:Exposure2012="+0.35"/>
 </rdf:RDF>
</x:xmpmeta>`

/** Apple Photos' "Export IPTC as XMP": elements, photoshop:DateCreated alone, decimal degrees with Ref properties. */
const apple = (date: string, description: string) => `<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 6.0.0">
   <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
      <rdf:Description rdf:about=""
            xmlns:dc="http://purl.org/dc/elements/1.1/"
            xmlns:exif="http://ns.adobe.com/exif/1.0/"
            xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/">
         <dc:description>
            <rdf:Alt>
               <rdf:li xml:lang="x-default">${description}</rdf:li>
            </rdf:Alt>
         </dc:description>
         <exif:GPSLongitudeRef>W</exif:GPSLongitudeRef>
         <exif:GPSLongitude>77.042794</exif:GPSLongitude>
         <exif:GPSLatitude>12.046374</exif:GPSLatitude>
         <exif:GPSLatitudeRef>S</exif:GPSLatitudeRef>
         <photoshop:DateCreated>${date}</photoshop:DateCreated>
      </rdf:Description>
   </rdf:RDF>
</x:xmpmeta>`

/** Immich (through ExifTool): single quotes, element form, one rdf:Description per namespace. */
const immich = (date: string) => `<?xpacket begin='\uFEFF' id='W5M0MpCehiHzreSzNTczkc9d'?>
<x:xmpmeta xmlns:x='adobe:ns:meta/' x:xmptk='Image::ExifTool 12.76'>
<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>
 <rdf:Description rdf:about='' xmlns:exif='http://ns.adobe.com/exif/1.0/'>
  <exif:DateTimeOriginal>${date}</exif:DateTimeOriginal>
 </rdf:Description>
 <rdf:Description rdf:about='' xmlns:xmp='http://ns.adobe.com/xap/1.0/'>
  <xmp:Rating>5</xmp:Rating>
 </rdf:Description>
</rdf:RDF>
</x:xmpmeta>
<?xpacket end='w'?>`

const PARIS = { latitude: 48 + 51.396 / 60, longitude: 2 + 21.05 / 60 }
const RIO = { latitude: -(22 + 54.408 / 60), longitude: -(43 + 10.374 / 60) }
const LIMA = { latitude: -12.046374, longitude: -77.042794 }
const ROME = { latitude: 41.8902, longitude: 12.4922 }

const listed = (album: string) => listedFiles(laptop, album, ENV)

const dated = (file: Record<string, unknown> | undefined) => [file?.taken, file?.taken_source, file?.captured, file?.captured_offset]
const near = (location: unknown, place: { latitude: number; longitude: number }) => {
  const [latitude, longitude] = location as [number, number]
  expect(latitude).toBeCloseTo(place.latitude, 6)
  expect(longitude).toBeCloseTo(place.longitude, 6)
}

describe('coffer-photos import folder', () => {
  let first: PhotosRun

  beforeAll(async () => {
    // darktable's IMG_1.jpg.xmp corrects the camera's date (12:34:56 at +02:00 in the file): the sidecar's, floating.
    await photo('darktable/IMG_0001.jpg', { captured: new Date('2019-07-04T10:34:56Z'), utcOffsetMinutes: 120, gps: ROME })
    await text('darktable/IMG_0001.jpg.xmp', darktable('2018:05:06 07:08:09.250', '48,51.396000N', '2,21.050000E', 'Sunset over the Seine &amp; Notre-Dame'))
    // Lightroom's stem sidecar, for a photo with no date of its own: the sidecar's, at its offset.
    await photo('lightroom/DSC_0002.jpg')
    await text('lightroom/DSC_0002.xmp', lightroom('2019-07-04T12:34:56.78-03:00'))
    // Apple Photos' stem sidecar saying what the file says (the same wall clock and offset): the file's own date, the sidecar's place and caption.
    await photo('apple/IMG_0003.jpg', { captured: new Date('2019-02-25T23:19:21Z'), utcOffsetMinutes: -300 })
    await text('apple/IMG_0003.xmp', apple('2019-02-25T18:19:21-05:00', 'Plaza Mayor, first evening'))
    // A date alone: the file's own time kept when on that day; the day's midnight when not (a scan dated by hand).
    await photo('apple/IMG_0004.jpg', { captured: new Date('2020-01-01T10:00:00Z'), utcOffsetMinutes: 0 })
    await text('apple/IMG_0004.xmp', apple('2020-01-01', 'New year'))
    await photo('apple/scan_0005.jpg', { captured: new Date('2021-03-03T09:00:00Z'), utcOffsetMinutes: 0 })
    await text('apple/scan_0005.xmp', apple('1987-06-01', 'Grandmother, summer 1987'))
    // Immich's whole-name sidecar beside the stem one (.XMP in capitals): the whole name's wins; the stem's goes to no photo.
    await photo('immich/2023/03/IMG_0006.jpg', { captured: new Date('2023-01-01T00:00:00Z') })
    await text('immich/2023/03/IMG_0006.jpg.XMP', immich('2023-03-05T08:15:00.000+09:00'))
    await text('immich/2023/03/IMG_0006.xmp', immich('2000-01-01T00:00:00Z'))
    // No sidecar: its EXIF date; a sidecar with a DOCTYPE: not read, the photo stored with its own date.
    await photo('IMG_0007.jpg', { captured: new Date('2019-07-11T09:00:00Z'), utcOffsetMinutes: 60 })
    await photo('IMG_0008.jpg', { captured: new Date('2019-07-12T09:00:00Z'), utcOffsetMinutes: 60 })
    await text('IMG_0008.jpg.xmp', `<!DOCTYPE x [<!ENTITY a "b">]><x:xmpmeta xmlns:x="adobe:ns:meta/"/>`)
    await text('orphan.xmp', immich('2001-01-01T00:00:00Z'))
    await text('notes.txt', 'not a photo')
    // A part of Apple's privacy export: its Photo Details.csv marks IMG_0009 a favourite, not IMG_0010; an album's CSV is not read.
    await photo(`${APPLE}/IMG_0009.JPG`)
    await photo(`${APPLE}/IMG_0010.JPG`)
    await text(
      `${APPLE}/Photo Details.csv`,
      'imgName,fileChecksum,favorite,hidden,deleted,originalCreationDate,viewCount,importDate\n' +
        'IMG_0009.JPG,AfQj57ORF2JIumUCjO+PawZ9nqPg,yes,no,no,"Saturday June 4,2022 12:11 PM GMT",10,"Saturday June 4,2022 12:11 PM GMT"\n' +
        'IMG_0010.JPG,AbCdEf0123456789abcdef0123,no,no,no,"Sunday June 5,2022 1:00 AM GMT",0,"Sunday June 5,2022 1:00 AM GMT"\n',
    )
    await text('iCloud Photos Part 1 of 1/Albums/Goa 2021.csv', 'Images\nIMG_0009.JPG\n')
    first = await photos(laptop, ['import', 'folder', root, '--json'], ENV)
  }, 120_000)

  it('stores every photo, names its sidecar, and reports what had one, what could not be read, and what no photo took', () => {
    expect(first.code, first.stderr).toBe(0)
    const files = events(first).filter((e) => e.event === 'file')
    expect(files.map((e) => [e.path, e.outcome, e.sidecar]).sort()).toEqual(
      [
        ['darktable/IMG_0001.jpg', 'stored', 'darktable/IMG_0001.jpg.xmp'],
        ['lightroom/DSC_0002.jpg', 'stored', 'lightroom/DSC_0002.xmp'],
        ['apple/IMG_0003.jpg', 'stored', 'apple/IMG_0003.xmp'],
        ['apple/IMG_0004.jpg', 'stored', 'apple/IMG_0004.xmp'],
        ['apple/scan_0005.jpg', 'stored', 'apple/scan_0005.xmp'],
        ['immich/2023/03/IMG_0006.jpg', 'stored', 'immich/2023/03/IMG_0006.jpg.XMP'],
        ['IMG_0007.jpg', 'stored', null],
        ['IMG_0008.jpg', 'stored', 'IMG_0008.jpg.xmp'],
        [`${APPLE}/IMG_0009.JPG`, 'stored', null],
        [`${APPLE}/IMG_0010.JPG`, 'stored', null],
      ].sort(),
    )
    expect(files.find((e) => e.path === 'IMG_0008.jpg')!.sidecar_error).toMatch(/DOCTYPE|entity/i)
    expect(first.stderr).toMatch(/IMG_0008\.jpg\.xmp: sidecar not read/)
    const summary = summaryOf(first)
    expect(summary).toMatchObject({
      files: 10,
      stored: 10,
      failed: 0,
      with_sidecar: 7,
      without_sidecar: 3,
      sidecar_unreadable: 1,
      photo_details: { files: 1, favourites: 1, unreadable: [] },
    })
    expect([...(summary.unmatched as string[])].sort()).toEqual(['immich/2023/03/IMG_0006.xmp', 'orphan.xmp'])
    // Sidecars and Apple's details are not "skipped": they were read; an album's CSV and a text file are.
    expect((summary.skipped as { path: string }[]).map((s) => s.path).sort()).toEqual(['iCloud Photos Part 1 of 1/Albums/Goa 2021.csv', 'notes.txt'])
  })

  it("dates each photo by its sidecar over the file's own, unless they agree to the sidecar's precision", async () => {
    const album = await listed(ALBUM)
    expect(album.size).toBe(10)
    // darktable's date differs from the camera's: the sidecar's wins, floating (no offset in it).
    expect(dated(album.get('darktable/IMG_0001.jpg'))).toEqual(['2018-05-06T07:08:09.250', 'xmp', at('2018-05-06T07:08:09.250Z'), null])
    // No EXIF date: Lightroom's, at its offset.
    expect(dated(album.get('lightroom/DSC_0002.jpg'))).toEqual(['2019-07-04T12:34:56.780-03:00', 'xmp', at('2019-07-04T15:34:56.780Z'), -180])
    // Apple's says what the file says: the file's own (exif-original), not rewritten as xmp.
    expect(dated(album.get('apple/IMG_0003.jpg'))).toEqual(['2019-02-25T18:19:21-05:00', 'exif-original', at('2019-02-25T23:19:21Z'), -300])
    // A date alone on the file's day keeps the file's time; on another day, it is that day, floating.
    expect(dated(album.get('apple/IMG_0004.jpg'))).toEqual(['2020-01-01T10:00:00Z', 'exif-original', at('2020-01-01T10:00:00Z'), 0])
    expect(dated(album.get('apple/scan_0005.jpg'))).toEqual(['1987-06-01T00:00:00', 'xmp', at('1987-06-01T00:00:00Z'), null])
    // The whole name's sidecar, not the stem's (2000-01-01).
    expect(dated(album.get('immich/2023/03/IMG_0006.jpg'))).toEqual(['2023-03-05T08:15:00+09:00', 'xmp', at('2023-03-04T23:15:00Z'), 540])
    // Without a sidecar, or with one not read: the file's own.
    expect(dated(album.get('IMG_0007.jpg'))).toEqual(['2019-07-11T10:00:00+01:00', 'exif-original', at('2019-07-11T09:00:00Z'), 60])
    expect(dated(album.get('IMG_0008.jpg'))).toEqual(['2019-07-12T10:00:00+01:00', 'exif-original', at('2019-07-12T09:00:00Z'), 60])
  })

  it("keeps the sidecar's place over the file's, the caption; a rating is no favourite, Apple's favourite mark is", async () => {
    const album = await listed(ALBUM)
    const paris = album.get('darktable/IMG_0001.jpg')!
    near(paris.location, PARIS) // the file's own EXIF position was Rome
    expect(paris).toMatchObject({ description: 'Sunset over the Seine & Notre-Dame', favourite: false })
    near(album.get('lightroom/DSC_0002.jpg')!.location, RIO)
    near(album.get('apple/IMG_0003.jpg')!.location, LIMA)
    expect(album.get('apple/IMG_0003.jpg')).toMatchObject({ description: 'Plaza Mayor, first evening' })
    expect(album.get('apple/scan_0005.jpg')).toMatchObject({ description: 'Grandmother, summer 1987' })
    expect(album.get('immich/2023/03/IMG_0006.jpg')).toMatchObject({ favourite: false, description: null, location: null })
    expect(album.get('IMG_0007.jpg')).toMatchObject({ favourite: false, description: null, location: null })
    expect(album.get(`${APPLE}/IMG_0009.JPG`)).toMatchObject({ favourite: true })
    expect(album.get(`${APPLE}/IMG_0010.JPG`)).toMatchObject({ favourite: false })
  })

  it('leaves out every place with --no-location (the sidecar’s and the file’s EXIF position), not the rest', async () => {
    const run = await photos(laptop, ['import', 'folder', root, '--album', 'No places', '--no-location', '--quiet'], ENV)
    expect(run.code, run.stderr).toBe(0)
    const album = await listed('No places')
    expect(album.size).toBe(10)
    for (const [name, file] of album) expect(file.location, name).toBeNull()
    expect(album.get('darktable/IMG_0001.jpg')).toMatchObject({ taken_source: 'xmp', description: 'Sunset over the Seine & Notre-Dame' })
    expect(album.get(`${APPLE}/IMG_0009.JPG`)).toMatchObject({ favourite: true })
  })

  it('run again, finds everything stored, reads no sidecar and sends nothing', async () => {
    const again = await photos(laptop, ['import', 'folder', root, '--json'], ENV)
    expect(again.code, again.stderr).toBe(0)
    expect(summaryOf(again)).toMatchObject({ files: 10, stored: 0, unchanged: 10, failed: 0, sent_bytes: 0, with_sidecar: 7, sidecar_unreadable: 0 })
    expect(again.stderr).not.toMatch(/sidecar not read/)
  })

  it('says what it did in words without --json', async () => {
    const run = await photos(laptop, ['import', 'folder', root, '--album', 'Words', '--verbose'], ENV)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/^10 of 10 files in [\d.]+ s: 10 imported \(/m)
    expect(run.stdout).toMatch(
      /^sidecars: 7 with an XMP sidecar, 3 without, 1 unreadable; 2 XMP files no photo took; Apple's Photo Details: 1 file, 1 favourite stored$/m,
    )
    expect(run.stdout).toMatch(/^stored {2}darktable\/IMG_0001\.jpg {2}\(.+\) {2}with darktable\/IMG_0001\.jpg\.xmp$/m)
    expect(run.stdout).toMatch(/^no photo took: orphan\.xmp$/m)
    expect(run.stderr).toMatch(/^not imported: notes\.txt: not a photo or video/m)
  })

  it('is a usage error without one folder', async () => {
    for (const args of [
      ['import', 'folder'],
      ['import', 'folder', root, root],
      ['import', 'folder', path.join(root, 'IMG_0007.jpg')],
    ]) {
      const run = await photos(laptop, args)
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr).toMatch(/folder/)
    }
  })
})
