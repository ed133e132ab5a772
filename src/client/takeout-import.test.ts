import { describe, expect, it } from 'vitest'
import type { MediaFacts } from './files.ts'
import { planTakeout, readSidecar, readText, takenOffset, takeoutFacts, type ExportFile } from './takeout-import.ts'
import { parseSidecar } from './takeout.ts'

const encoder = new TextEncoder()

/** An export file held in memory, in pieces of `piece` bytes; `opened` counts the reads. */
function file(path: string, content: string | number, piece = 7): ExportFile & { opened: number } {
  const bytes = typeof content === 'string' ? encoder.encode(content) : new Uint8Array(content)
  const made = {
    path,
    size: bytes.length,
    modified: null,
    identity: `test:${path}`,
    opened: 0,
    async *open() {
      made.opened++
      for (let at = 0; at < bytes.length; at += piece) yield bytes.subarray(at, at + piece)
    },
  }
  return made
}

const sidecar = (fields: Record<string, unknown>) => JSON.stringify({ title: 'x', creationTime: { timestamp: '1600000000' }, ...fields })
const ROOT = 'Takeout/Google Photos'

describe('planTakeout', () => {
  it('groups the copies of a photo, the year folder first, names each album by its metadata, and reads no sidecar yet', async () => {
    const yearSidecar = file(`${ROOT}/Photos from 2019/IMG_1.jpg.json`, sidecar({ photoTakenTime: { timestamp: '1562236496' } }))
    const files = [
      file(`${ROOT}/Trip _/metadata.json`, JSON.stringify({ title: 'Trip 🇮🇹' })),
      file(`${ROOT}/Trip _/IMG_1.jpg`, 100),
      file(`${ROOT}/Photos from 2019/IMG_1.jpg`, 100),
      yearSidecar,
      file(`${ROOT}/Photos from 2019/IMG_2.jpg`, 50),
      file(`${ROOT}/Party/IMG_3.jpg`, 60),
      file(`${ROOT}/Party/IMG_1.jpg`, 100),
      file(`${ROOT}/Trash/IMG_4.jpg`, 70),
      file('Takeout/archive_browser.html', 10),
    ]
    const plan = await planTakeout(files)
    expect(plan.photos.map((photo) => [photo.file.path, photo.copies.length, photo.inLibrary, photo.albums, photo.sidecar?.path ?? null, photo.via])).toEqual([
      [`${ROOT}/Photos from 2019/IMG_1.jpg`, 3, true, ['Trip 🇮🇹', 'Party'], yearSidecar.path, 'own'],
      [`${ROOT}/Photos from 2019/IMG_2.jpg`, 1, true, [], null, null],
      [`${ROOT}/Party/IMG_3.jpg`, 1, false, ['Party'], null, null],
      // The trash is no album: its photo belongs in the library (the sidecar says it was trashed).
      [`${ROOT}/Trash/IMG_4.jpg`, 1, true, [], null, null],
    ])
    expect(plan.albums).toEqual(['Trip 🇮🇹', 'Party'])
    expect(plan.skipped.map((skip) => skip.path)).toEqual(['Takeout/archive_browser.html'])
    expect(yearSidecar.opened).toBe(0)
    expect(files[0]!.opened).toBe(1)
  })

  it('reads a repeated path once, from the first archive that has it', async () => {
    const first = file(`${ROOT}/Photos from 2019/IMG_1.jpg`, 10)
    const again = file(`${ROOT}/Photos from 2019/IMG_1.jpg`, 10)
    const plan = await planTakeout([first, again])
    expect(plan.photos).toHaveLength(1)
    expect(plan.photos[0]!.file).toBe(first)
    expect(plan.skipped).toHaveLength(1)
  })
})

describe('readText and readSidecar', () => {
  it('reads a small file whole from its pieces, and gives up on one over the limit without reading it all', async () => {
    expect(await readText(file('a.json', '{"é":"ü"}', 3))).toBe('{"é":"ü"}')
    const large = file('b.json', 'x'.repeat(100))
    expect(await readText(large, 99)).toBeNull()
    expect(large.opened).toBe(0)
  })

  it('answers the sidecar, or why it was not read; null without one', async () => {
    const good = await readSidecar({ sidecar: file('a.json', sidecar({ photoTakenTime: { timestamp: '1562236496' }, favorited: true })) })
    expect(good).toEqual({ sidecar: expect.objectContaining({ takenMs: 1_562_236_496_000, favorited: true }) })
    expect(await readSidecar({ sidecar: file('b.json', '{"not": "a sidecar"}') })).toEqual({ error: expect.stringMatching(/^b\.json: /) })
    expect(await readSidecar({ sidecar: file('c.json', '[[[') })).toEqual({ error: expect.stringMatching(/^c\.json: /) })
    expect(await readSidecar({ sidecar: null })).toBeNull()
  })
})

