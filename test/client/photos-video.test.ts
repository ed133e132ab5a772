// `coffer-photos` with videos (issue 41; docs/decisions/0069-video.md), in-process against a real
// server, on a folder of a photo and two small real videos made by ffmpeg (a phone-style MP4,
// turned 90°, its index at the end and its creation_time set, and a VP9 WebM with none): backup reads each video's length,
// dimensions and creation time with ffprobe and makes its thumbnail and preview from a poster frame (ffmpeg);
// `ls` shows the length; restore gives the videos back byte for byte; free-up frees a video as
// it frees a photo, only once its bytes are checked (kept while the server cannot check them,
// freed once `verify --deep`, which passes, checked them here).
// Without ffmpeg (COFFER_FFMPEG=off, or none on the PATH: the real program with its PATH emptied)
// a video is still backed up, with no poster and no length, and backup says so and what to
// install. Without ffmpeg installed, making the videos fails: these tests fail.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { albumFiles, findAlbum, type Library } from '../../src/client/albums.ts'
import type { RestoredFile } from '../../src/client/files.ts'
import { durationText } from '../../src/client/media.ts'
import { localZone } from '../../src/client/taken.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writePhoto } from '../support/photos.ts'
import { accountLibrary, events, expectOk, photos, spawnPhotos, type PhotosRun } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { writeVideo } from '../support/videos.ts'
import { fileExists, fileSha256 } from '../support/files.ts'

let server: TestServer
let work: string
let home: string
let email: string
let folder: string
const FILES = ['IMG_0001.jpg', 'clip.mp4', 'river.webm'] as const
const SHOT = Date.UTC(2019, 6, 4, 10, 34, 56) // clip.mp4's creation_time
const before = new Map<string, string>()

const summaryOf = (run: PhotosRun): Record<string, unknown> => events(run).find((e) => e.event === 'summary')!

