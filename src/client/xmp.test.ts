// Reading XMP sidecars (xmp.ts; docs/decisions/0071-takeout-import.md, "XMP sidecars"): sidecars
// as darktable, digiKam, Lightroom, Immich (ExifTool) and Apple Photos write them, every date form
// of XMP Part 1 8.2.1.1 and EXIF's, the date properties' order, GPS in each form and hemisphere,
// the description's languages, the rating, namespaces matched by URI whatever the prefix, and the
// refusals (malformed XML, DOCTYPE and entities, too large, too deep, not XMP); then which sidecar
// a photo takes among the names of its folder.
import { describe, expect, it } from 'vitest'
import { parseXmpSidecar, XMP_MAX_DEPTH, XMP_MAX_LENGTH, XmpError, type XmpFacts, type XmpProblem, xmpSidecarFor } from './xmp.ts'

const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#'

/** A sidecar of one rdf:Description with these attributes (`prefix:Name="value"`, exif, xmp, photoshop and dc declared) and these child elements. */
function sidecar(attributes: Record<string, string>, elements = ''): string {
  const written = Object.entries(attributes)
    .map(([name, value]) => `\n   ${name}="${value}"`)
    .join('')
  return `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 4.4.0-Exiv2">
 <rdf:RDF xmlns:rdf="${RDF}">
  <rdf:Description rdf:about=""
    xmlns:exif="http://ns.adobe.com/exif/1.0/"
    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"
    xmlns:dc="http://purl.org/dc/elements/1.1/"${written}>${elements}
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`
}

function problemOf(input: string | Uint8Array): XmpProblem | 'none' {
  try {
    parseXmpSidecar(input)
    return 'none'
  } catch (error) {
    if (error instanceof XmpError) return error.problem
    throw error
  }
}

const NOTHING: XmpFacts = { takenAt: null, offset: null, dateTag: null, precision: null, location: null, description: null, rating: null }