const NO_FACTS: MediaFacts = { captured: null, capturedSource: null, capturedOffset: null, width: 4, height: 3, derivatives: [] }
const TAKEN = Date.UTC(2019, 6, 4, 10, 34, 56)
const newYork = (at: number) => (new Date(at).getUTCMonth() >= 3 && new Date(at).getUTCMonth() <= 9 ? -240 : -300)

describe('takenOffset', () => {
  it("takes the file's own EXIF offset, else the one its EXIF wall clock implies, else the device's zone", () => {
    expect(takenOffset(TAKEN, { captured: TAKEN + 3_600_000, capturedSource: 'exif-original', capturedOffset: 330 }, newYork)).toBe(330)
    // A floating wall clock two hours ahead of the moment: +02:00; 5:45 ahead (Nepal): +05:45; 15 hours behind: beyond any zone.
    expect(takenOffset(TAKEN, { captured: TAKEN + 7_200_000, capturedSource: 'exif-original', capturedOffset: null }, newYork)).toBe(120)
    expect(takenOffset(TAKEN, { captured: TAKEN + 345 * 60_000, capturedSource: 'exif-digitized', capturedOffset: null }, newYork)).toBe(345)
    expect(takenOffset(TAKEN, { captured: TAKEN - 15 * 3_600_000, capturedSource: 'exif-original', capturedOffset: null }, newYork)).toBe(-240)
    // Not a whole quarter hour (the person corrected the date in Google Photos): the device's zone.
    expect(takenOffset(TAKEN, { captured: TAKEN + 7_200_000 + 61_000, capturedSource: 'exif-original', capturedOffset: null }, newYork)).toBe(-240)
    // The GPS clock is UTC, not a wall clock; no EXIF date at all: the device's zone.
    expect(takenOffset(TAKEN, { captured: TAKEN, capturedSource: 'gps', capturedOffset: 0 }, newYork)).toBe(-240)
    expect(takenOffset(Date.UTC(2019, 0, 4), NO_FACTS, newYork)).toBe(-300)
  })
})

describe('takeoutFacts', () => {
  const parsed = (fields: Record<string, unknown>) => parseSidecar(sidecar(fields))
  const options = { location: true, zone: newYork }

  it("puts the sidecar's date, place, caption and mark over what the file says", () => {
    const file: MediaFacts = { ...NO_FACTS, location: { latitude: 1, longitude: 2 } }
    const facts = takeoutFacts(
      file,
      parsed({ photoTakenTime: { timestamp: String(TAKEN / 1000) }, geoData: { latitude: 41.9, longitude: 12.5 }, description: ' Hi\r\n', favorited: true }),
      options,
    )
    expect(facts).toMatchObject({
      captured: TAKEN,
      capturedSource: 'takeout',
      capturedOffset: -240,
      location: { latitude: 41.9, longitude: 12.5 },
      description: 'Hi',
      favourite: true,
    })
    expect(facts.width).toBe(4)
  })

  it("keeps the file's own date and place where the sidecar has none, and no place at all without location", () => {
    const file: MediaFacts = { ...NO_FACTS, captured: TAKEN, capturedSource: 'exif-original', capturedOffset: 60, location: { latitude: 1, longitude: 2 } }
    const facts = takeoutFacts(file, parsed({ description: '' }), options)
    expect(facts).toMatchObject({ captured: TAKEN, capturedSource: 'exif-original', capturedOffset: 60, location: { latitude: 1, longitude: 2 } })
    expect(facts).not.toHaveProperty('description')
    expect(facts).not.toHaveProperty('favourite')
    expect(takeoutFacts(file, parsed({ geoData: { latitude: 41.9, longitude: 12.5 } }), { ...options, location: false }).location).toBeNull()
    expect(takeoutFacts(file, null, options)).toBe(file)
  })
})
