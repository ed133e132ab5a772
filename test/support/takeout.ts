// Google Takeout exports built in the tests, from the layout the tools that read it document
// (decision 0071, "Where the rules come from"): Takeout/Google Photos/<folder>/<files>, a JSON
// sidecar beside each photo in the shape Takeout writes it, an album's metadata.json, and the
// export split over several zip archives (a photo and its sidecar may be in different ones).
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { writeArchive } from './zip-archive.ts'

export const TAKEOUT_ROOT = 'Takeout/Google Photos'

/** What a sidecar says, as Takeout writes it: seconds as strings, a position in degrees, a favourite mark. */
export interface SidecarFields {
  readonly title: string
  readonly takenMs?: number
  readonly geo?: { readonly latitude: number; readonly longitude: number }
  readonly description?: string
  readonly favorited?: boolean
  readonly trashed?: boolean
}

/** A sidecar's JSON text as Takeout writes it (the upload time is not the date taken: a day after it here). */
export function sidecarJson(fields: SidecarFields): string {
  const seconds = (ms: number) => String(Math.floor(ms / 1000))
  const place = fields.geo ?? { latitude: 0, longitude: 0 }
  return JSON.stringify(
    {
      title: fields.title,
      description: fields.description ?? '',
      imageViews: '3',
      creationTime: { timestamp: seconds((fields.takenMs ?? 1_600_000_000_000) + 86_400_000), formatted: 'upload time' },
      ...(fields.takenMs === undefined ? {} : { photoTakenTime: { timestamp: seconds(fields.takenMs), formatted: 'taken' } }),
      geoData: { latitude: place.latitude, longitude: place.longitude, altitude: 0, latitudeSpan: 0, longitudeSpan: 0 },
      geoDataExif: { latitude: 0, longitude: 0, altitude: 0, latitudeSpan: 0, longitudeSpan: 0 },
      ...(fields.favorited === true ? { favorited: true } : {}),
      ...(fields.trashed === true ? { trashed: true } : {}),
      url: 'https://photos.google.com/photo/AF1Qip',
      googlePhotosOrigin: { mobileUpload: { deviceType: 'ANDROID_PHONE' } },
    },
    null,
    2,
  )
}

/** An album folder's metadata.json. */
export const albumMetadataJson = (title: string): string =>
  JSON.stringify({ title, description: '', access: 'protected', date: { timestamp: '1562236496', formatted: 'Jul 4, 2019' } }, null, 2)

/** A file of the export: its folder under TAKEOUT_ROOT ("" for the root itself), its name, its bytes, and the archive it is in (0 unless given). */
export interface ExportItem {
  readonly folder: string
  readonly name: string
  readonly data: Uint8Array | string
  readonly archive?: number
  /** Its deflate level (zlib's default unless given). */
  readonly level?: number
}

/**
 * Writes the export's archives into `folder` as takeout-001.zip, takeout-002.zip...
 * (deflated, as Takeout writes them) and answers their paths.
 */
export async function writeTakeout(folder: string, items: readonly ExportItem[]): Promise<string[]> {
  const count = Math.max(...items.map((item) => item.archive ?? 0)) + 1
  const files: string[] = []
  for (let archive = 0; archive < count; archive++) {
    const entries = items
      .filter((item) => (item.archive ?? 0) === archive)
      .map((item) => ({
        name: item.folder === '' ? `${TAKEOUT_ROOT}/${item.name}` : `${TAKEOUT_ROOT}/${item.folder}/${item.name}`,
        data: typeof item.data === 'string' ? new TextEncoder().encode(item.data) : item.data,
        method: 8 as const,
        ...(item.level === undefined ? {} : { level: item.level }),
      }))
    const file = path.join(folder, `takeout-20261205T120000Z-${String(archive + 1).padStart(3, '0')}.zip`)
    await writeFile(file, writeArchive(entries).bytes())
    files.push(file)
  }
  return files
}

/** A file's bytes (a photo writePhoto made). */
export const bytesOf = async (file: string): Promise<Uint8Array> => new Uint8Array(await readFile(file))
