// Place names for a photo's GPS position, offline (decision 0070): the nearest sizeable town and
// its country, read from a table of GeoNames' populated places shipped with the library
// (places-data.ts: 24,600 places, those of at least 15,000 people, every capital and every seat
// of a state or region; 510 KB, 280 KB gzipped). Nothing is asked of any server: where a photo
// was taken never leaves the device. The table is a module of its own, loaded by loadPlaces the
// first time a name is asked for, so it costs nothing (not a byte in the web app's first
// screens) until search is used.
// Browser-safe.
import type { GeoLocation } from './format/metadata.ts'

/** What a position is called: the town it was taken in or near, its region, its country. */
export interface Place {
  /** The town within CITY_KM (the one a person would name: a large one outweighs a nearer small one), or null. */
  readonly city: string | null
  /** The first-order division (state, region, province) of that town, or of the nearest place; null when the table does not know it. */
  readonly region: string | null
  /** The country's English name ("France"). */
  readonly country: string
  /** ISO 3166-1 alpha-2 ("FR"). */
  readonly countryCode: string
}

/** A position's place, or null where no place of the table is within NEAR_KM (the open sea, the poles, a desert's heart). */
export type PlaceLookup = (point: GeoLocation) => Place | null

/** A town is named when it is at most this far: about a city's reach, suburbs included. */
export const CITY_KM = 25
/** Past CITY_KM, the region and country of the nearest place still name a position up to this far (a national park, a coast seen from a boat); beyond it, nothing. */
export const NEAR_KM = 150

const EARTH_KM = 6371.0088
const KM_PER_DEGREE = (Math.PI * EARTH_KM) / 180
const RANKS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** The decoded table: one index per place into parallel arrays, and a grid of one-degree cells. */
export interface PlaceTable {
  readonly latitude: Float64Array
  readonly longitude: Float64Array
  /** Population, as 10^(rank / 5). */
  readonly population: Float64Array
  readonly country: Uint16Array
  /** Index into `divisions`, -1 when unknown. */
  readonly division: Int32Array
  readonly names: readonly string[]
  readonly countries: readonly string[]
  readonly divisions: readonly string[]
  /** Places by cell: (floor(latitude) + 90) * 360 + floor(longitude) + 180. */
  readonly cells: ReadonlyMap<number, readonly number[]>
}

const cellOf = (latitude: number, longitude: number): number => (Math.floor(latitude) + 90) * 360 + (((Math.floor(longitude) % 360) + 540) % 360)

/** Decodes places-data.ts's text (its format: test/support/places-data.ts); throws on anything else. */
export function decodePlaces(text: string): PlaceTable {
  const lines = text.split('\n')
  if (!/^coffer-places 1( |$)/.test(lines[0] ?? '')) throw new Error('place names: not a table of version 1')
  const count = lines.length - 1 - lines.filter((line) => line.startsWith('#')).length
  const table = {
    latitude: new Float64Array(count),
    longitude: new Float64Array(count),
    population: new Float64Array(count),
    country: new Uint16Array(count),
    division: new Int32Array(count),
    names: [] as string[],
    countries: [] as string[],
    divisions: [] as string[],
    cells: new Map<number, number[]>(),
  }
  let divisionBase = 0
  for (let at = 1; at < lines.length; at++) {
    const line = lines[at]!
    if (line.startsWith('#')) {
      const [code, ...divisions] = line.slice(1).split('\t')
      if (!/^[A-Z]{2}$/.test(code ?? '')) throw new Error(`place names: line ${at + 1} names no country`)
      table.countries.push(code!)
      divisionBase = table.divisions.length
      table.divisions.push(...divisions)
      continue
    }
    const tab = line.indexOf('\t')
    const rank = RANKS.indexOf(line[6] ?? '')
    if (tab < 7 || rank < 0 || table.countries.length === 0) throw new Error(`place names: line ${at + 1} is not a place`)
    const i = table.names.length
    table.latitude[i] = (Number.parseInt(line.slice(0, 3), 36) - 9000) / 100
    table.longitude[i] = (Number.parseInt(line.slice(3, 6), 36) - 18000) / 100
    table.population[i] = 10 ** (rank / 5)
    table.country[i] = table.countries.length - 1
    table.division[i] = tab === 7 ? -1 : divisionBase + Number.parseInt(line.slice(7, tab), 36)
    table.names.push(line.slice(tab + 1))
    const cell = cellOf(table.latitude[i]!, table.longitude[i]!)
    const list = table.cells.get(cell)
    if (list === undefined) table.cells.set(cell, [i])
    else list.push(i)
  }
  return table
}

/** Kilometres between two positions along the Earth's surface (haversine, on the mean radius). */
export function distanceKm(a: GeoLocation, b: GeoLocation): number {
  const rad = Math.PI / 180
  const dLat = (b.latitude - a.latitude) * rad
  const dLon = (b.longitude - a.longitude) * rad
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(h)))
}

/** Country names that read better than the locale data's ("Hong Kong SAR China", "Congo - Kinshasa"). */
const COUNTRY_NAMES: Readonly<Record<string, string>> = {
  CD: 'DR Congo',
  CG: 'Republic of the Congo',
  CI: "Côte d'Ivoire",
  HK: 'Hong Kong',
  MM: 'Myanmar',
  MO: 'Macao',
  PS: 'Palestine',
}