describe('sidecars as the tools write them', () => {
  // darktable 4.x (src/common/exif.cc): attributes, EXIF's own date form with milliseconds and no
  // offset, GPS as "DDD,MM.mmmmmmK" ("%08f" minutes), its edit history as nested rdf:Seq.
  it('reads darktable: the EXIF-form date as a floating time, "DDD,MM.mmmmmmK" north and east, the rating', () => {
    const xmp = `<?xml version="1.0" encoding="UTF-8"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 4.4.0-Exiv2">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about=""
    xmlns:exif="http://ns.adobe.com/exif/1.0/"
    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:xmpMM="http://ns.adobe.com/xap/1.0/mm/"
    xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:darktable="http://darktable.sf.net/"
   exif:DateTimeOriginal="2019:07:04 12:34:56.250"
   exif:GPSVersionID="2.2.0.0"
   exif:GPSLatitude="48,51.396000N"
   exif:GPSLongitude="2,21.050000E"
   exif:GPSAltitudeRef="0"
   exif:GPSAltitude="35/1"
   xmp:Rating="3"
   xmpMM:DerivedFrom="IMG_1234.CR2"
   darktable:import_timestamp="63791234567000000"
   darktable:xmp_version="5"
   darktable:history_end="2">
   <dc:description>
    <rdf:Alt>
     <rdf:li xml:lang="x-default">Sunset over the Seine</rdf:li>
    </rdf:Alt>
   </dc:description>
   <darktable:history>
    <rdf:Seq>
     <rdf:li darktable:num="0" darktable:operation="rawprepare" darktable:enabled="1" darktable:modversion="2" darktable:params="0000000000000000" darktable:multi_name=""/>
     <rdf:li darktable:num="1" darktable:operation="exposure" darktable:enabled="1" darktable:modversion="6" darktable:params="00000000000080b9" darktable:multi_name=""/>
    </rdf:Seq>
   </darktable:history>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
`
    const facts = parseXmpSidecar(xmp)
    expect(facts.takenAt).toBe(Date.UTC(2019, 6, 4, 12, 34, 56, 250))
    expect(facts.offset).toBeNull()
    expect(facts.dateTag).toBe('exif:DateTimeOriginal')
    expect(facts.precision).toBe('second')
    expect(facts.location?.latitude).toBeCloseTo(48 + 51.396 / 60, 10)
    expect(facts.location?.longitude).toBeCloseTo(2 + 21.05 / 60, 10)
    expect(facts.description).toBe('Sunset over the Seine')
    expect(facts.rating).toBe(3)
  })

  // digiKam (through Exiv2): attributes, the same time in several properties, xmp:ModifyDate and
  // tiff:DateTime for the edit, GPS as "DDD,MM,SSK" when the EXIF rationals were whole numbers,
  // dc:description in two languages, tags as an rdf:Seq.
  it('reads digiKam: ISO dates without offset, "DDD,MM,SSK" south and east, the x-default description of two', () => {
    const xmp = `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 4.4.0-Exiv2">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about=""
    xmlns:exif="http://ns.adobe.com/exif/1.0/"
    xmlns:tiff="http://ns.adobe.com/tiff/1.0/"
    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"
    xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:digiKam="http://www.digikam.org/ns/1.0/"
    xmlns:lr="http://ns.adobe.com/lightroom/1.0/"
   xmp:ModifyDate="2022-01-02T10:00:00"
   xmp:MetadataDate="2022-01-02T10:00:00"
   tiff:DateTime="2022-01-02T10:00:00"
   xmp:CreateDate="2021-12-24T18:05:09"
   exif:DateTimeOriginal="2021-12-24T18:05:09"
   photoshop:DateCreated="2021-12-24T18:05:09"
   exif:GPSVersionID="2.0.0.0"
   exif:GPSLatitude="33,51,34S"
   exif:GPSLongitude="151,12,56E"
   exif:GPSMapDatum="WGS-84"
   xmp:Rating="5">
   <digiKam:TagsList>
    <rdf:Seq>
     <rdf:li>Places/Australia/Sydney</rdf:li>
    </rdf:Seq>
   </digiKam:TagsList>
   <dc:description>
    <rdf:Alt>
     <rdf:li xml:lang="de-DE">Heiligabend</rdf:li>
     <rdf:li xml:lang="x-default">Christmas Eve &amp; fireworks</rdf:li>
    </rdf:Alt>
   </dc:description>
   <lr:hierarchicalSubject>
    <rdf:Bag>
     <rdf:li>Places|Australia|Sydney</rdf:li>
    </rdf:Bag>
   </lr:hierarchicalSubject>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`
    expect(parseXmpSidecar(xmp)).toEqual({
      takenAt: Date.UTC(2021, 11, 24, 18, 5, 9),
      offset: null,
      dateTag: 'exif:DateTimeOriginal',
      precision: 'second',
      location: { latitude: -(33 + 51 / 60 + 34 / 3600), longitude: 151 + 12 / 60 + 56 / 3600 },
      description: 'Christmas Eve & fireworks',
      rating: 5,
    })
  })

  // Lightroom Classic (Adobe XMP Core): a RAW's IMG_1.xmp, attributes, hundredths of a second and
  // the offset, develop settings (crs) and their history as nested structures.
  it('reads Lightroom: fractional seconds at a negative offset, "DDD,MM.mmK" south and west', () => {
    const xmp = `<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="Adobe XMP Core 7.0-c000 1.000000, 0000/00/00-00:00:00        ">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about=""
    xmlns:tiff="http://ns.adobe.com/tiff/1.0/"
    xmlns:exif="http://ns.adobe.com/exif/1.0/"
    xmlns:aux="http://ns.adobe.com/exif/1.0/aux/"
    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"
    xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:crs="http://ns.adobe.com/camera-raw-settings/1.0/"
   tiff:Make="Canon"
   tiff:Model="Canon EOS 5D Mark IV"
   exif:ExposureTime="1/250"
   exif:DateTimeOriginal="2019-07-04T12:34:56.78-03:00"
   exif:GPSLatitude="22,54.408S"
   exif:GPSLongitude="43,10.374W"
   aux:SerialNumber="012345678901"
   xmp:ModifyDate="2020-02-01T09:00:00.00-03:00"
   xmp:CreateDate="2019-07-04T12:34:56.78-03:00"
   xmp:MetadataDate="2020-02-01T09:00:00-03:00"
   xmp:Rating="4"
   photoshop:DateCreated="2019-07-04T12:34:56.78-03:00"
   crs:Version="12.0"
   crs:WhiteBalance="As Shot"
   crs:Exposure2012="+0.35">
   <dc:description>
    <rdf:Alt>
     <rdf:li xml:lang="x-default">Copacabana at noon</rdf:li>
    </rdf:Alt>
   </dc:description>
   <crs:ToneCurvePV2012>
    <rdf:Seq>
     <rdf:li>0, 0</rdf:li>
     <rdf:li>255, 255</rdf:li>
    </rdf:Seq>
   </crs:ToneCurvePV2012>
   <crs:Look>
    <rdf:Description crs:Name="Adobe Color" crs:Amount="1">
     <crs:Parameters>
      <rdf:Description crs:Version="12.0" crs:ProcessVersion="11.0"/>
     </crs:Parameters>
    </rdf:Description>
   </crs:Look>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>`
    const facts = parseXmpSidecar(xmp)
    expect(facts.takenAt).toBe(Date.UTC(2019, 6, 4, 15, 34, 56, 780))
    expect(facts.offset).toBe(-180)
    expect(facts.dateTag).toBe('exif:DateTimeOriginal')
    expect(facts.location?.latitude).toBeCloseTo(-(22 + 54.408 / 60), 10)
    expect(facts.location?.longitude).toBeCloseTo(-(43 + 10.374 / 60), 10)
    expect(facts.description).toBe('Copacabana at noon')
    expect(facts.rating).toBe(4)
  })

  // Immich writes its sidecars through ExifTool: single quotes, element form, one rdf:Description
  // per namespace.
  it('reads Immich (ExifTool): element form across several rdf:Description, single quotes, a positive offset', () => {
    const xmp = `<?xpacket begin='\uFEFF' id='W5M0MpCehiHzreSzNTczkc9d'?>
<x:xmpmeta xmlns:x='adobe:ns:meta/' x:xmptk='Image::ExifTool 12.76'>
<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>

 <rdf:Description rdf:about=''
  xmlns:dc='http://purl.org/dc/elements/1.1/'>
  <dc:description>
   <rdf:Alt>
    <rdf:li xml:lang='x-default'>Shibuya crossing</rdf:li>
   </rdf:Alt>
  </dc:description>
 </rdf:Description>

 <rdf:Description rdf:about=''
  xmlns:exif='http://ns.adobe.com/exif/1.0/'>
  <exif:DateTimeOriginal>2023-03-05T08:15:00.000+09:00</exif:DateTimeOriginal>
  <exif:GPSLatitude>35,39.5082N</exif:GPSLatitude>
  <exif:GPSLongitude>139,42.0138E</exif:GPSLongitude>
 </rdf:Description>

 <rdf:Description rdf:about=''
  xmlns:xmp='http://ns.adobe.com/xap/1.0/'>
  <xmp:Rating>2</xmp:Rating>
 </rdf:Description>
</rdf:RDF>
</x:xmpmeta>
<?xpacket end='w'?>`
    const facts = parseXmpSidecar(xmp)
    expect(facts.takenAt).toBe(Date.UTC(2023, 2, 4, 23, 15, 0))
    expect(facts.offset).toBe(540)
    expect(facts.precision).toBe('second')
    expect(facts.location?.latitude).toBeCloseTo(35 + 39.5082 / 60, 10)
    expect(facts.location?.longitude).toBeCloseTo(139 + 42.0138 / 60, 10)
    expect(facts.description).toBe('Shibuya crossing')
    expect(facts.rating).toBe(2)
  })

  // Apple Photos' "Export IPTC as XMP" (osxphotos issue 175, PhotoPrism issues 636 and 1151):
  // photoshop:DateCreated alone, with its offset; decimal degrees with separate Ref properties.
  it('reads Apple Photos: photoshop:DateCreated with offset, decimal GPS with GPSLatitudeRef S and GPSLongitudeRef W', () => {
    const xmp = `<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 5.4.0">
   <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
      <rdf:Description rdf:about=""
            xmlns:dc="http://purl.org/dc/elements/1.1/"
            xmlns:exif="http://ns.adobe.com/exif/1.0/"
            xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/">
         <dc:title>
            <rdf:Alt>
               <rdf:li xml:lang="x-default">Lima</rdf:li>
            </rdf:Alt>
         </dc:title>
         <dc:description>
            <rdf:Alt>
               <rdf:li xml:lang="x-default">Plaza Mayor, first evening</rdf:li>
            </rdf:Alt>
         </dc:description>
         <dc:subject>
            <rdf:Bag>
               <rdf:li>Peru</rdf:li>
            </rdf:Bag>
         </dc:subject>
         <exif:GPSSpeedRef>K</exif:GPSSpeedRef>
         <exif:GPSSpeed>0.0</exif:GPSSpeed>
         <exif:GPSTimeStamp>2019-02-25T23:19:21Z</exif:GPSTimeStamp>
         <exif:GPSLongitudeRef>W</exif:GPSLongitudeRef>
         <exif:GPSLongitude>77.042793999999997</exif:GPSLongitude>
         <exif:GPSLatitude>12.046374000000001</exif:GPSLatitude>
         <exif:GPSLatitudeRef>S</exif:GPSLatitudeRef>
         <exif:GPSAltitude>154.0</exif:GPSAltitude>
         <photoshop:DateCreated>2019-02-25T18:19:21-05:00</photoshop:DateCreated>
      </rdf:Description>
   </rdf:RDF>
</x:xmpmeta>`
    expect(parseXmpSidecar(xmp)).toEqual({
      takenAt: Date.UTC(2019, 1, 25, 23, 19, 21),
      offset: -300,
      dateTag: 'photoshop:DateCreated',
      precision: 'second',
      location: { latitude: -12.046374, longitude: -77.042794 },
      description: 'Plaza Mayor, first evening',
      rating: null,
    })
  })

  it('reads a sidecar with no date, place, description or rating as nothing', () => {
    expect(parseXmpSidecar(sidecar({ 'xmp:CreatorTool': 'Photos 5.0', 'xmp:Label': 'Red' }))).toEqual(NOTHING)
    expect(parseXmpSidecar(`<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="${RDF}"/></x:xmpmeta>`)).toEqual(NOTHING)
  })
})

