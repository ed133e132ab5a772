// XMP sidecars for `coffer-photos import folder` (issue 42: "honours XMP sidecars (`photo.jpg.xmp`,
// `photo.xmp`) for date and place"; docs/decisions/0071-takeout-import.md, "XMP sidecars"): which
// sidecar a photo or video takes among the names of its folder, and what a sidecar says of the
// date taken, the place, the description and the rating. Names and text only: the caller lists the
// folder and reads the file, so the web app runs it too.
//
// XMP is RDF written in XML (Adobe's XMP Specification Part 1, ISO 16684-1: section 7 for the RDF
// forms, 8.2.1.1 for Date; Part 2 for the EXIF properties and GPSCoordinate). The tools that write
// sidecars, as read for these rules (read, never copied):
// - darktable (src/common/exif.cc, src/common/datetime.c): attributes on rdf:Description,
//   exif:DateTimeOriginal in EXIF's own form with milliseconds ("2019:07:04 12:34:56.250", no
//   offset), GPS as "DDD,MM.mmmmmmK", the sidecar named `IMG_1.CR2.xmp` (and `IMG_1_01.CR2.xmp`
//   for a duplicate that has no file of its own).
// - Immich (server/src/services/metadata.service.ts and cli/src/commands/asset.ts, pull requests
//   7813 and 8186, docs/docs/features/xmp-sidecars.md): `photo.ext.xmp` before `photo.xmp`, each
//   photo of a stem looking for `photo.xmp` on its own; its sidecars are written by ExifTool
//   (element form, one rdf:Description per namespace).
// - immich-go (adapters/folder/readFolder.go checkExistSideCar, internal/exif/sidecars/xmpsidecar):
//   the same two names, the `.xmp` extension in any case, the rest of the name exact.
// - Apple Photos, as osxphotos issue 175 and PhotoPrism issues 636 and 1151 show its sidecars:
//   photoshop:DateCreated with an offset, decimal GPS with exif:GPSLatitudeRef/GPSLongitudeRef.
//
// The XML reader is ours, small and bounded, not exifr's: exifr 7.1.3 (src/segment-parsers/xmp.mjs)
// matches XMP with regular expressions, keys properties by prefix rather than namespace, leaves
// character and entity references undecoded ("Caf&#233;"), turns number-like text into numbers
// ("2019" becomes 2019), takes time quadratic in the size of a file with unclosed tags (8 s for
// 400 KB), and may not be imported by the client core (test/architecture/imports.test.ts).
import type { GeoLocation } from './format/metadata.ts'
import { MAX_OFFSET_MINUTES, realUtc } from './taken.ts'
import { ProblemError } from './problem-error.ts'

// ---------------------------------------------------------------------------------------------
// Which sidecar

/** The name as it is, in NFC and in NFD: a sidecar written on another system may spell an accented name the other way. */
const spellings = (name: string): string[] => [...new Set([name, name.normalize('NFC'), name.normalize('NFD')])]

/** `.xmp` in every case, lower case first, then upper case, then the mixed ones. */
const XMP_EXTENSIONS: readonly string[] = (() => {
  const all: string[] = []
  for (let mask = 0; mask < 8; mask++) all.push(`.${[...'xmp'].map((letter, i) => (mask & (1 << i) ? letter.toUpperCase() : letter)).join('')}`)
  return [all[0]!, all[7]!, ...all.slice(1, 7)]
})()

/**
 * The sidecar `photoPath` takes among `siblings`, the names in its folder (names, not paths), or
 * null: the photo's whole name with `.xmp` (`IMG_1.jpg.xmp`: darktable, digiKam, Immich, ExifTool)
 * before its name without the extension with `.xmp` (`IMG_1.xmp`: Lightroom, Capture One, Apple
 * Photos). `.xmp` in any case (`.XMP` too), the rest of the name exactly as the photo's (in NFC or
 * NFD either way); where several spellings are listed, lower-case `.xmp` first. The name without
 * the extension is shared: `IMG_1.jpg` and `IMG_1.CR2` (one shot, RAW and JPEG) both take
 * `IMG_1.xmp`, unless one has a sidecar of its whole name. Returns the sibling as spelled in the set.
 * Constant time in the size of the folder: a few lookups of the set.
 */
