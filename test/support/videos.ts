// Small real videos made at test time with ffmpeg (Debian's `ffmpeg` package; CI installs it):
// a few seconds of ffmpeg's test pattern (testsrc2: colour bars, a moving square, a clock) in
// the containers and codecs phones and cameras write. Nothing is skipped without ffmpeg: making
// a video then fails, saying what to install.
import { execFile } from 'node:child_process'
import { mkdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

export interface VideoOptions {
  /** H.264 in an MP4 (or QuickTime, for a .mov name), or VP9 in a WebM. */
  readonly codec: 'h264' | 'vp9'
  readonly width: number
  readonly height: number
  readonly seconds: number
  /** Frames a second (25 unless given). */
  readonly rate?: number
  /** MP4 only: the index (moov) at the start, as a streaming server wants it; ffmpeg's default puts it at the end, as a phone does. */
  readonly faststart?: boolean
  /** MP4 only: a display matrix turning the stored frames by this many degrees, as a phone held upright records (stored landscape, shown portrait). */
  readonly rotate?: 90 | 180 | 270
  /** A sound track of this many seconds (a 440 Hz tone: AAC, or Opus in a WebM); the container's length is the longer of the two. */
  readonly audioSeconds?: number
  /** Noise over the pattern, changing every frame: frames that hardly compress (an 8-second H.264 file at 640×360 is about 20 MiB), so a file is large for its length. */
  readonly noise?: boolean
  /** Pixels this wide for their height (ffmpeg's sample aspect ratio: "16:15", a PAL DV frame of 720×576 shown 768×576); square unless given. */
  readonly pixelAspect?: `${number}:${number}`
  /** The container's creation_time (MP4 and WebM). */
  readonly creationTime?: Date
  /** MP4 and QuickTime only: Apple's com.apple.quicktime.creationdate, as an iPhone writes it ("2019-07-04T12:34:56+0200"), in the container's metadata keys (mdta). */
  readonly appleCreationDate?: string
}

export interface MadeVideo {
  readonly file: string
  /** The rotation ffprobe reads back from the file (degrees counterclockwise, as its display matrix states; 0 without one). */
  readonly rotation: number
}

async function ffmpeg(args: readonly string[]): Promise<string> {
  try {
    return (await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...args], { maxBuffer: 16 * 1024 * 1024 })).stdout
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error("ffmpeg is not on the PATH: the video tests need Debian's ffmpeg package (apt-get install ffmpeg), which CI installs")
    }
    throw error
  }
}

/** What ffprobe says of the file's first video stream's rotation (its display matrix), in degrees; 0 without one. */
export async function probedRotation(file: string): Promise<number> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-of',
    'json',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream_side_data=rotation:stream_tags=rotate',
    file,
  ])
  const stream = (JSON.parse(stdout) as { streams: { side_data_list?: { rotation?: number }[]; tags?: { rotate?: string } }[] }).streams[0]
  return stream?.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation ?? Number(stream?.tags?.rotate ?? 0)
}

/** Writes a video of testsrc2 to `file` (its folder made): see VideoOptions. */
export async function writeVideo(file: string, options: VideoOptions): Promise<MadeVideo> {
  await mkdir(path.dirname(file), { recursive: true })
  const source = ['-f', 'lavfi', '-i', `testsrc2=size=${options.width}x${options.height}:rate=${options.rate ?? 25}:duration=${options.seconds}`]
  if (options.appleCreationDate !== undefined && options.codec !== 'h264') throw new Error('writeVideo: only an MP4 or QuickTime file has Apple tags')
  // use_metadata_tags: every -metadata as an mdta key, as an iPhone writes its own.
  const movFlags = [...(options.faststart === true ? ['+faststart'] : []), ...(options.appleCreationDate === undefined ? [] : ['+use_metadata_tags'])]
  const muxing = movFlags.length === 0 ? [] : ['-movflags', movFlags.join('')]
  const codec =
    options.codec === 'h264'
      ? ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', ...muxing]
      : ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '400k']
  const audio =
    options.audioSeconds === undefined
      ? { input: [], codec: [] }
      : { input: ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${options.audioSeconds}`], codec: ['-c:a', options.codec === 'h264' ? 'aac' : 'libopus'] }
  const filters = [
    ...(options.noise === true ? ['noise=alls=60:allf=t+u'] : []),
    ...(options.pixelAspect === undefined ? [] : [`setsar=${options.pixelAspect.replace(':', '/')}`]),
  ]
  const filter = filters.length === 0 ? [] : ['-vf', filters.join(',')]
  const created = [
    ...(options.creationTime === undefined ? [] : ['-metadata', `creation_time=${options.creationTime.toISOString()}`]),
    ...(options.appleCreationDate === undefined ? [] : ['-metadata', `com.apple.quicktime.creationdate=${options.appleCreationDate}`]),
  ]
  if (options.rotate === undefined) {
    await ffmpeg([...source, ...audio.input, ...filter, ...codec, ...audio.codec, ...created, file])
    return { file, rotation: 0 }
  }
  if (options.codec !== 'h264') throw new Error('writeVideo: only an MP4 is rotated')
  // ffmpeg 5 writes the rotate tag as a display matrix only when it copies the stream: encode, then remux.
  const encoded = `${file}.unrotated${path.extname(file)}`
  await ffmpeg([...source, ...audio.input, ...filter, ...codec, ...audio.codec, ...created, encoded])
  // The container's tags again: ffmpeg does not copy a creation_time over.
  await ffmpeg(['-i', encoded, '-c', 'copy', '-metadata:s:v:0', `rotate=${options.rotate}`, ...created, ...muxing, `${file}.tmp.mp4`])
  await rm(encoded)
  await rename(`${file}.tmp.mp4`, file)
  const rotation = await probedRotation(file)
  // Either way round: which way ffmpeg's rotate tag turns has changed between its versions.
  const quarters = (((Math.round(rotation / 90) % 4) + 4) % 4) as 0 | 1 | 2 | 3
  if (quarters !== options.rotate / 90 && quarters !== (4 - options.rotate / 90) % 4) {
    throw new Error(`writeVideo: asked for a rotation of ${options.rotate}°, ffprobe reads ${rotation}° back`)
  }
  return { file, rotation }
}