describe('namespaces, matched by URI', () => {
  it('reads properties whatever their prefix, and the default namespace', () => {
    const xmp = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><r:RDF xmlns:r="${RDF}">
      <r:Description xmlns:ns0="http://ns.adobe.com/exif/1.0/" ns0:GPSLatitude="51,30.0N" ns0:GPSLongitude="0,7.5W"/>
      <r:Description>
        <DateTimeOriginal xmlns="http://ns.adobe.com/exif/1.0/">2018-05-06T07:08:09+01:00</DateTimeOriginal>
        <d:description xmlns:d="http://purl.org/dc/elements/1.1/"><r:Alt><r:li xml:lang="x-default">Tower Bridge</r:li></r:Alt></d:description>
      </r:Description>
    </r:RDF></x:xmpmeta>`
    const facts = parseXmpSidecar(xmp)
    expect(facts.takenAt).toBe(Date.UTC(2018, 4, 6, 6, 8, 9))
    expect(facts.offset).toBe(60)
    expect(facts.location).toEqual({ latitude: 51.5, longitude: -0.125 })
    expect(facts.description).toBe('Tower Bridge')
  })

  it('ignores a usual prefix bound to another namespace', () => {
    const xmp = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="${RDF}">
      <rdf:Description xmlns:exif="http://example.com/not-exif/" xmlns:e="http://ns.adobe.com/exif/1.0/"
        exif:DateTimeOriginal="1999-01-01T00:00:00" e:DateTimeOriginal="2005-06-07T08:09:10"
        exif:GPSLatitude="10,0.0N" exif:GPSLongitude="10,0.0E"/>
    </rdf:RDF></x:xmpmeta>`
    const facts = parseXmpSidecar(xmp)
    expect(facts.takenAt).toBe(Date.UTC(2005, 5, 7, 8, 9, 10))
    expect(facts.location).toBeNull()
  })

  it('reads an undeclared usual prefix as its namespace (hand-written sidecars), and ignores an unknown one', () => {
    const xmp = `<x:xmpmeta><rdf:RDF><rdf:Description exif:DateTimeOriginal="2010-10-10T10:10:10" foo:DateTimeOriginal="2000-01-01T00:00:00">
      <xap:Rating>1</xap:Rating></rdf:Description></rdf:RDF></x:xmpmeta>`
    const facts = parseXmpSidecar(xmp)
    expect(facts.takenAt).toBe(Date.UTC(2010, 9, 10, 10, 10, 10))
    expect(facts.rating).toBe(1)
  })

  it('takes the first of a property written twice (two rdf:Description)', () => {
    const xmp = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="${RDF}">
      <rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:DateTimeOriginal="2001-02-03T04:05:06"/>
      <rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:DateTimeOriginal="2009-02-03T04:05:06"/>
    </rdf:RDF></x:xmpmeta>`
    expect(parseXmpSidecar(xmp).takenAt).toBe(Date.UTC(2001, 1, 3, 4, 5, 6))
  })

  it('reads rdf:RDF at the root, without x:xmpmeta', () => {
    const xmp = `<rdf:RDF xmlns:rdf="${RDF}"><rdf:Description xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:CreateDate="2015-03-04"/></rdf:RDF>`
    expect(parseXmpSidecar(xmp)).toMatchObject({ takenAt: Date.UTC(2015, 2, 4), dateTag: 'xmp:CreateDate', precision: 'day' })
  })
})

describe('dates', () => {
  const read = (value: string) => {
    const facts = parseXmpSidecar(sidecar({ 'exif:DateTimeOriginal': value }))
    return { takenAt: facts.takenAt, offset: facts.offset, precision: facts.precision }
  }

  it.each([
    ['2019-07-04T12:34:56', Date.UTC(2019, 6, 4, 12, 34, 56), null, 'second'],
    ['2019-07-04T12:34:56+02:00', Date.UTC(2019, 6, 4, 10, 34, 56), 120, 'second'],
    ['2019-07-04T12:34:56-05:30', Date.UTC(2019, 6, 4, 18, 4, 56), -330, 'second'],
    ['2019-07-04T12:34:56Z', Date.UTC(2019, 6, 4, 12, 34, 56), 0, 'second'],
    ['2019-07-04T12:34:56-00:00', Date.UTC(2019, 6, 4, 12, 34, 56), 0, 'second'],
    ['2019-07-04T12:34:56+0530', Date.UTC(2019, 6, 4, 7, 4, 56), 330, 'second'],
    ['2019-07-04T12:34:56+14', Date.UTC(2019, 6, 3, 22, 34, 56), 840, 'second'],
    ['2019-07-04T12:34:56+18:00', Date.UTC(2019, 6, 3, 18, 34, 56), 1080, 'second'],
    ['2019-07-04T12:34:56.5', Date.UTC(2019, 6, 4, 12, 34, 56, 500), null, 'second'],
    ['2019-07-04T12:34:56.78+02:00', Date.UTC(2019, 6, 4, 10, 34, 56, 780), 120, 'second'],
    ['2019-07-04T12:34:56.123456789Z', Date.UTC(2019, 6, 4, 12, 34, 56, 123), 0, 'second'],
    ['2019-07-04T12:34', Date.UTC(2019, 6, 4, 12, 34), null, 'minute'],
    ['2019-07-04T12:34+02:00', Date.UTC(2019, 6, 4, 10, 34), 120, 'minute'],
    ['2019-07-04', Date.UTC(2019, 6, 4), null, 'day'],
    ['2019:07:04 12:34:56', Date.UTC(2019, 6, 4, 12, 34, 56), null, 'second'],
    ['2019:07:04 12:34:56.250', Date.UTC(2019, 6, 4, 12, 34, 56, 250), null, 'second'],
    ['2019-07-04 12:34:56', Date.UTC(2019, 6, 4, 12, 34, 56), null, 'second'],
    ['  2019-07-04T12:34:56  ', Date.UTC(2019, 6, 4, 12, 34, 56), null, 'second'],
    ['2020-02-29T23:59:59', Date.UTC(2020, 1, 29, 23, 59, 59), null, 'second'],
    ['1899-12-31T23:00:00', Date.UTC(1899, 11, 31, 23), null, 'second'],
  ])('reads %j', (value, takenAt, offset, precision) => {
    expect(read(value)).toEqual({ takenAt, offset, precision })
  })

  it.each([
    '2019', // a year alone: too vague
    '2019-07', // a month alone: too vague
    '2019-02-30T12:00:00',
    '2019-02-29',
    '2019-13-01',
    '2019-07-04T24:00:00',
    '2019-07-04T12:60:00',
    '2019-07-04T12:34:60',
    '2019-07-04T12:34:56+19:00',
    '2019-07-04T12:34:56+02:60',
    '2019-07-04Z',
    '2019-07-04T12',
    '0000:00:00 00:00:00',
    '0000-01-01T00:00:00',
    '19-07-04',
    '2019/07/04 12:34:56',
    '2019-07:04 12:34:56',
    '1562243696',
    'yesterday',
    '',
  ])('reads %j as no date', (value) => {
    expect(read(value)).toEqual({ takenAt: null, offset: null, precision: null })
  })

  it('prefers exif:DateTimeOriginal, then photoshop:DateCreated, xmp:CreateDate, exif:DateTimeDigitized; never xmp:ModifyDate, xmp:MetadataDate or tiff:DateTime', () => {
    const all = {
      'exif:DateTimeOriginal': '2001-01-01T01:01:01',
      'photoshop:DateCreated': '2002-02-02T02:02:02',
      'xmp:CreateDate': '2003-03-03T03:03:03',
      'exif:DateTimeDigitized': '2004-04-04T04:04:04',
      'xmp:ModifyDate': '2005-05-05T05:05:05',
      'xmp:MetadataDate': '2006-06-06T06:06:06',
    }
    const without = (...tags: string[]) => Object.fromEntries(Object.entries(all).filter(([tag]) => !tags.includes(tag)))
    const chosen = (attributes: Record<string, string>) => {
      const facts = parseXmpSidecar(sidecar(attributes))
      return [facts.dateTag, facts.takenAt]
    }
    expect(chosen(all)).toEqual(['exif:DateTimeOriginal', Date.UTC(2001, 0, 1, 1, 1, 1)])
    expect(chosen(without('exif:DateTimeOriginal'))).toEqual(['photoshop:DateCreated', Date.UTC(2002, 1, 2, 2, 2, 2)])
    expect(chosen(without('exif:DateTimeOriginal', 'photoshop:DateCreated'))).toEqual(['xmp:CreateDate', Date.UTC(2003, 2, 3, 3, 3, 3)])
    expect(chosen(without('exif:DateTimeOriginal', 'photoshop:DateCreated', 'xmp:CreateDate'))).toEqual([
      'exif:DateTimeDigitized',
      Date.UTC(2004, 3, 4, 4, 4, 4),
    ])
    expect(chosen({ 'xmp:ModifyDate': all['xmp:ModifyDate'], 'xmp:MetadataDate': all['xmp:MetadataDate'] })).toEqual([null, null])
    const tiff = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="${RDF}"><rdf:Description xmlns:tiff="http://ns.adobe.com/tiff/1.0/" tiff:DateTime="2007-07-07T07:07:07"/></rdf:RDF></x:xmpmeta>`
    expect(parseXmpSidecar(tiff).takenAt).toBeNull()
  })

  it('goes on to the next property when the preferred one is malformed or too vague, and prefers a date alone to a later property', () => {
    const malformed = parseXmpSidecar(sidecar({ 'exif:DateTimeOriginal': '0000:00:00 00:00:00', 'xmp:CreateDate': '2003-03-03T03:03:03+01:00' }))
    expect([malformed.dateTag, malformed.takenAt, malformed.offset]).toEqual(['xmp:CreateDate', Date.UTC(2003, 2, 3, 2, 3, 3), 60])
    const vague = parseXmpSidecar(sidecar({ 'photoshop:DateCreated': '1975', 'xmp:CreateDate': '2019-05-01T10:00:00' }))
    expect([vague.dateTag, vague.takenAt]).toEqual(['xmp:CreateDate', Date.UTC(2019, 4, 1, 10)])
    const day = parseXmpSidecar(sidecar({ 'photoshop:DateCreated': '1975-06-14', 'xmp:CreateDate': '2019-05-01T10:00:00' }))
    expect([day.dateTag, day.takenAt, day.precision]).toEqual(['photoshop:DateCreated', Date.UTC(1975, 5, 14), 'day'])
  })

  it('borrows the offset of another property stating the same wall clock, and of no other', () => {
    const same = parseXmpSidecar(sidecar({ 'exif:DateTimeOriginal': '2016-08-14T18:13:32.47', 'xmp:CreateDate': '2016-08-14T18:13:32+02:00' }))
    expect([same.dateTag, same.takenAt, same.offset]).toEqual(['exif:DateTimeOriginal', Date.UTC(2016, 7, 14, 16, 13, 32, 470), 120])
    const minute = parseXmpSidecar(sidecar({ 'exif:DateTimeOriginal': '2016-08-14T18:13:32', 'photoshop:DateCreated': '2016-08-14T18:13-04:00' }))
    expect([minute.takenAt, minute.offset]).toEqual([Date.UTC(2016, 7, 14, 22, 13, 32), -240])
    const other = parseXmpSidecar(sidecar({ 'exif:DateTimeOriginal': '2016-08-14T18:13:32', 'xmp:CreateDate': '2016-08-14T18:14:32+02:00' }))
    expect([other.takenAt, other.offset]).toEqual([Date.UTC(2016, 7, 14, 18, 13, 32), null])
    const day = parseXmpSidecar(sidecar({ 'photoshop:DateCreated': '2016-08-14', 'xmp:CreateDate': '2016-08-14T00:00:00+02:00' }))
    expect([day.takenAt, day.offset]).toEqual([Date.UTC(2016, 7, 14), null])
  })

  it('reads a date in element form, with surrounding white space, and not a date held as a structure', () => {
    expect(parseXmpSidecar(sidecar({}, '\n<exif:DateTimeOriginal>\n  2012-12-12T12:12:12\n</exif:DateTimeOriginal>')).takenAt).toBe(
      Date.UTC(2012, 11, 12, 12, 12, 12),
    )
    const structured = sidecar({}, '<exif:DateTimeOriginal><rdf:Seq><rdf:li>2012-12-12T12:12:12</rdf:li></rdf:Seq></exif:DateTimeOriginal>')
    expect(parseXmpSidecar(structured).takenAt).toBeNull()
    const resource = sidecar({}, '<exif:DateTimeOriginal rdf:resource="http://example.com/2012"/>')
    expect(parseXmpSidecar(resource).takenAt).toBeNull()
  })
})