export function xmpSidecarFor(photoPath: string, siblings: ReadonlySet<string>): string | null {
  const name = photoPath.slice(photoPath.lastIndexOf('/') + 1)
  if (name === '') return null
  const dot = name.lastIndexOf('.')
  const bases = dot > 0 ? [name, name.slice(0, dot)] : [name]
  for (const base of bases) {
    for (const extension of XMP_EXTENSIONS) {
      for (const spelling of spellings(`${base}${extension}`)) if (siblings.has(spelling)) return spelling
    }
  }
  return null
}

// ---------------------------------------------------------------------------------------------
// What a sidecar says

/** A sidecar longer than this is refused (UTF-16 code units for text, bytes for bytes): sidecars are a few KB, a Lightroom one with its develop history some tens. */
export const XMP_MAX_LENGTH = 1_048_576
/** Elements nested deeper than this are refused (a date is at depth 3 or 4, a description's text at 6; darktable's masks and face regions reach about 10). */
export const XMP_MAX_DEPTH = 64

export type XmpProblem = 'too-large' | 'too-deep' | 'doctype' | 'malformed' | 'not-xmp'

/** A sidecar that is not read, and why: the one error parseXmpSidecar throws. */
export class XmpError extends ProblemError<XmpProblem> {}

/** The properties a date taken is read from, in order (named with their usual prefixes; matched by namespace). */
export const XMP_DATE_TAGS = ['exif:DateTimeOriginal', 'photoshop:DateCreated', 'xmp:CreateDate', 'exif:DateTimeDigitized'] as const
export type XmpDateTag = (typeof XMP_DATE_TAGS)[number]

/** How much of a date taken the sidecar states: a day alone, a time to the minute, or to the second (fractions included). */
export type XmpDatePrecision = 'day' | 'minute' | 'second'

/** What a sidecar says that Coffer can keep. */
export interface XmpFacts {
  /**
   * Milliseconds since the Unix epoch: the moment, when the date states an offset; otherwise the
   * wall clock read as if it were UTC (a floating time, as taken.ts has them). A date alone is
   * that day's midnight, floating. Null when no date property holds a date.
   */
  readonly takenAt: number | null
  /** Minutes east of UTC of the wall clock (`Z` is 0), -1080..1080; null when the date states none (floating) or there is no date. */
  readonly offset: number | null
  /** The property the date was read from, or null. */
  readonly dateTag: XmpDateTag | null
  readonly precision: XmpDatePrecision | null
  /** exif:GPSLatitude and exif:GPSLongitude in WGS84 degrees; null when either is missing or unreadable, at 0,0, or off the globe. */
  readonly location: GeoLocation | null
  /** dc:description: its x-default language, else its first non-empty one; trimmed; null when empty. */
  readonly description: string | null
  /** xmp:Rating as written, -1 (rejected) to 5; 0 is "no rating". Null when absent or out of range. */
  readonly rating: number | null
}

const NS_RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#'
const NS_XML = 'http://www.w3.org/XML/1998/namespace'
const NS_EXIF = 'http://ns.adobe.com/exif/1.0/'
const NS_XMP = 'http://ns.adobe.com/xap/1.0/'
const NS_PHOTOSHOP = 'http://ns.adobe.com/photoshop/1.0/'
const NS_DC = 'http://purl.org/dc/elements/1.1/'

/** A prefix used without its declaration (hand-written sidecars) reads as its usual namespace when it is one of these; any other undeclared prefix names nothing. */
const USUAL_PREFIXES: ReadonlyMap<string, string> = new Map([
  ['x', 'adobe:ns:meta/'],
  ['rdf', NS_RDF],
  ['exif', NS_EXIF],
  ['xmp', NS_XMP],
  ['xap', NS_XMP],
  ['photoshop', NS_PHOTOSHOP],
  ['dc', NS_DC],
])

