// The gallery's CPU work, off the page's thread (docs/decisions/0020-web-app.md, "The gallery"):
// a manifest's signature check and its metadata opened, a thumbnail or preview decrypted, an
// original decrypted, and for an upload the derivatives made and the capture time read. The page
// fetches the bytes and transfers them here; nothing here talks to the network. Stateless: any
// worker of the pool takes any call.
import * as Comlink from 'comlink'
import exifr from 'exifr'
import { openAsset, openDerivative, openOriginal, type AssetEntry, type OpenedAsset } from '#photos/files.ts'
import { assetKeysOf, type AlbumKeys } from '../lib/album-keys.ts'
import { webCryptoHybridVerify } from '#sdk/hybrid.ts'
import type { CameraFacts, CapturedSource } from '#photos/format/metadata.ts'
import { CAMERA_TAGS, cameraFromTags, DERIVATIVE_QUALITY, PREVIEW_SIZE, previewType, THUMBNAIL_SIZE, THUMBNAIL_TYPE } from '#photos/media.ts'
import { capturedFromTags, TAKEN_TAGS } from '#photos/taken.ts'

/** A derivative made here, as backupFile's describe gives it. */
export interface MadeDerivative {
  readonly kind: 'thumbnail' | 'preview'
  readonly type: string
  readonly bytes: Uint8Array
}

export interface Described {
  readonly captured: number | null
  readonly capturedSource: CapturedSource | null
  readonly capturedOffset: number | null
  readonly camera: CameraFacts | null
  readonly width: number | null
  readonly height: number | null
  readonly derivatives: MadeDerivative[]
}

// Made once: exifr keeps every options object it is given (node/media.ts says the same). A pick
// is all exifr reads: the GPS IFD is read for its date and time (TAKEN_TAGS), and its position
// is neither picked nor parsed: the web app records no position from a photo's EXIF (a Google
// Takeout import keeps its sidecar's place: lib/takeout-import.ts). The camera facts
// (CAMERA_TAGS: make, model, lens, exposure) are read in the same pick.
const EXIF_OPTIONS = { pick: [...TAKEN_TAGS, ...CAMERA_TAGS], reviveValues: false }

/** The capture time, its source and its offset, from EXIF or GPS, and the camera facts, as node/media.ts reads them (taken.ts, media.ts). */
async function captured(file: Blob): Promise<Pick<Described, 'captured' | 'capturedSource' | 'capturedOffset' | 'camera'>> {
  let tags: unknown
  try {
    tags = await exifr.parse(file, EXIF_OPTIONS)
  } catch {
    tags = null // no EXIF, or EXIF exifr cannot read: the photo is still backed up
  }
  const read = typeof tags === 'object' && tags !== null ? (tags as Record<string, unknown>) : {}
  const found = capturedFromTags(read)
  return { captured: found?.at ?? null, capturedSource: found?.source ?? null, capturedOffset: found?.offset ?? null, camera: cameraFromTags(read) }
}

/** The image scaled to fit `size` (never up), encoded as `type`, or JPEG where the browser cannot encode it. */
async function encode(image: ImageBitmap, size: number, type: string): Promise<{ type: string; bytes: Uint8Array }> {
  const scale = Math.min(1, size / Math.max(image.width, image.height))
  const canvas = new OffscreenCanvas(Math.max(1, Math.round(image.width * scale)), Math.max(1, Math.round(image.height * scale)))
  const context = canvas.getContext('2d')
  if (context === null) throw new Error('no 2D canvas')
  context.imageSmoothingQuality = 'high'
  context.drawImage(image, 0, 0, canvas.width, canvas.height)
  let blob = await canvas.convertToBlob({ type, quality: DERIVATIVE_QUALITY / 100 })
  // A browser that cannot encode WebP answers PNG (large): JPEG then.
  if (blob.type !== type) blob = await canvas.convertToBlob({ type: 'image/jpeg', quality: DERIVATIVE_QUALITY / 100 })
  return { type: blob.type, bytes: new Uint8Array(await blob.arrayBuffer()) }
}

/** A thumbnail, and a preview when the image is larger than one, at the sizes node/media.ts makes them. */
async function derivativesOf(image: ImageBitmap, jpeg: boolean): Promise<MadeDerivative[]> {
  const derivatives: MadeDerivative[] = [{ kind: 'thumbnail', ...(await encode(image, THUMBNAIL_SIZE, THUMBNAIL_TYPE)) }]
  if (Math.max(image.width, image.height) > PREVIEW_SIZE) derivatives.push({ kind: 'preview', ...(await encode(image, PREVIEW_SIZE, previewType(jpeg))) })
  return derivatives
}

const api = {
  /** One hybrid signature (an album's history check: lib/album-history.ts). */
  verifySignature: (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> =>
    webCryptoHybridVerify(publicKey, message, signature),

  openAsset: (keys: AlbumKeys, entry: AssetEntry, metadataBlob: Uint8Array): Promise<OpenedAsset> =>
    openAsset({ ...assetKeysOf(keys), verify: webCryptoHybridVerify }, entry, metadataBlob),

  // The plaintext goes back as a Blob made here: the page receives a handle, not bytes it would
  // copy into a Blob of its own on its thread (what a scroll through thousands of thumbnails
  // spent most of its script time on).
  async openDerivative(asset: OpenedAsset, kind: string, sealed: Uint8Array, type: string): Promise<Blob> {
    return new Blob([(await openDerivative(asset, kind, sealed)) as Uint8Array<ArrayBuffer>], { type })
  },

  async openOriginal(asset: OpenedAsset, ciphertext: Uint8Array): Promise<Blob> {
    return new Blob([(await openOriginal(asset, ciphertext)) as Uint8Array<ArrayBuffer>], { type: asset.metadata.type })
  },

  /**
   * What backupFile's describe answers for a file: its capture time, its source (EXIF, GPS) and offset,
   * its dimensions as shown (EXIF orientation applied) and a thumbnail and, when it is larger than
   * one, a preview, at the sizes node/media.ts makes them. A file the browser cannot decode as an image (a
   * video, HEIC in most browsers) gets no dimensions and no derivatives.
   */
  async describe(file: Blob): Promise<Described> {
    // A video is not opened here: exifr reads no video format, and createImageBitmap would read
    // all of it (hundreds of MiB) to fail. The page reads its poster frame (lib/video-poster.ts).
    if (file.type.startsWith('video/'))
      return { captured: null, capturedSource: null, capturedOffset: null, camera: null, width: null, height: null, derivatives: [] }
    const when = await captured(file)
    let image: ImageBitmap
    try {
      image = await createImageBitmap(file, { imageOrientation: 'from-image' })
    } catch {
      return { ...when, width: null, height: null, derivatives: [] }
    }
    try {
      const derivatives = await derivativesOf(image, file.type === 'image/jpeg')
      return Comlink.transfer(
        { ...when, width: image.width, height: image.height, derivatives },
        derivatives.map((d) => d.bytes.buffer),
      )
    } finally {
      image.close()
    }
  },

  /** A video's thumbnail and preview from its poster frame (the page reads the frame: lib/video-poster.ts); the frame is closed here. */
  async derive(frame: ImageBitmap): Promise<MadeDerivative[]> {
    try {
      const derivatives = await derivativesOf(frame, false)
      return Comlink.transfer(
        derivatives,
        derivatives.map((d) => d.bytes.buffer),
      )
    } finally {
      frame.close()
    }
  },
}

export type GalleryWorker = typeof api

Comlink.expose(api)