describe('place', () => {
  const place = (latitude: string | null, longitude: string | null, refs: Record<string, string> = {}) => {
    const attributes: Record<string, string> = { ...refs }
    if (latitude !== null) attributes['exif:GPSLatitude'] = latitude
    if (longitude !== null) attributes['exif:GPSLongitude'] = longitude
    return parseXmpSidecar(sidecar(attributes)).location
  }

  it.each([
    ['48,51.396N', '2,21.05E', 48.8566, 2.350833333],
    ['40,42.768N', '74,0.36W', 40.7128, -74.006],
    ['33,52.128S', '151,12.558E', -33.8688, 151.2093],
    ['34,36.222S', '58,22.896W', -34.6037, -58.3816],
    ['48,51,23.76N', '2,21,3E', 48.8566, 2.350833333],
    ['33,51,34S', '151,12,56W', -33.859444444, -151.215555556],
    ['48, 51.396 N', ' 2,21.05E ', 48.8566, 2.350833333],
    ['48,51.396n', '2,21.05e', 48.8566, 2.350833333],
    ['0,30.0S', '0,0.0E', -0.5, 0],
    ['90,0.0N', '180,0.0W', 90, -180],
    ['48.8566', '2.3508', 48.8566, 2.3508],
    ['-33.8688', '-70.6693', -33.8688, -70.6693],
    ['+48.8566', '+2.3508', 48.8566, 2.3508],
    ['33.8688S', '151.2093E', -33.8688, 151.2093],
    ['33.8688 S', '70.6693 W', -33.8688, -70.6693],
  ])('reads %j %j', (latitude, longitude, expectedLatitude, expectedLongitude) => {
    const location = place(latitude, longitude)
    expect(location?.latitude).toBeCloseTo(expectedLatitude, 6)
    expect(location?.longitude).toBeCloseTo(expectedLongitude, 6)
  })

  it('takes the hemisphere of an unsigned decimal from GPSLatitudeRef and GPSLongitudeRef, in either case', () => {
    expect(place('12.5', '77.25', { 'exif:GPSLatitudeRef': 'S', 'exif:GPSLongitudeRef': 'W' })).toEqual({ latitude: -12.5, longitude: -77.25 })
    expect(place('12.5', '77.25', { 'exif:GPSLatitudeRef': 'n', 'exif:GPSLongitudeRef': 'e' })).toEqual({ latitude: 12.5, longitude: 77.25 })
    expect(place('-12.5', '77.25', { 'exif:GPSLatitudeRef': 'S', 'exif:GPSLongitudeRef': 'E' })).toEqual({ latitude: -12.5, longitude: 77.25 })
    // the standard form's own letter wins over a Ref
    expect(place('12,30.0N', '77,15.0E', { 'exif:GPSLatitudeRef': 'S', 'exif:GPSLongitudeRef': 'W' })).toEqual({ latitude: 12.5, longitude: 77.25 })
  })

  it.each([
    ['0,0.0N', '0,0.0E', 'the 0,0 of a missing fix'],
    ['0', '0', 'the 0,0 of a missing fix, decimal'],
    ['48,51.396E', '2,21.05E', 'a latitude lettered E'],
    ['48,51.396N', '2,21.05N', 'a longitude lettered N'],
    ['48,60.0N', '2,21.05E', 'sixty minutes'],
    ['48,51,60N', '2,21.05E', 'sixty seconds'],
    ['48,51.5,10N', '2,21.05E', 'seconds after fractional minutes'],
    ['91,0.0N', '2,21.05E', 'a latitude past 90'],
    ['48,51.396N', '181,0.0E', 'a longitude past 180'],
    ['90.5', '2.35', 'a decimal latitude past 90'],
    ['-48.8N', '2.35E', 'a negative value with a letter'],
    ['48,51.396', '2,21.05', 'degrees and minutes without a letter'],
    ['48°51′23.76″N', '2°21′3″E', 'degree signs'],
    ['N/A', 'N/A', 'no value'],
    ['', '', 'empty values'],
    ['48,51.396N', null, 'a latitude alone'],
    [null, '2,21.05E', 'a longitude alone'],
  ] as [string | null, string | null, string][])('reads %j %j as no place (%s)', (latitude, longitude) => {
    expect(place(latitude, longitude)).toBeNull()
  })

  it('reads no place where a Ref contradicts a negative value or is not a hemisphere of its axis', () => {
    expect(place('-12.5', '77.25', { 'exif:GPSLatitudeRef': 'N', 'exif:GPSLongitudeRef': 'E' })).toBeNull()
    expect(place('12.5', '77.25', { 'exif:GPSLatitudeRef': 'E', 'exif:GPSLongitudeRef': 'E' })).toBeNull()
    expect(place('12.5', '77.25', { 'exif:GPSLatitudeRef': 'N', 'exif:GPSLongitudeRef': 'South' })).toBeNull()
  })

  it('keeps the date when the place cannot be read, and the place when the date cannot', () => {
    const noPlace = parseXmpSidecar(sidecar({ 'exif:DateTimeOriginal': '2019-07-04T12:34:56', 'exif:GPSLatitude': 'bad', 'exif:GPSLongitude': '2,21.05E' }))
    expect([noPlace.takenAt, noPlace.location]).toEqual([Date.UTC(2019, 6, 4, 12, 34, 56), null])
    const noDate = parseXmpSidecar(sidecar({ 'exif:DateTimeOriginal': 'bad', 'exif:GPSLatitude': '51,30.0N', 'exif:GPSLongitude': '0,7.5W' }))
    expect([noDate.takenAt, noDate.location]).toEqual([null, { latitude: 51.5, longitude: -0.125 }])
  })
})

