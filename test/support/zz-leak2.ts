import exifr from 'exifr'
import sharp from 'sharp'
const file = '/tmp/mx/lib2000/IMG_00001.jpg'
const gc = (globalThis as { gc: () => void }).gc
const heap = () => { gc(); return (process.memoryUsage().heapUsed / 2 ** 20).toFixed(1) }
const exif = (await sharp(file).metadata()).exif!.subarray(6)
const options = { pick: ['DateTimeOriginal'], gps: false, reviveValues: false }
for (let k = 0; k < 200; k++) await exifr.parse(exif, options)
const before = heap()
for (let k = 0; k < 3000; k++) await exifr.parse(exif, options)
for (let k = 0; k < 3000; k++) await exifr.parse(file, options)
console.log('constant options', before, '->', heap(), 'MiB')
