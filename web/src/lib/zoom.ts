// The photo viewer's zoom and pan, as plain arithmetic (docs/decisions/0056-viewer.md): the
// photo is drawn fitted and centred in its stage, then moved by `translate(x, y) scale(scale)`
// about its centre. A point of the stage is given from the stage's centre, in CSS pixels.

export interface Zoom {
  readonly scale: number
  readonly x: number
  readonly y: number
}

export interface Size {
  readonly width: number
  readonly height: number
}

export const FITTED: Zoom = { scale: 1, x: 0, y: 0 }
/** The closest a photo is shown: 8 times its fitted size. */
export const MAX_SCALE = 8
/** What a double-click, +, or a tap of the zoom key goes to and steps by. */
export const STEP = 2

/**
 * Keeps the photo on the stage: no further out than fitted (scale 1, centred), and panned no
 * further than its edges (a side smaller than the stage stays centred).
 */
export function clamp(zoom: Zoom, photo: Size, stage: Size): Zoom {
  const scale = Math.min(MAX_SCALE, Math.max(1, zoom.scale))
  if (scale === 1) return FITTED
  const spanX = Math.max(0, (photo.width * scale - stage.width) / 2)
  const spanY = Math.max(0, (photo.height * scale - stage.height) / 2)
  return { scale, x: Math.min(spanX, Math.max(-spanX, zoom.x)), y: Math.min(spanY, Math.max(-spanY, zoom.y)) }
}

/** Zoomed to `scale` keeping the photo's point under `at` (from the stage's centre) where it is. */
export function zoomAt(zoom: Zoom, scale: number, at: { x: number; y: number }, photo: Size, stage: Size): Zoom {
  const to = Math.min(MAX_SCALE, Math.max(1, scale))
  const ratio = to / zoom.scale
  return clamp({ scale: to, x: at.x - (at.x - zoom.x) * ratio, y: at.y - (at.y - zoom.y) * ratio }, photo, stage)
}

/** Moved by (dx, dy), within the edges. */
export const panBy = (zoom: Zoom, dx: number, dy: number, photo: Size, stage: Size): Zoom => clamp({ ...zoom, x: zoom.x + dx, y: zoom.y + dy }, photo, stage)

/** The scale a wheel turn leads to: a notch (100 px) is about 20 per cent; a trackpad pinch (ctrl + wheel, small deltas) faster per pixel. */
export function wheelScale(scale: number, deltaY: number, pinch: boolean): number {
  return scale * Math.exp(-deltaY * (pinch ? 0.01 : 0.002))
}

/** Fitted, or zoomed to STEP at the point: what a double-click does. */
export const toggled = (zoom: Zoom, at: { x: number; y: number }, photo: Size, stage: Size): Zoom =>
  zoom.scale > 1 ? FITTED : zoomAt(zoom, STEP, at, photo, stage)

/** A horizontal swipe's direction: 1 (to the next photo: the finger went left), -1, or 0 when the move is too short or not across. */
export function swipeOf(dx: number, dy: number, width: number): -1 | 0 | 1 {
  if (Math.abs(dx) < Math.max(40, width * 0.12) || Math.abs(dx) < Math.abs(dy) * 1.5) return 0
  return dx < 0 ? 1 : -1
}
