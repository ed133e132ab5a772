// Which files are photos and videos, by their names: what coffer-photos backs up from a folder
// (node/walk.ts) and what the web app takes from a folder dropped or picked (web/src/lib/picked.ts).
// No Node module here, so that a browser imports it too.

const TYPES: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.heic': 'image/heic',
  '.heif': 'image/heif',
  '.avif': 'image/avif',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.dng': 'image/x-adobe-dng',
  // Camera RAW: backed up as they are (no derivatives: node/media.ts decodes none of them).
  '.nef': 'image/x-nikon-nef',
  '.nrw': 'image/x-nikon-nrw',
  '.cr2': 'image/x-canon-cr2',
  '.cr3': 'image/x-canon-cr3',
  '.arw': 'image/x-sony-arw',
  '.orf': 'image/x-olympus-orf',
  '.rw2': 'image/x-panasonic-rw2',
  '.raf': 'image/x-fuji-raf',
  '.pef': 'image/x-pentax-pef',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.m4v': 'video/x-m4v',
  '.avi': 'video/x-msvideo',
  '.mkv': 'video/x-matroska',
  '.webm': 'video/webm',
  '.3gp': 'video/3gpp',
  '.mts': 'video/mp2t',
}

/** What mediaTypeOfName names a photo or video: every such file is backed up, whatever its format. */
export const BACKED_UP_TYPES = /^(image|video)\//

/** The extension of the last name of a path ("/" or "\\" between names), as Node's path.extname: ".JPG", or "" for ".hidden" and "name". */
function extensionOf(file: string): string {
  const base = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1)
  const dot = base.lastIndexOf('.')
  return dot <= 0 ? '' : base.slice(dot)
}

/** A guess from the extension; application/octet-stream when it is not a known one. */
export function mediaTypeOfName(file: string): string {
  return TYPES[extensionOf(file).toLowerCase()] ?? 'application/octet-stream'
}