const DATE_NAMESPACES: Readonly<Record<XmpDateTag, readonly [string, string]>> = {
  'exif:DateTimeOriginal': [NS_EXIF, 'DateTimeOriginal'],
  'photoshop:DateCreated': [NS_PHOTOSHOP, 'DateCreated'],
  'xmp:CreateDate': [NS_XMP, 'CreateDate'],
  'exif:DateTimeDigitized': [NS_EXIF, 'DateTimeDigitized'],
}

/**
 * A sidecar's date taken, place, description and rating. `input` is the file's text, or its bytes
 * (UTF-8, or UTF-16 with its byte-order mark). Refused with XmpError, and nothing else, when longer
 * than XMP_MAX_LENGTH (`too-large`), nested deeper than XMP_MAX_DEPTH (`too-deep`), holding a
 * DOCTYPE or an entity declaration (`doctype`: entities are never expanded), not well-formed XML or
 * referring to an entity other than XML's five and character references (`malformed`), or XML
 * without rdf:RDF (`not-xmp`). A property that cannot be read reads as absent.
 */
export function parseXmpSidecar(input: string | Uint8Array): XmpFacts {
  const root = parseXml(textOf(input))
  const rdf = find(root, (element) => isRdf(element, 'RDF'))
  if (rdf === null) throw new XmpError('not-xmp', 'sidecar: XML without rdf:RDF, not XMP')
  const properties = propertiesOf(rdf)
  return { ...dateOf(properties), location: locationOf(properties), description: descriptionOf(properties), rating: ratingOf(properties) }
}

function textOf(input: string | Uint8Array): string {
  if (typeof input === 'string') {
    if (input.length > XMP_MAX_LENGTH) throw new XmpError('too-large', `sidecar: longer than ${XMP_MAX_LENGTH} characters`)
    return input.startsWith('\uFEFF') ? input.slice(1) : input
  }
  if (!(input instanceof Uint8Array)) throw new XmpError('malformed', 'sidecar: neither text nor bytes')
  if (input.length > XMP_MAX_LENGTH) throw new XmpError('too-large', `sidecar: larger than ${XMP_MAX_LENGTH} bytes`)
  const encoding = input[0] === 0xfe && input[1] === 0xff ? 'utf-16be' : input[0] === 0xff && input[1] === 0xfe ? 'utf-16le' : 'utf-8'
  try {
    return new TextDecoder(encoding, { fatal: true }).decode(input)
  } catch {
    throw new XmpError('malformed', `sidecar: not ${encoding.toUpperCase()} text`)
  }
}

// ---------------------------------------------------------------------------------------------
// Dates (XMP Part 1, 8.2.1.1: YYYY, YYYY-MM, YYYY-MM-DD, then Thh:mm, :ss, .s+, each with Z or ±hh:mm)

interface ParsedDate {
  /** The wall clock as if UTC, with its fraction of a second. */
  readonly wallClock: number
  readonly offset: number | null
  readonly precision: XmpDatePrecision
}

/**
 * An XMP date (or EXIF's "YYYY:MM:DD hh:mm:ss", which darktable writes), or null: not a date, not a
 * real one (30 February, 24:00, 0000:00:00), an offset past ±18:00, or only a year or a month,
 * too vague for a date taken (a timeline would place it on the 1st of January). Offsets: `Z`,
 * `±hh:mm`, `±hhmm`, `±hh`; a date without a time has none.
 */
function parseDate(value: string | null): ParsedDate | null {
  if (value === null) return null
  const parts = /^(\d{4})([-:])(\d{2})\2(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/.exec(value.trim())
  if (parts === null) return null
  const [, year, , month, day, hours, minutes, seconds, fraction, zone] = parts
  const wallClock = realUtc(Number(year), Number(month), Number(day), Number(hours ?? 0), Number(minutes ?? 0), Number(seconds ?? 0))
  if (wallClock === null) return null
  let offset: number | null = null
  if (zone === 'Z') offset = 0
  else if (zone !== undefined) {
    const digits = zone.slice(1).replace(':', '')
    const zoneMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0)
    if (Number(digits.slice(2) || 0) > 59 || zoneMinutes > MAX_OFFSET_MINUTES) return null
    offset = (zone.startsWith('-') ? -zoneMinutes : zoneMinutes) || 0
  }
  const milliseconds = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'))
  const precision: XmpDatePrecision = hours === undefined ? 'day' : seconds === undefined ? 'minute' : 'second'
  return { wallClock: wallClock + milliseconds, offset, precision }
}

