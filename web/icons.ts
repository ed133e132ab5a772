// Makes the web app's PNG icons (web/public/icons) from web/src/icon.svg, for the manifest and
// the home screen: 192 and 512 pixels, and a maskable 512 whose lock sits in the safe zone (the
// middle 80 %) on the icon's blue, so that a launcher's circle or squircle cuts none of it.
// Run once after changing the SVG, and commit the PNGs: `node web/icons.ts`.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import sharp from 'sharp'

const web = import.meta.dirname
const out = path.join(web, 'public/icons')
const svg = await readFile(path.join(web, 'src/icon.svg'))
const BLUE = '#2b5fd9'

for (const size of [192, 512])
  await sharp(svg, { density: (72 * size) / 32 })
    .resize(size, size)
    .png()
    .toFile(path.join(out, `icon-${size}.png`))

// Maskable: the icon's lock, at 60 % of the square, on a full square of its blue.
const inner = Math.round(512 * 0.6)
const lock = await sharp(svg, { density: (72 * inner) / 32 })
  .resize(inner, inner)
  .png()
  .toBuffer()
await sharp({ create: { width: 512, height: 512, channels: 4, background: BLUE } })
  .composite([{ input: lock, gravity: 'center' }])
  .png()
  .toFile(path.join(out, 'icon-maskable-512.png'))
console.log(`icons written to ${path.relative(process.cwd(), out)}`)
