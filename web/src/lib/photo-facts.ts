// What the viewer's info panel says of a photo beyond lib/format.ts: the camera facts of its
// metadata (docs/client-format.md, "Metadata blob": make, model, lens, exposure) and its
// location, in words. Numbers in the browser's language, through format.ts.
import type { CameraFacts, GeoLocation } from '#photos/format/metadata.ts'
import { decimalText as decimal } from './format.ts'

/** "Canon EOS R6": the model alone when it already names the make (most do), else make and model. */
export function cameraText(camera: CameraFacts | undefined): string | null {
  const { make, model } = camera ?? {}
  if (model !== undefined && make !== undefined) {
    // "NIKON CORPORATION" and "NIKON Z 6": the make's first word is enough.
    const brand = make.split(/\s+/)[0]!.toLowerCase()
    return model.toLowerCase().startsWith(brand) ? model : `${make} ${model}`
  }
  return model ?? make ?? null
}

/** "1/250 s", "2.5 s", "30 s". */
export function exposureTimeText([numerator, denominator]: readonly [number, number]): string {
  if (numerator === 1 && denominator > 1) return `1/${denominator} s`
  const seconds = numerator / denominator
  // Under a second and not 1/n: "1/3 s" would round, so the decimal.
  return `${decimal(seconds, seconds < 1 ? 3 : 1)} s`
}

/** ["1/250 s", "f/2.8", "ISO 100", "35 mm"]: the parts the camera recorded (shown joined by " · "), empty when none. */
export function exposureParts(camera: CameraFacts | undefined): string[] {
  if (camera === undefined) return []
  return [
    camera.exposureTime === undefined ? null : exposureTimeText(camera.exposureTime),
    camera.fNumberTenths === undefined ? null : `f/${decimal(camera.fNumberTenths / 10, 1)}`,
    camera.iso === undefined ? null : `ISO ${camera.iso}`,
    camera.focalLengthTenths === undefined ? null : `${decimal(camera.focalLengthTenths / 10, 1)} mm`,
  ].filter((part) => part !== null)
}

/** "12.2 MP" (one decimal; "0.3 MP" for a small one). */
export const megapixelsText = (width: number, height: number): string => `${decimal((width * height) / 1e6, 1)} MP`

/** "52.3702° N, 4.8952° E": degrees to 4 decimals (about 10 m), north or south, east or west, as maps write them whatever the language. */
export function coordinatesText(location: GeoLocation): string {
  const degrees = (value: number) => Math.abs(value).toFixed(4)
  return `${degrees(location.latitude)}° ${location.latitude < 0 ? 'S' : 'N'}, ${degrees(location.longitude)}° ${location.longitude < 0 ? 'W' : 'E'}`
}
