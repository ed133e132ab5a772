// The upload panel's whole-upload line, in Node (decision 0058): the speed as a moving average
// over the last 5 seconds of samples, the time left from it ("estimating…" while the speed is
// unknown or 0), and how they read; and the files a folder dropped or picked gives (lib/picked.ts):
// named by their path from the folder, hidden files and non-media left out, read a folder at a time.
import { describe, expect, it } from 'vitest'
import { percentText, speedText, timeLeftText } from '../../web/src/lib/format.ts'
import { droppedItems, isMedia, pickedFolder, typeOf, type EntryLike, type Picked } from '../../web/src/lib/picked.ts'
import { UploadRate } from '../../web/src/lib/upload-rate.ts'

describe('the upload rate', () => {
  it('has no speed until its samples span a second, then the bytes over the last 5 seconds', () => {
    const rate = new UploadRate()
    expect(rate.speed).toBeNull()
    rate.sample(0, 0)
    rate.sample(500, 1_000_000)
    expect(rate.speed).toBeNull()
    expect(rate.secondsLeft(10_000_000)).toBeNull()
    rate.sample(1000, 2_000_000)
    expect(rate.speed).toBe(2_000_000)
    // 10 s at 1 MB/s, then 5 s at 4 MB/s: the window sees only the last 5 s.
    const slow = new UploadRate()
    for (let s = 0; s <= 10; s++) slow.sample(s * 1000, s * 1_000_000)
    expect(slow.speed).toBeCloseTo(1_000_000)
    for (let s = 11; s <= 15; s++) slow.sample(s * 1000, 10_000_000 + (s - 10) * 4_000_000)
    expect(slow.speed).toBeCloseTo(4_000_000)
    expect(slow.secondsLeft(40_000_000)).toBeCloseTo(10)
  })

  it('says estimating while the speed is 0 or unknown, and starts again when the bytes done go back', () => {
    const rate = new UploadRate()
    for (let s = 0; s <= 3; s++) rate.sample(s * 1000, 5_000)
    expect(rate.speed).toBe(0)
    expect(rate.secondsLeft(1_000)).toBeNull()
    expect(timeLeftText(rate.secondsLeft(1_000))).toBe('estimating…')
    expect(rate.secondsLeft(0)).toBe(0)
    rate.sample(4000, 1_000) // a file started again
    expect(rate.speed).toBeNull()
    rate.sample(5000, 3_000)
    expect(rate.speed).toBe(2_000)
  })

  it('reads as a percentage, a speed and a time left', () => {
    expect(percentText(0.376)).toBe('37%')
    expect(percentText(0.999)).toBe('99%')
    expect(percentText(1)).toBe('100%')
    expect(speedText(2_400_000)).toBe('2.4 MB/s')
    expect(timeLeftText(null)).toBe('estimating…')
    expect(timeLeftText(Number.POSITIVE_INFINITY)).toBe('estimating…')
    expect(timeLeftText(4)).toBe('a few seconds left')
    expect(timeLeftText(34)).toBe('about 40 s left')
    expect(timeLeftText(170)).toBe('about 3 min left')
    expect(timeLeftText(2 * 3600 + 10 * 60)).toBe('about 2 h 10 min left')
    expect(timeLeftText(3600)).toBe('about 1 h left')
  })
})

/** A fake FileSystemEntry tree: a folder is an object of its children, a file its bytes' text. */
type Tree = { readonly [name: string]: Tree | string }

function entryOf(name: string, node: Tree | string, batches: number[]): EntryLike {
  if (typeof node === 'string')
    return { name, isFile: true, isDirectory: false, file: (success) => success(new File([node], name, { type: name.endsWith('.jpg') ? 'image/jpeg' : '' })) }
  return {
    name,
    isFile: false,
    isDirectory: true,
    createReader() {
      // Two entries a batch, as Chromium gives 100 a batch: every batch is read.
      const children = Object.entries(node).map(([child, inner]) => entryOf(child, inner, batches))
      return {
        readEntries(success) {
          const batch = children.splice(0, 2)
          batches.push(batch.length)
          success(batch)
        },
      }
    },
  }
}

async function names(files: AsyncIterable<Picked> | Iterable<Picked>): Promise<string[]> {
  const found: string[] = []
  for await (const picked of files) found.push(picked.name)
  return found
}

describe('the files of a folder', () => {
  it('walks a dropped folder: paths from inside it, sorted, hidden files and folders and non-media left out, files dropped beside it kept', async () => {
    const batches: number[] = []
    const trip: Tree = {
      'b.jpg': 'b',
      'a.JPG': 'a',
      'notes.txt': 'not a photo',
      '.DS_Store': 'hidden',
      '.thumbnails': { 'x.jpg': 'hidden folder' },
      sub: { 'x.jpg': 'x', deeper: { 'clip.MOV': 'video', 'raw.nef': 'raw' } },
      'c.jpg': 'c',
    }
    const loose = new File(['loose'], 'loose.jpg', { type: 'image/jpeg' })
    const got = await names(droppedItems([entryOf('Trip', trip, batches), entryOf('single.txt', 'dropped alone', batches)], [loose]))
    expect(got).toEqual(['a.JPG', 'b.jpg', 'c.jpg', 'sub/deeper/clip.MOV', 'sub/deeper/raw.nef', 'sub/x.jpg', 'single.txt', 'loose.jpg'])
    // Every folder read to its empty batch (Trip, sub, deeper); the hidden one never opened.
    expect(batches.filter((n) => n === 0)).toHaveLength(3)
  })

  it('yields the first file before a large folder is walked to its end', async () => {
    const many: Record<string, string> = {}
    for (let n = 0; n < 1000; n++) many[`IMG_${String(n).padStart(4, '0')}.jpg`] = 'x'
    const walk = droppedItems([entryOf('Big', { a: many, b: many }, [])])
    const first = await walk.next()
    expect(first.value?.name).toBe('a/IMG_0000.jpg')
    await walk.return(undefined)
  })

  it('names the folder picker files by their path inside the picked folder', async () => {
    const file = (path: string, type = '') => Object.assign(new File(['x'], path.split('/').at(-1)!, { type }), { webkitRelativePath: path })
    const got = await names(
      pickedFolder([file('Trip/sub/x.heic'), file('Trip/a.jpg', 'image/jpeg'), file('Trip/.hidden/y.jpg'), file('Trip/sub/.z.jpg'), file('Trip/readme.md')]),
    )
    expect(got).toEqual(['a.jpg', 'sub/x.heic'])
  })

  it('takes a file as media by its type or its name, and sends it with the type its name says when the browser gives none', () => {
    expect(isMedia({ name: 'x.bin', type: 'image/png' })).toBe(true)
    expect(isMedia({ name: 'x.cr3', type: '' })).toBe(true)
    expect(isMedia({ name: 'x.txt', type: 'text/plain' })).toBe(false)
    expect(typeOf({ name: 'x.cr3', type: '' })).toBe('image/x-canon-cr3')
    expect(typeOf({ name: 'x.txt', type: '' })).toBe('application/octet-stream')
    expect(typeOf({ name: 'x.jpg', type: 'image/jpeg' })).toBe('image/jpeg')
  })
})