/** The wall clock cut to a precision, to compare two dates written to different ones. */
const cut = (wallClock: number, precision: XmpDatePrecision): number => wallClock - (wallClock % (precision === 'minute' ? 60_000 : 1000))

/**
 * The first date property that holds a date (XMP_DATE_TAGS' order: a malformed one is skipped).
 * A time stated without an offset takes the offset of another date property of the sidecar that
 * states the same wall clock (to the coarser of their precisions) with one: Lightroom and digiKam
 * write the same time to several properties, not always with its offset. xmp:ModifyDate,
 * xmp:MetadataDate and tiff:DateTime are never read: they date edits, not the photo.
 */
function dateOf(properties: Properties): Pick<XmpFacts, 'takenAt' | 'offset' | 'dateTag' | 'precision'> {
  const dates = XMP_DATE_TAGS.map((tag) => [tag, parseDate(simpleValue(properties.get(key(...DATE_NAMESPACES[tag]))))] as const)
  const first = dates.find(([, date]) => date !== null)
  if (first === undefined || first[1] === null) return { takenAt: null, offset: null, dateTag: null, precision: null }
  const [tag, date] = first
  let offset = date.offset
  if (offset === null && date.precision !== 'day') {
    for (const [, other] of dates) {
      if (other === null || other.offset === null || other.precision === 'day') continue
      const coarser = date.precision === 'minute' || other.precision === 'minute' ? 'minute' : 'second'
      if (cut(other.wallClock, coarser) === cut(date.wallClock, coarser)) {
        offset = other.offset
        break
      }
    }
  }
  return { takenAt: date.wallClock - (offset ?? 0) * 60_000, offset, dateTag: tag, precision: date.precision }
}

// ---------------------------------------------------------------------------------------------
// Place (XMP Part 2, GPSCoordinate: "DDD,MM,SSk" or "DDD,MM.mmk"; decimal degrees as some tools write them)

/**
 * One coordinate in degrees, or null: "DDD,MM.mmK" or "DDD,MM,SSK" (the standard forms; K is
 * N or S for a latitude, E or W for a longitude, in either case), or decimal degrees ("48.8566",
 * "-33.8688", "48.8566N"); an unsigned decimal without a letter takes its hemisphere from `ref`
 * (exif:GPSLatitudeRef/GPSLongitudeRef, as Apple Photos writes them), and a negative one must not
 * contradict it. Minutes and seconds under 60.
 */
function coordinate(value: string | null, ref: string | null, positive: 'N' | 'E', negative: 'S' | 'W'): number | null {
  if (value === null) return null
  const text = value.trim().toUpperCase()
  let degrees: number
  let letter: string | undefined
  const sexagesimal = /^(\d{1,3})\s*,\s*(\d{1,2}(?:\.\d+)?)(?:\s*,\s*(\d{1,2}(?:\.\d+)?))?\s*([NSEW])$/.exec(text)
  if (sexagesimal !== null) {
    const [, whole, minutes, seconds, direction] = sexagesimal
    if (Number(minutes) >= 60 || (seconds !== undefined && (Number(seconds) >= 60 || !Number.isInteger(Number(minutes))))) return null
    degrees = Number(whole) + Number(minutes) / 60 + Number(seconds ?? 0) / 3600
    letter = direction
  } else {
    const decimal = /^([+-]?\d{1,3}(?:\.\d+)?)\s*([NSEW])?$/.exec(text)
    if (decimal === null) return null
    degrees = Number(decimal[1])
    letter = decimal[2]
    if (letter !== undefined && degrees < 0) return null
    if (letter === undefined && ref !== null) {
      const stated = ref.trim().toUpperCase()
      if (stated !== positive && stated !== negative) return null
      if (degrees < 0 && stated === positive) return null
      if (stated === negative) degrees = -Math.abs(degrees)
    }
  }
  if (letter !== undefined) {
    if (letter !== positive && letter !== negative) return null
    if (letter === negative) degrees = -degrees
  }
  return degrees || 0
}