describe('description and rating', () => {
  const description = (elements: string, attributes: Record<string, string> = {}) => parseXmpSidecar(sidecar(attributes, elements)).description

  it('takes x-default wherever it is, else the first non-empty language, trimmed', () => {
    const alt = (...items: string[]) => `<dc:description><rdf:Alt>${items.join('')}</rdf:Alt></dc:description>`
    expect(description(alt('<rdf:li xml:lang="fr-FR">Plage</rdf:li>', '<rdf:li xml:lang="x-default">  Beach\n</rdf:li>'))).toBe('Beach')
    expect(description(alt('<rdf:li xml:lang="fr-FR">Plage</rdf:li>', '<rdf:li xml:lang="de-DE">Strand</rdf:li>'))).toBe('Plage')
    expect(description(alt('<rdf:li xml:lang="x-default">  </rdf:li>', '<rdf:li xml:lang="de-DE">Strand</rdf:li>'))).toBe('Strand')
    expect(description(alt('<rdf:li xml:lang="X-Default">Beach</rdf:li>'))).toBe('Beach')
    expect(description('<dc:description><rdf:Seq><rdf:li>Only item</rdf:li></rdf:Seq></dc:description>')).toBe('Only item')
  })

  it('reads a plain description (attribute or element, as some tools write it), and none when empty', () => {
    expect(description('', { 'dc:description': 'A plain caption' })).toBe('A plain caption')
    expect(description('<dc:description>Element caption</dc:description>')).toBe('Element caption')
    expect(description('<dc:description><rdf:Alt><rdf:li xml:lang="x-default"></rdf:li></rdf:Alt></dc:description>')).toBeNull()
    expect(description('<dc:description>   </dc:description>')).toBeNull()
    expect(description('', { 'dc:description': '' })).toBeNull()
    expect(description('<dc:title><rdf:Alt><rdf:li xml:lang="x-default">A title</rdf:li></rdf:Alt></dc:title>')).toBeNull()
  })

  it('decodes references, CDATA and line breaks, and keeps comments out', () => {
    const text =
      '<dc:description><rdf:Alt><rdf:li xml:lang="x-default">Caf&#233; &amp; cr&#xE8;me &lt;3 &quot;&apos; &#x1F600;<!-- a note -->\r\n<![CDATA[<b>raw</b> & more]]></rdf:li></rdf:Alt></dc:description>'
    expect(description(text)).toBe('Café & crème <3 "\' 😀\n<b>raw</b> & more')
    expect(description('', { 'dc:description': 'tab&#9;and\tnewline&#10;kept as XML says' })).toBe('tab\tand newline\nkept as XML says')
  })

  it.each([
    ['5', 5],
    ['0', 0],
    ['-1', -1],
    ['3.5', 3.5],
    ['+2', 2],
    ['6', null],
    ['-2', null],
    ['five', null],
    ['', null],
  ])('reads xmp:Rating %j as %j', (value, rating) => {
    expect(parseXmpSidecar(sidecar({ 'xmp:Rating': value })).rating).toBe(rating)
  })
})