let regionNames: Intl.DisplayNames | null | undefined

/** A country's English name: COUNTRY_NAMES, else Intl's (every browser and Node with ICU), else its code. */
export function countryName(code: string): string {
  const named = COUNTRY_NAMES[code]
  if (named !== undefined) return named
  if (regionNames === undefined) {
    try {
      regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' })
    } catch {
      regionNames = null
    }
  }
  try {
    return regionNames?.of(code) ?? code
  } catch {
    return code
  }
}

/** Other names people search a country by: former names, short forms, the other spelling of a name Intl changed. */
const COUNTRY_ALIASES: Readonly<Record<string, readonly string[]>> = {
  AE: ['UAE'],
  CD: ['Congo'],
  CG: ['Congo'],
  CI: ['Ivory Coast'],
  CV: ['Cabo Verde'],
  CZ: ['Czech Republic'],
  GB: ['UK', 'Britain', 'Great Britain'],
  KR: ['Korea'],
  MK: ['Macedonia'],
  MM: ['Burma'],
  NL: ['Holland'],
  SZ: ['Swaziland'],
  TR: ['Turkey', 'Türkiye'],
  US: ['USA', 'US', 'America'],
  VA: ['Vatican'],
}

/** Every name `place` answers to in a search: its town, region, country and the country's other names. */
export function placeNames(place: Place): string[] {
  return [place.city, place.region, place.country, ...(COUNTRY_ALIASES[place.countryCode] ?? [])].filter((name): name is string => name !== null)
}

/** A place as a person reads it: "Paris, France"; without a town, "Arizona, United States" or "Iceland". */
export function placeText(place: Place): string {
  return [place.city ?? place.region, place.country].filter((part) => part !== null).join(', ')
}

/** OpenStreetMap at a position, for one the table has no name for (or to see where exactly). */
export function mapLink(point: GeoLocation): string {
  const lat = point.latitude.toFixed(5)
  const lon = point.longitude.toFixed(5)
  return `https://www.openstreetmap.org/?mlat=${lat}&mlon=${lon}#map=13/${lat}/${lon}`
}

/**
 * The lookup over a table: among the places within CITY_KM, the one of most weight, population
 * over (distance + 1 km) cubed (so Paris, 4.2 km away, names the Eiffel Tower rather than
 * Neuilly-sur-Seine at 3.0 km, while a town's own centre is named by the town), with its region
 * and country; else the region and country of the nearest place within NEAR_KM; else null. A
 * position out of range (not a latitude and longitude of WGS 84) is null too.
 */
export function placeLookup(table: PlaceTable): PlaceLookup {
  return (point) => {
    const { latitude, longitude } = point
    if (!Number.isFinite(latitude) || !Number.isFinite(longitude) || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null
    const latSpan = NEAR_KM / KM_PER_DEGREE
    const top = Math.min(89, Math.floor(latitude + latSpan))
    const bottom = Math.max(-90, Math.floor(latitude - latSpan))
    const widest = Math.cos((Math.min(90, Math.max(Math.abs(latitude + latSpan), Math.abs(latitude - latSpan))) * Math.PI) / 180)
    const lonSpan = widest <= 0 ? 180 : Math.min(180, latSpan / widest)
    const columns = lonSpan >= 180 ? 360 : Math.floor(longitude + lonSpan) - Math.floor(longitude - lonSpan) + 1
    let city = -1
    let cityWeight = 0
    let nearest = -1
    let nearestKm = Number.POSITIVE_INFINITY
    for (let row = bottom; row <= top; row++) {
      for (let column = 0; column < columns; column++) {
        const places = table.cells.get(cellOf(row, (lonSpan >= 180 ? -180 : Math.floor(longitude - lonSpan)) + column))
        if (places === undefined) continue
        for (const i of places) {
          const km = distanceKm(point, { latitude: table.latitude[i]!, longitude: table.longitude[i]! })
          if (km < nearestKm) {
            nearestKm = km
            nearest = i
          }
          const weight = table.population[i]! / (km + 1) ** 3
          if (km <= CITY_KM && weight > cityWeight) {
            cityWeight = weight
            city = i
          }
        }
      }
    }
    const named = city >= 0 ? city : nearestKm <= NEAR_KM ? nearest : -1
    if (named < 0) return null
    const code = table.countries[table.country[named]!]!
    const division = table.division[named]!
    return {
      city: city >= 0 ? table.names[city]! : null,
      region: division < 0 ? null : table.divisions[division]!,
      country: countryName(code),
      countryCode: code,
    }
  }
}

let loading: Promise<PlaceLookup> | null = null

/**
 * The lookup over the shipped table (places-data.ts), loaded and decoded the first time it is
 * asked for (about 60 ms), then kept: a bundler (the web app's Vite) puts the table in a chunk of
 * its own, fetched only then.
 */
export function loadPlaces(): Promise<PlaceLookup> {
  loading ??= import('./places-data.ts').then(
    ({ PLACES_DATA }) => placeLookup(decodePlaces(PLACES_DATA)),
    (error: unknown) => {
      loading = null // a failed load (offline, a chunk gone after an update) is tried again next time
      throw error
    },
  )
  return loading
}