function locationOf(properties: Properties): GeoLocation | null {
  const text = (name: string) => simpleValue(properties.get(key(NS_EXIF, name)))
  const latitude = coordinate(text('GPSLatitude'), text('GPSLatitudeRef'), 'N', 'S')
  const longitude = coordinate(text('GPSLongitude'), text('GPSLongitudeRef'), 'E', 'W')
  if (latitude === null || longitude === null) return null
  if ((latitude === 0 && longitude === 0) || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null
  return { latitude, longitude }
}

// ---------------------------------------------------------------------------------------------
// Description and rating

function descriptionOf(properties: Properties): string | null {
  const property = properties.get(key(NS_DC, 'description'))
  if (property === undefined) return null
  if (typeof property === 'string') return property.trim() || null
  if (property.children.length === 0) return nonEmpty(property)
  const container = property.children.find((child) => isRdf(child, 'Alt') || isRdf(child, 'Seq') || isRdf(child, 'Bag'))
  const items = (container?.children ?? []).filter((child) => isRdf(child, 'li'))
  const isDefault = (item: XmlElement) => item.attributes.some((a) => a.uri === NS_XML && a.local === 'lang' && a.value.trim().toLowerCase() === 'x-default')
  for (const item of [...items.filter(isDefault), ...items]) {
    const text = item.children.length === 0 ? nonEmpty(item) : null
    if (text !== null) return text
  }
  return null
}

function ratingOf(properties: Properties): number | null {
  const value = simpleValue(properties.get(key(NS_XMP, 'Rating')))?.trim() ?? ''
  if (!/^[+-]?\d{1,2}(?:\.\d+)?$/.test(value)) return null
  const rating = Number(value)
  return rating >= -1 && rating <= 5 ? rating || 0 : null
}

// ---------------------------------------------------------------------------------------------
// RDF (XMP Part 1, section 7): the top-level properties of every rdf:Description

/** A property: an attribute's value, or the element that holds it. */
type Property = string | XmlElement
type Properties = ReadonlyMap<string, Property>

const key = (uri: string, local: string): string => `${uri}\u0000${local}`

const isRdf = (element: XmlElement, local: string): boolean => element.uri === NS_RDF && element.local === local

/** The first element, in document order, that `test` accepts (depth bounded by the parser). */
function find(element: XmlElement, test: (element: XmlElement) => boolean): XmlElement | null {
  if (test(element)) return element
  for (const child of element.children) {
    const found = find(child, test)
    if (found !== null) return found
  }
  return null
}

/** The properties of rdf:RDF's rdf:Description elements, by namespace and name; the first of a name wins. */
function propertiesOf(rdf: XmlElement): Properties {
  const properties = new Map<string, Property>()
  for (const description of rdf.children.filter((child) => isRdf(child, 'Description'))) {
    for (const attribute of description.attributes) {
      if (attribute.uri === null || attribute.uri === NS_RDF || attribute.uri === NS_XML) continue
      const name = key(attribute.uri, attribute.local)
      if (!properties.has(name)) properties.set(name, attribute.value)
    }
    for (const child of description.children) {
      if (child.uri === null) continue
      const name = key(child.uri, child.local)
      if (!properties.has(name)) properties.set(name, child)
    }
  }
  return properties
}

/** A simple property's text: an attribute's value, or an element's text when it holds no element and is no resource or struct. */
function simpleValue(property: Property | undefined): string | null {
  if (property === undefined) return null
  if (typeof property === 'string') return property
  if (property.children.length > 0 || property.attributes.some((a) => a.uri === NS_RDF)) return null
  return property.text
}

const nonEmpty = (element: XmlElement): string | null => element.text.trim() || null

// ---------------------------------------------------------------------------------------------
// XML: a bounded, non-validating reader of the XML that XMP uses. Namespaces resolved; comments,
// processing instructions (<?xpacket?>) and CDATA read; the five predefined entities and
// character references decoded; a DOCTYPE refused, so no entity is ever declared or expanded.
// One pass, no backtracking: linear in the text.

interface XmlAttribute {
  readonly uri: string | null
  readonly local: string
  readonly value: string
}

interface XmlElement {
  readonly uri: string | null
  readonly local: string
  readonly attributes: readonly XmlAttribute[]
  readonly children: XmlElement[]
  /** The character data directly inside it, decoded (set when the element closes). */
  text: string
}

interface Frame {
  readonly element: XmlElement
  readonly name: string
  /** This element's namespace declarations (prefix, "" for the default), or null. */
  readonly declared: ReadonlyMap<string, string> | null
  readonly text: string[]
}

const malformed = (why: string): XmpError => new XmpError('malformed', `sidecar: not well-formed XML: ${why}`)

/** An XML name, with at most one colon. Its classes exclude the colon, so matching stays linear. */
const NAME = /[^\s<>/="'&!?;:]+(?::[^\s<>/="'&!?;:]+)?/y

const PREDEFINED: ReadonlyMap<string, string> = new Map([
  ['lt', '<'],
  ['gt', '>'],
  ['amp', '&'],
  ['quot', '"'],
  ['apos', "'"],
])

/** Text with its references decoded: XML's five entities and character references; any other is refused (no DTD declares one). */
function decode(raw: string): string {
  let amp = raw.indexOf('&')
  if (amp === -1) return raw
  let out = ''
  let from = 0
  while (amp !== -1) {
    const semicolon = raw.indexOf(';', amp + 1)
    if (semicolon === -1 || semicolon - amp > 12) throw malformed('an "&" that starts no reference')
    const name = raw.slice(amp + 1, semicolon)
    let decoded = PREDEFINED.get(name)
    if (decoded === undefined) {
      const reference = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(name)
      if (reference === null) throw malformed(`a reference to an undeclared entity &${name};`)
      const code = reference[1] !== undefined ? Number.parseInt(reference[1], 16) : Number(reference[2])
      const allowed =
        code === 0x9 ||
        code === 0xa ||
        code === 0xd ||
        (code >= 0x20 && code <= 0xd7ff) ||
        (code >= 0xe000 && code <= 0xfffd) ||
        (code >= 0x10000 && code <= 0x10ffff)
      if (!allowed) throw malformed(`a reference to a character XML does not allow (&${name};)`)
      decoded = String.fromCodePoint(code)
    }
    out += raw.slice(from, amp) + decoded
    from = semicolon + 1
    amp = raw.indexOf('&', from)
  }
  return out + raw.slice(from)
}

function parseXml(source: string): XmlElement {
  const text = source.replace(/\r\n?/g, '\n')
  const frames: Frame[] = []
  let root: XmlElement | null = null
  let at = 0

  const skipSpace = (from: number): number => {
    let i = from
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n')) i++
    return i
  }
  const closing = (marker: string, from: number, what: string): number => {
    const found = text.indexOf(marker, from)
    if (found === -1) throw malformed(`${what} not closed`)
    return found
  }
  const nameAt = (from: number): string => {
    NAME.lastIndex = from
    const found = NAME.exec(text)
    if (found === null) throw malformed(`no name at character ${from}`)
    return found[0]
  }
  const namespaceOf = (prefix: string, own: ReadonlyMap<string, string> | null): string | null => {
    if (prefix === 'xml') return NS_XML
    for (let depth = frames.length; depth >= 0; depth--) {
      const uri = (depth === frames.length ? own : frames[depth]!.declared)?.get(prefix)
      if (uri !== undefined) return uri === '' ? null : uri
    }
    return prefix === '' ? null : (USUAL_PREFIXES.get(prefix) ?? null)
  }
  const split = (name: string): [string, string] => {
    const colon = name.indexOf(':')
    return colon === -1 ? ['', name] : [name.slice(0, colon), name.slice(colon + 1)]
  }

  while (at < text.length) {
    const open = text.indexOf('<', at)
    const stop = open === -1 ? text.length : open
    if (stop > at) {
      const characters = text.slice(at, stop)
      const top = frames.at(-1)
      if (top !== undefined) top.text.push(decode(characters))
      else if (characters.trim() !== '') throw malformed('text outside the root element')
    }
    if (open === -1) break

    if (text.startsWith('<!--', open)) at = closing('-->', open + 4, 'a comment') + 3
    else if (text.startsWith('<![CDATA[', open)) {
      const end = closing(']]>', open + 9, 'a CDATA section')
      const top = frames.at(-1)
      if (top === undefined) throw malformed('a CDATA section outside the root element')
      top.text.push(text.slice(open + 9, end))
      at = end + 3
    } else if (text.startsWith('<!', open)) {
      if (/^<!(DOCTYPE|ENTITY)/i.test(text.slice(open, open + 9)))
        throw new XmpError('doctype', 'sidecar: a DOCTYPE or entity declaration, refused (entities are never expanded)')
      throw malformed(`"<!" at character ${open}`)
    } else if (text.startsWith('<?', open)) at = closing('?>', open + 2, 'a processing instruction') + 2
    else if (text.startsWith('</', open)) {
      const name = nameAt(open + 2)
      const end = skipSpace(open + 2 + name.length)
      if (text[end] !== '>') throw malformed(`the end tag </${name} not closed`)
      const frame = frames.pop()
      if (frame === undefined || frame.name !== name) throw malformed(`</${name}> closes ${frame === undefined ? 'nothing' : `<${frame.name}>`}`)
      frame.element.text = frame.text.join('')
      at = end + 1
    } else {
      const name = nameAt(open + 1)
      let i = open + 1 + name.length
      const raw: [string, string][] = []
      const seen = new Set<string>()
      let selfClosing = false
      for (;;) {
        const next = skipSpace(i)
        if (text.startsWith('/>', next)) {
          selfClosing = true
          i = next + 2
          break
        }
        if (text[next] === '>') {
          i = next + 1
          break
        }
        if (next === i) throw malformed(`the start tag <${name} not closed`)
        const attribute = nameAt(next)
        let j = skipSpace(next + attribute.length)
        if (text[j] !== '=') throw malformed(`the attribute ${attribute} of <${name}> has no value`)
        j = skipSpace(j + 1)
        const quote = text[j]
        if (quote !== '"' && quote !== "'") throw malformed(`the value of ${attribute} of <${name}> is not quoted`)
        const end = closing(quote, j + 1, `the value of ${attribute}`)
        const value = text.slice(j + 1, end)
        if (value.includes('<')) throw malformed(`a "<" in the value of ${attribute}`)
        if (seen.has(attribute)) throw malformed(`<${name}> has ${attribute} twice`)
        seen.add(attribute)
        raw.push([attribute, decode(value.replace(/[\t\n]/g, ' '))])
        i = end + 1
      }
      if (frames.length >= XMP_MAX_DEPTH) throw new XmpError('too-deep', `sidecar: elements nested deeper than ${XMP_MAX_DEPTH}`)
      if (frames.length === 0 && root !== null) throw malformed('a second root element')
      let declared: Map<string, string> | null = null
      for (const [attribute, value] of raw) {
        if (attribute === 'xmlns' || attribute.startsWith('xmlns:')) {
          declared ??= new Map()
          declared.set(attribute === 'xmlns' ? '' : attribute.slice(6), value)
        }
      }
      const attributes: XmlAttribute[] = []
      for (const [attribute, value] of raw) {
        if (attribute === 'xmlns' || attribute.startsWith('xmlns:')) continue
        const [prefix, local] = split(attribute)
        attributes.push({ uri: prefix === '' ? null : namespaceOf(prefix, declared), local, value })
      }
      const [prefix, local] = split(name)
      const element: XmlElement = { uri: namespaceOf(prefix, declared), local, attributes, children: [], text: '' }
      const parent = frames.at(-1)
      if (parent === undefined) root = element
      else parent.element.children.push(element)
      if (!selfClosing) frames.push({ element, name, declared, text: [] })
      at = i
    }
  }
  if (frames.length > 0) throw malformed(`<${frames.at(-1)!.name}> not closed`)
  if (root === null) throw malformed('no element')
  return root
}