describe('refusals', () => {
  const wrap = (inside: string) => `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="${RDF}">${inside}</rdf:RDF></x:xmpmeta>`

  it.each([
    ['', 'no element'],
    ['hello', 'not XML'],
    ['{"photoTakenTime": {"timestamp": "1"}}', 'JSON'],
    [wrap('<rdf:Description>'), 'an unclosed element'],
    [wrap('<rdf:Description></rdf:Descriptio>'), 'a mismatched end tag'],
    [wrap('</rdf:Description>'), 'an end tag closing the wrong element'],
    [`${wrap('')}<extra/>`, 'a second root element'],
    [`${wrap('')} trailing text`, 'text after the root'],
    [wrap('<rdf:Description exif:Rating=5/>'), 'an unquoted attribute'],
    [wrap('<rdf:Description exif:Rating="5/>'), 'an unclosed attribute value'],
    [wrap('<rdf:Description a:b="1" a:b="2"/>'), 'an attribute twice'],
    [wrap('<rdf:Description a:b="1"c:d="2"/>'), 'attributes not separated'],
    [wrap('<rdf:Description a:b="x<y"/>'), 'a "<" in an attribute value'],
    [wrap('<dc:description>fish & chips</dc:description>'), 'a bare ampersand'],
    [wrap('<dc:description>&nbsp;</dc:description>'), 'an HTML entity'],
    [wrap('<dc:description>&#0;</dc:description>'), 'a NUL character reference'],
    [wrap('<dc:description>&#xD800;</dc:description>'), 'a surrogate character reference'],
    [wrap('<!-- unclosed comment'), 'an unclosed comment'],
    [wrap('<![CDATA[ unclosed'), 'an unclosed CDATA section'],
    [wrap('<!ELEMENT x ANY>'), 'a markup declaration'],
    [wrap('<rdf:Description'), 'a start tag cut short'],
  ])('refuses %j as malformed (%s)', (text) => {
    expect(problemOf(text)).toBe('malformed')
  })

  it('refuses a DOCTYPE with entities (billion laughs, external entities) and never expands one', () => {
    const laughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
${wrap('<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:description>&lol3;</dc:description></rdf:Description>')}`
    expect(problemOf(laughs)).toBe('doctype')
    const external = `<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${wrap('<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" dc:description="&xxe;"/>')}`
    expect(problemOf(external)).toBe('doctype')
    expect(problemOf(`<!doctype html>${wrap('')}`)).toBe('doctype')
    expect(problemOf(wrap('<!ENTITY x "y">'))).toBe('doctype')
    // an entity used without a declaration is refused too, never looked up
    expect(problemOf(wrap('<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" dc:description="&xxe;"/>'))).toBe('malformed')
    // a DOCTYPE inside a comment is only text
    expect(problemOf(`<!-- <!DOCTYPE x> -->${wrap('')}`)).toBe('none')
  })

  it(`refuses text longer than ${XMP_MAX_LENGTH} characters and bytes past ${XMP_MAX_LENGTH}, and reads one at the limit`, () => {
    const base = sidecar({ 'exif:DateTimeOriginal': '2019-07-04T12:34:56' })
    const padded = (length: number) => base.replace('<?xpacket end="w"?>', `${' '.repeat(length - base.length)}<?xpacket end="w"?>`)
    expect(padded(XMP_MAX_LENGTH).length).toBe(XMP_MAX_LENGTH)
    expect(parseXmpSidecar(padded(XMP_MAX_LENGTH)).takenAt).toBe(Date.UTC(2019, 6, 4, 12, 34, 56))
    expect(problemOf(padded(XMP_MAX_LENGTH + 1))).toBe('too-large')
    // in bytes: the byte-order mark in <?xpacket begin?> takes three bytes in UTF-8, one character in text
    const bytes = (length: number) => new TextEncoder().encode(padded(length - 2))
    expect(bytes(XMP_MAX_LENGTH).length).toBe(XMP_MAX_LENGTH)
    expect(problemOf(bytes(XMP_MAX_LENGTH))).toBe('none')
    expect(problemOf(bytes(XMP_MAX_LENGTH + 1))).toBe('too-large')
  })

  it(`refuses elements nested deeper than ${XMP_MAX_DEPTH}, and reads them at that depth`, () => {
    const nested = (depth: number) => {
      const inner = depth - 3 // x:xmpmeta, rdf:RDF, rdf:Description
      return wrap(`<rdf:Description xmlns:a="urn:a">${'<a:b>'.repeat(inner)}${'</a:b>'.repeat(inner)}</rdf:Description>`)
    }
    expect(problemOf(nested(XMP_MAX_DEPTH))).toBe('none')
    expect(problemOf(nested(XMP_MAX_DEPTH + 1))).toBe('too-deep')
    expect(problemOf(`${'<a>'.repeat(200_000)}`)).toBe('too-deep')
  })

  it('refuses XML without rdf:RDF as not XMP', () => {
    expect(problemOf('<svg xmlns="http://www.w3.org/2000/svg"><title>Not XMP</title></svg>')).toBe('not-xmp')
    expect(problemOf('<x:xmpmeta xmlns:x="adobe:ns:meta/"><RDF/></x:xmpmeta>')).toBe('not-xmp')
    expect(problemOf('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://example.com/not-rdf#"/></x:xmpmeta>')).toBe('not-xmp')
  })

  it('throws nothing but XmpError, whatever a sidecar is cut to', () => {
    const text = sidecar(
      { 'exif:DateTimeOriginal': '2019-07-04T12:34:56+02:00', 'exif:GPSLatitude': '48,51.396N', 'exif:GPSLongitude': '2,21.05E' },
      '<dc:description><rdf:Alt><rdf:li xml:lang="x-default">Caf&#233; &amp; <![CDATA[x]]></rdf:li></rdf:Alt></dc:description><!-- c -->',
    )
    const rootEnd = text.indexOf('</x:xmpmeta>') + '</x:xmpmeta>'.length
    const problems = new Map<string, number[]>()
    for (let end = 0; end <= text.length; end++) {
      const problem = `${end < rootEnd ? 'cut inside' : 'cut after'} the root: ${problemOf(text.slice(0, end))}`
      problems.set(problem, [...(problems.get(problem) ?? []), end])
    }
    // after the root, a cut inside the closing <?xpacket end="w"?> leaves it unclosed
    expect([...problems.keys()].sort()).toEqual(['cut after the root: malformed', 'cut after the root: none', 'cut inside the root: malformed'])
    expect(problems.get('cut inside the root: malformed')?.length).toBe(rootEnd)
    expect(problems.get('cut after the root: none')).toContain(text.length)
  })

  it('reads a 1 MiB sidecar of tens of thousands of properties in linear time', () => {
    const properties = Array.from({ length: 52_000 }, (_, i) => `a:p${i}="${i}"`).join(' ')
    const flat = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="${RDF}"><rdf:Description xmlns:a="urn:a" xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:DateTimeOriginal="2019-07-04T12:34:56" ${properties}/>${'<a:b/>'.repeat(10_000)}</rdf:RDF></x:xmpmeta>`
    expect(flat.length).toBeGreaterThan(900_000)
    expect(flat.length).toBeLessThanOrEqual(XMP_MAX_LENGTH)
    const started = performance.now()
    expect(parseXmpSidecar(flat).takenAt).toBe(Date.UTC(2019, 6, 4, 12, 34, 56))
    // exifr's regular expressions take time growing with the square of a file with unclosed tags (8 s at 400 KB)
    const unclosed = wrap(`<rdf:Description>${'<a:b a:c="1"/><a:b>'.repeat(30)}${'<a:b a:c="1"/>'.repeat(70_000)}`).slice(0, XMP_MAX_LENGTH)
    expect(problemOf(unclosed)).toBe('malformed')
    expect(performance.now() - started).toBeLessThan(5000)
  })
})

