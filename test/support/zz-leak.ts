import exifr from 'exifr'
import sharp from 'sharp'
import { open } from 'node:fs/promises'
sharp.cache(false)
const file = '/tmp/mx/lib2000/IMG_00001.jpg'
const gc = (globalThis as { gc: () => void }).gc
const heap = () => { gc(); return (process.memoryUsage().heapUsed / 2 ** 20).toFixed(1) }
const exif = (await sharp(file).metadata()).exif!.subarray(6)
const tests: Record<string, () => Promise<unknown>> = {
  open: async () => { const h = await open(file, 'r'); await h.read(new Uint8Array(16), 0, 16, 0); await h.close() },
  metadata: () => sharp(file).metadata(),
  exifrBuffer: () => exifr.parse(exif, { pick: ['DateTimeOriginal'], gps: false, reviveValues: false }),
  exifrPath: () => exifr.parse(file, { pick: ['DateTimeOriginal'], gps: false, reviveValues: false }),
  raw: () => sharp(file).rotate().resize(512, 512, { fit: 'inside' }).raw().toBuffer({ resolveWithObject: true }),
  webp: async () => sharp(Buffer.alloc(100 * 100 * 3), { raw: { width: 100, height: 100, channels: 3 } }).webp().toBuffer({ resolveWithObject: true }),
}
for (const [name, f] of Object.entries(tests)) {
  for (let k = 0; k < 200; k++) await f()
  const before = heap()
  for (let k = 0; k < 3000; k++) await f()
  console.log(name, before, '->', heap(), 'MiB')
}
