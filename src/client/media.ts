// What every client makes of a photo the same way, in Node (node/media.ts, with sharp) and in a
// browser (the web app's worker, with createImageBitmap): the derivatives' sizes (docs/client-library.md,
// "Derivatives and EXIF"). The capture time read from EXIF and GPS is taken.ts's.

/** Long side of the thumbnail, never upscaled. */
export const THUMBNAIL_SIZE = 512
/** Long side of the preview, never upscaled; an original no longer than this (in a format browsers show) gets none. */
export const PREVIEW_SIZE = 2048
/** The derivatives' media type and encoder quality (0-100). */
export const DERIVATIVE_TYPE = 'image/webp'
export const DERIVATIVE_QUALITY = 80