describe('bytes', () => {
  const text = sidecar(
    { 'exif:DateTimeOriginal': '2019-07-04T12:34:56' },
    '<dc:description><rdf:Alt><rdf:li xml:lang="x-default">Zürich</rdf:li></rdf:Alt></dc:description>',
  )

  it('reads UTF-8, with or without a byte-order mark, and UTF-16 with one', () => {
    const utf8 = new TextEncoder().encode(text)
    expect(parseXmpSidecar(utf8).description).toBe('Zürich')
    expect(parseXmpSidecar(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8])).description).toBe('Zürich')
    const utf16le = new Uint8Array(2 + text.length * 2)
    const utf16be = new Uint8Array(2 + text.length * 2)
    utf16le.set([0xff, 0xfe])
    utf16be.set([0xfe, 0xff])
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i)
      utf16le.set([code & 0xff, code >> 8], 2 + i * 2)
      utf16be.set([code >> 8, code & 0xff], 2 + i * 2)
    }
    expect(parseXmpSidecar(utf16le)).toMatchObject({ takenAt: Date.UTC(2019, 6, 4, 12, 34, 56), description: 'Zürich' })
    expect(parseXmpSidecar(utf16be)).toMatchObject({ takenAt: Date.UTC(2019, 6, 4, 12, 34, 56), description: 'Zürich' })
  })

  it('refuses bytes that are not UTF-8 as malformed', () => {
    const latin1 = Uint8Array.from(text.replace('ü', '\u00fc'), (c) => c.charCodeAt(0) & 0xff)
    expect(problemOf(latin1)).toBe('malformed')
  })
})