/** The album's files as another session of the account opens them, by name. */
async function opened(album: string): Promise<Map<string, RestoredFile>> {
  const library: Library = await accountLibrary(home, server.client(), email)
  const found = await findAlbum(library, album)
  const files = new Map<string, RestoredFile>()
  for await (const file of albumFiles(library, found!.albumId)) files.set(file.metadata.name, file)
  return files
}

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-video-'))
  home = path.join(work, 'home')
  email = uniqueEmail('video')
  folder = path.join(work, 'Trip')
  await writePhoto(path.join(folder, 'IMG_0001.jpg'), { format: 'jpeg', width: 640, height: 480, seed: 3 })
  // A phone's: H.264, the index (moov) at the end, stored landscape and shown portrait, its creation_time in UTC.
  await writeVideo(path.join(folder, 'clip.mp4'), {
    codec: 'h264',
    width: 320,
    height: 240,
    seconds: 2,
    rotate: 90,
    audioSeconds: 2,
    creationTime: new Date(SHOT),
  })
  await writeVideo(path.join(folder, 'river.webm'), { codec: 'vp9', width: 320, height: 180, seconds: 2.4 })
  for (const name of FILES) before.set(name, await fileSha256(path.join(folder, name)))
  expectOk(await photos(home, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: `${PASSWORD}\n` }))
  expectOk(await photos(home, ['setup', '--yes', '--json']))
}, 120_000)
afterAll(async () => {
  await server?.close()
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

describe('coffer-photos with videos', { timeout: 120_000 }, () => {
  it('backs up a photo and two videos: each video with its length, its dimensions as shown, and a thumbnail and preview of a poster frame', async () => {
    const run = await photos(home, ['backup', folder, '--json'])
    expectOk(run)
    expect(summaryOf(run)).toMatchObject({ files: 3, stored: 3, failed: 0 })
    expect(run.stdout).not.toContain('without a poster')
    const files = await opened('Trip')
    expect([...files.keys()].sort()).toEqual([...FILES])
    const expected = { 'clip.mp4': [240, 320, 2000], 'river.webm': [320, 180, 2400] } as const
    for (const [name, [width, height, duration]] of Object.entries(expected)) {
      const { metadata } = files.get(name)!
      expect([metadata.width, metadata.height], name).toEqual([width, height])
      expect(Math.abs(metadata.duration! - duration), name).toBeLessThanOrEqual(50)
      // The container's creation_time, at this machine's zone then (metadata version 5); river.webm states none: its modification time dates it.
      const dated = name === 'clip.mp4' ? [SHOT, 'container', localZone(SHOT)] : [null, null, null]
      expect([metadata.captured, metadata.capturedSource, metadata.capturedOffset], name).toEqual(dated)
      expect(metadata.blobs.map((blob) => blob.kind).sort(), name).toEqual(['original', 'preview', 'thumbnail'])
      const thumbnail = await files.get(name)!.derivative('thumbnail')
      const shown = await sharp(thumbnail!).metadata()
      expect([shown.format, shown.width, shown.height], name).toEqual(['webp', width, height])
      const { channels } = await sharp(thumbnail!).stats()
      expect(Math.max(...channels.map((channel) => channel.stdev)), name).toBeGreaterThan(30) // the test pattern, not a blank frame
    }
    expect(files.get('IMG_0001.jpg')!.metadata.duration).toBeUndefined()
  })

  it("ls shows a video's length beside its dimensions, and --json gives it in milliseconds", async () => {
    const human = await photos(home, ['ls', 'Trip'])
    expectOk(human)
    const line = (name: string): string => human.stdout.split('\n').find((l) => l.startsWith(name))!
    expect(line('clip.mp4').split(/ {2,}/)[3]).toBe('240×320 0:02')
    expect(line('river.webm').split(/ {2,}/)[3]).toBe('320×180 0:02') // 2.4 s
    expect(line('IMG_0001.jpg').split(/ {2,}/)[3]).toBe('640×480')
    expect([line('clip.mp4').split(/ {2,}/)[5], line('river.webm').split(/ {2,}/)[5]]).toEqual(['container', 'file-modified'])
    const json = await photos(home, ['ls', 'Trip', '--json'])
    const listed = Object.fromEntries(events(json).map((e) => [e.name, e]))
    expect(Math.abs((listed['clip.mp4']!.duration as number) - 2000)).toBeLessThanOrEqual(50)
    expect(listed['clip.mp4']).toMatchObject({ width: 240, height: 320, derivatives: ['thumbnail', 'preview'] })
    expect(listed['IMG_0001.jpg']!.duration).toBeNull()
    expect([400, 2000, 61_500, 3_599_400, 3_600_000].map(durationText)).toEqual(['0:01', '0:02', '1:02', '59:59', '1:00:00'])
  })

  it('restores the videos byte for byte', async () => {
    const dest = path.join(work, 'restored')
    const restore = await photos(home, ['restore', 'Trip', dest, '--json'])
    expectOk(restore)
    expect(summaryOf(restore)).toMatchObject({ restored: 3, failed: 0 })
    for (const name of FILES) expect(await fileSha256(path.join(dest, name)), name).toBe(before.get(name))
  })

  it('free-up frees a video as a photo, only once its bytes are checked: kept while the server cannot check them, freed after verify --deep checked them here', async () => {
    // The server checks nothing more: its deep-scan budget spent.
    ;(server.deps.config.verification as { deepScanBudgetBytes: number }).deepScanBudgetBytes = 1
    const reasons = (run: PhotosRun) =>
      Object.fromEntries(
        events(run)
          .filter((e) => e.event === 'file')
          .map((e) => [e.path, e.reason]),
      )
    const unchecked = await photos(home, ['free-up', folder, '--yes', '--json'])
    expectOk(unchecked)
    expect(reasons(unchecked)).toEqual({ 'IMG_0001.jpg': 'deep_pending', 'clip.mp4': 'deep_pending', 'river.webm': 'deep_pending' })
    for (const name of FILES) expect(await fileExists(path.join(folder, name)), name).toBe(true)

    const verify = await photos(home, ['verify', 'Trip', '--deep', '--json'])
    expectOk(verify) // every blob downloaded and decrypted here: originals, thumbnails, previews, metadata
    expect(summaryOf(verify)).toMatchObject({ assets: 4, failed: 0, deep: true }) // the album's record and three files

    const act = await photos(home, ['free-up', folder, '--yes', '--json'])
    expectOk(act)
    expect(reasons(act)).toEqual({ 'IMG_0001.jpg': null, 'clip.mp4': null, 'river.webm': null })
    expect(summaryOf(act)).toMatchObject({ freed: 3, kept: 0 })
    for (const name of FILES) expect(await fileExists(path.join(folder, name)), name).toBe(false)
    const back = path.join(work, 'back')
    expectOk(await photos(home, ['restore', 'Trip', back]))
    for (const name of FILES) expect(await fileSha256(path.join(back, name)), name).toBe(before.get(name))
  })

  it('without ffmpeg (COFFER_FFMPEG=off) backs a video up with no poster and no length, and says so', async () => {
    const plain = path.join(work, 'Plain')
    await writeVideo(path.join(plain, 'clip.mp4'), { codec: 'h264', width: 160, height: 120, seconds: 1 })
    const run = await photos(home, ['backup', plain], { env: { COFFER_FFMPEG: 'off' } })
    expectOk(run)
    expect(run.stdout).toContain('1 video stored without a poster frame or length: COFFER_FFMPEG is off')
    const { metadata } = (await opened('Plain')).get('clip.mp4')!
    expect([metadata.width, metadata.height, metadata.duration, metadata.blobs.map((blob) => blob.kind)]).toEqual([null, null, undefined, ['original']])
    const restore = await photos(home, ['restore', 'Plain', path.join(work, 'Plain-restored')])
    expectOk(restore)
    expect(await fileSha256(path.join(work, 'Plain-restored', 'clip.mp4'))).toBe(await fileSha256(path.join(plain, 'clip.mp4')))
  })

  it('with no ffmpeg on the PATH (the real program, its PATH emptied) backs a video up all the same, and says what to install', async () => {
    const bare = path.join(work, 'Bare')
    await writeVideo(path.join(bare, 'clip.webm'), { codec: 'vp9', width: 160, height: 120, seconds: 1 })
    const run = await spawnPhotos(home, ['backup', bare], { env: { PATH: path.join(work, 'no-such-folder') } }).done
    expectOk(run)
    expect(run.stdout).toContain(
      '1 video stored without a poster frame or length: ffmpeg and ffprobe are not on the PATH (Debian and Ubuntu: apt install ffmpeg)',
    )
    const { metadata } = (await opened('Bare')).get('clip.webm')!
    expect([metadata.width, metadata.duration, metadata.blobs.map((blob) => blob.kind)]).toEqual([null, undefined, ['original']])
  })
})