describe('which sidecar a photo takes', () => {
  const folder = (...names: string[]) => new Set(names)

  it("prefers the photo's whole name with .xmp (darktable, digiKam, Immich) to its stem with .xmp (Lightroom, Capture One)", () => {
    expect(xmpSidecarFor('IMG_1.jpg', folder('IMG_1.jpg', 'IMG_1.xmp', 'IMG_1.jpg.xmp'))).toBe('IMG_1.jpg.xmp')
    expect(xmpSidecarFor('IMG_1.jpg', folder('IMG_1.jpg', 'IMG_1.xmp'))).toBe('IMG_1.xmp')
    expect(xmpSidecarFor('IMG_1.jpg', folder('IMG_1.jpg', 'IMG_2.xmp', 'IMG_10.xmp', 'IMG_1.jpg.xmp.bak', 'IMG_1.jpeg.xmp'))).toBeNull()
    expect(xmpSidecarFor('IMG_1.jpg', folder())).toBeNull()
  })

  it('matches .xmp in any case, lower case first, the rest of the name exactly', () => {
    expect(xmpSidecarFor('IMG_1.JPG', folder('IMG_1.JPG.XMP'))).toBe('IMG_1.JPG.XMP')
    expect(xmpSidecarFor('IMG_1.JPG', folder('IMG_1.XMP'))).toBe('IMG_1.XMP')
    expect(xmpSidecarFor('IMG_1.JPG', folder('IMG_1.Xmp'))).toBe('IMG_1.Xmp')
    expect(xmpSidecarFor('IMG_1.JPG', folder('IMG_1.JPG.XMP', 'IMG_1.JPG.xmp'))).toBe('IMG_1.JPG.xmp')
    expect(xmpSidecarFor('IMG_1.JPG', folder('IMG_1.XMP', 'IMG_1.Xmp', 'IMG_1.xMP'))).toBe('IMG_1.XMP')
    // the whole name in any case of .xmp before the stem
    expect(xmpSidecarFor('IMG_1.JPG', folder('IMG_1.xmp', 'IMG_1.JPG.XMP'))).toBe('IMG_1.JPG.XMP')
    // the photo's own name is not matched loosely
    expect(xmpSidecarFor('IMG_1.JPG', folder('IMG_1.jpg.xmp', 'img_1.xmp'))).toBeNull()
  })

  it('gives the stem sidecar to every photo of that stem without a sidecar of its own (RAW and JPEG of one shot)', () => {
    const names = folder('IMG_1.jpg', 'IMG_1.CR2', 'IMG_1.MOV', 'IMG_1.xmp')
    expect(xmpSidecarFor('IMG_1.jpg', names)).toBe('IMG_1.xmp')
    expect(xmpSidecarFor('IMG_1.CR2', names)).toBe('IMG_1.xmp')
    expect(xmpSidecarFor('IMG_1.MOV', names)).toBe('IMG_1.xmp')
    const withOwn = folder('IMG_1.jpg', 'IMG_1.CR2', 'IMG_1.CR2.xmp', 'IMG_1.xmp')
    expect(xmpSidecarFor('IMG_1.CR2', withOwn)).toBe('IMG_1.CR2.xmp')
    expect(xmpSidecarFor('IMG_1.jpg', withOwn)).toBe('IMG_1.xmp')
  })

  it("leaves darktable's duplicate sidecars (IMG_1_01.CR2.xmp, no file of their own) to no photo", () => {
    const names = folder('IMG_1.CR2', 'IMG_1.CR2.xmp', 'IMG_1_01.CR2.xmp', 'IMG_1_02.CR2.xmp')
    expect(xmpSidecarFor('IMG_1.CR2', names)).toBe('IMG_1.CR2.xmp')
    expect(xmpSidecarFor('IMG_1_01.CR2', names)).toBe('IMG_1_01.CR2.xmp') // only if such a file were listed
  })

  it('takes the name of a path, strips the last extension only, and handles names without one', () => {
    expect(xmpSidecarFor('Trips/2019/IMG_1.jpg', folder('IMG_1.xmp'))).toBe('IMG_1.xmp')
    expect(xmpSidecarFor('Trips/2019/IMG_1.jpg', folder('Trips/2019/IMG_1.xmp'))).toBeNull()
    expect(xmpSidecarFor('trip.day1.jpg', folder('trip.xmp', 'trip.day1.xmp'))).toBe('trip.day1.xmp')
    expect(xmpSidecarFor('trip.day1.jpg', folder('trip.xmp'))).toBeNull()
    expect(xmpSidecarFor('SCAN_0001', folder('SCAN_0001.xmp'))).toBe('SCAN_0001.xmp')
    expect(xmpSidecarFor('.hidden', folder('.hidden.xmp', '.xmp'))).toBe('.hidden.xmp')
    expect(xmpSidecarFor('Trips/', folder('.xmp'))).toBeNull()
  })

  it('finds a sidecar whose accented name is spelled in the other normal form, and returns it as spelled', () => {
    const nfd = 'Cafe\u0301.jpg.xmp'
    expect(xmpSidecarFor('Caf\u00e9.jpg', folder(nfd))).toBe(nfd)
    expect(xmpSidecarFor('Cafe\u0301.jpg', folder('Caf\u00e9.xmp'))).toBe('Caf\u00e9.xmp')
  })
})
