// One photo, over the grid (a dialog: Escape goes back to the grid, the arrow keys to the photo
// before or after): its preview first, then the original once decrypted when it is an image
// the browser shows; its metadata; Download (the original, decrypted here), Replace and Delete
// (both held for their undo window by the album page) and the link to its custody.
import { useEffect, useRef, useState } from 'react'
import type { OpenedAsset } from '#photos/files.ts'
import { linkTo } from '../../app/router.ts'
import { ErrorLine, useAction } from '../../app/ui.tsx'
import { takenDown, type AlbumModel } from '../../lib/album.ts'
import { sizeText, utcOffsetText, wallClockText } from '../../lib/format.ts'
import { metadataTaken, takenIso, viewerZoned, type TakenSource } from '#photos/taken.ts'

/** Media types every browser the app supports draws in an img. */
const SHOWABLE = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif', 'image/bmp', 'image/svg+xml'])

/** Where a date taken came from, in words (src/client/taken.ts, the order they are tried in). */
const TAKEN_FROM: Record<TakenSource, string> = {
  'exif-original': 'from the camera (EXIF)',
  exif: 'from the camera (EXIF)',
  'exif-digitized': 'from the camera (EXIF, digitized)',
  'exif-modified': 'from EXIF (when the file was last saved)',
  gps: 'from the GPS clock',
  'file-name': 'from the file name',
  'file-modified': "from the file's modification time",
  uploaded: 'upload time',
}

/** An object URL for a Blob, revoked when it changes or the view closes. */
function useObjectUrl(blob: Blob | null): string | null {
  const [url, setUrl] = useState<string | null>(null)
  useEffect(() => {
    if (blob === null) return setUrl(null)
    const made = URL.createObjectURL(blob)
    setUrl(made)
    return () => URL.revokeObjectURL(made)
  }, [blob])
  return url
}

type Loaded =
  | { readonly kind: 'loading' }
  | { readonly kind: 'opened'; readonly asset: OpenedAsset }
  | { readonly kind: 'withheld' }
  | { readonly kind: 'failed'; readonly error: unknown }

/** Where the view sits: over its album's grid (the default), or over the Photos screen. */
export interface PhotoPlace {
  /** The link Escape and the back button go to. */
  readonly back: string
  readonly backLabel: string
  readonly linkOf: (assetId: string) => string
  readonly neighbour: (assetId: string, step: -1 | 1) => string | null
}

interface Props {
  readonly model: AlbumModel
  readonly assetId: string
  /** Delete and Replace; absent, the view offers neither and links to the photo in its album. */
  readonly onDelete?: (assetIds: readonly string[]) => void
  readonly onReplace?: (assetId: string, file: File) => void
  readonly place?: PhotoPlace
}

export function PhotoView({ model, assetId, onDelete, onReplace, place: given }: Props) {
  const place: PhotoPlace = given ?? {
    back: linkTo('albums', model.albumId),
    backLabel: 'Back to the album',
    linkOf: (id) => linkTo('albums', model.albumId, id),
    neighbour: (id, step) => model.neighbour(id, step),
  }
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' })
  const [shown, setShown] = useState<Blob | null>(null)
  const [original, setOriginal] = useState<Blob | null>(null)
  const [imageError, setImageError] = useState<unknown>(null)
  const shownUrl = useObjectUrl(shown)
  const originalUrl = useObjectUrl(original)
  const download = useAction()
  const replaceInput = useRef<HTMLInputElement>(null)
  const heading = useRef<HTMLHeadingElement>(null)
  const close = () => {
    location.hash = place.back
  }

  useEffect(() => {
    let live = true
    setLoaded({ kind: 'loading' })
    setShown(null)
    setOriginal(null)
    setImageError(null)
    void (async () => {
      let asset: OpenedAsset
      try {
        asset = await model.opened(assetId)
      } catch (error) {
        if (live) setLoaded(takenDown(error) ? { kind: 'withheld' } : { kind: 'failed', error })
        return
      }
      if (!live) return
      setLoaded({ kind: 'opened', asset })
      try {
        const preview = (await model.derivative(asset, 'preview')) ?? (await model.derivative(asset, 'thumbnail'))
        if (live && preview !== null) setShown(preview)
        if (SHOWABLE.has(asset.metadata.type)) {
          const full = await model.original(asset)
          if (live) setOriginal(full)
        }
      } catch (error) {
        if (live) setImageError(error)
      }
    })()
    return () => {
      live = false
    }
  }, [model, assetId])

  // Each photo (each version) is a view of its own (Album.tsx keys it): its heading takes the focus.
  useEffect(() => heading.current?.focus(), [])

  useEffect(() => {
    const keys = (event: KeyboardEvent) => {
      if (event.target instanceof HTMLInputElement) return
      if (event.key === 'Escape') close()
      else if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
        const next = place.neighbour(assetId, event.key === 'ArrowLeft' ? -1 : 1)
        if (next !== null) location.hash = place.linkOf(next)
      }
    }
    addEventListener('keydown', keys)
    return () => removeEventListener('keydown', keys)
  })

  const previous = place.neighbour(assetId, -1)
  const next = place.neighbour(assetId, 1)
  const asset = loaded.kind === 'opened' ? loaded.asset : null
  const metadata = asset?.metadata
  // At the wall clock where it was taken; a modification or upload time in this browser's zone.
  const taken = asset === null ? null : metadataTaken(asset.metadata, asset.envelope.timestamp)
  const imageUrl = originalUrl ?? shownUrl

  const save = () =>
    download.run(async () => {
      if (asset === null) return
      const blob = original ?? (await model.original(asset))
      const url = URL.createObjectURL(blob)
      const link = document.createElement('a')
      link.href = url
      link.download = asset.metadata.name.split('/').pop() ?? asset.metadata.name
      link.click()
      // The download has its own copy once started.
      setTimeout(() => URL.revokeObjectURL(url), 60_000)
    })

  return (
    <div className="photo" role="dialog" aria-modal="true" aria-labelledby="photo-title">
      <div className="photo-bar">
        <h2 id="photo-title" ref={heading} tabIndex={-1}>
          {metadata?.name ?? (loaded.kind === 'withheld' ? 'Withheld photo' : 'Photo')}
        </h2>
        <button type="button" className="secondary" onClick={close}>
          {place.backLabel}
        </button>
      </div>
      <div className="photo-body">
        <div className="photo-image">
          {loaded.kind === 'withheld' && (
            <p className="notice">Withheld by the operator: this photo was taken down and cannot be shown or downloaded. Your moderation record says why.</p>
          )}
          {loaded.kind === 'failed' && <ErrorLine error={loaded.error} />}
          {imageUrl !== null && metadata !== undefined && <img src={imageUrl} alt={metadata.name} data-full={originalUrl !== null ? 'original' : 'preview'} />}
          {loaded.kind === 'opened' && imageUrl === null && imageError === null && <p role="status">Decrypting…</p>}
          {loaded.kind === 'opened' && !SHOWABLE.has(loaded.asset.metadata.type) && (
            <p className="muted">This browser cannot show a {loaded.asset.metadata.type} file; download it to open it.</p>
          )}
          <ErrorLine error={imageError} />
        </div>
        <aside className="photo-facts">
          {metadata !== undefined && (
            <dl>
              <dt>Name</dt>
              <dd data-fact="name">{metadata.name}</dd>
              {taken !== null && (
                <>
                  <dt>Date taken</dt>
                  <dd data-fact="taken" data-source={taken.source}>
                    <time dateTime={takenIso(taken)}>{wallClockText(taken.local)}</time>
                    {/* The photo's own offset, when it states one: not the browser's zone, which a modification or upload time is shown in. */}
                    {taken.offset !== null && !viewerZoned(taken.source) && <span className="muted"> {utcOffsetText(taken.offset)}</span>} ·{' '}
                    {TAKEN_FROM[taken.source]}
                  </dd>
                </>
              )}
              <dt>Dimensions</dt>
              <dd data-fact="dimensions">{metadata.width !== null && metadata.height !== null ? `${metadata.width} × ${metadata.height}` : 'Unknown'}</dd>
              <dt>Size</dt>
              <dd data-fact="size">{sizeText(metadata.size)}</dd>
              <dt>Type</dt>
              <dd data-fact="type">{metadata.type}</dd>
            </dl>
          )}
          <div className="actions">
            {asset !== null && (
              <button type="button" onClick={() => void save()} disabled={download.busy}>
                {download.busy ? 'Decrypting…' : 'Download'}
              </button>
            )}
            {asset !== null && onReplace !== undefined && (
              <button type="button" className="secondary" onClick={() => replaceInput.current?.click()}>
                Replace…
              </button>
            )}
            {onReplace !== undefined && (
              <input
                ref={replaceInput}
                type="file"
                accept="image/*,video/*"
                className="hidden-input"
                aria-label="New version of this photo"
                tabIndex={-1}
                onChange={(e) => {
                  const file = e.target.files?.[0]
                  e.target.value = ''
                  if (file !== undefined) onReplace(assetId, file)
                }}
              />
            )}
            {onDelete !== undefined && (
              <button type="button" className="danger" onClick={() => onDelete([assetId])}>
                Delete
              </button>
            )}
            {onDelete === undefined && <a href={linkTo('albums', model.albumId, assetId)}>In its album</a>}
          </div>
          <ErrorLine error={download.error} />
          <p>
            <a href={linkTo('custody', model.albumId, assetId)}>Custody</a> <span className="muted">(where and how safely the server keeps it)</span>
          </p>
          <nav className="photo-nav" aria-label="Photos">
            {previous !== null ? <a href={place.linkOf(previous)}>← Previous</a> : <span />}
            {next !== null ? <a href={place.linkOf(next)}>Next →</a> : <span />}
          </nav>
          <p className="hint">Arrow keys: previous and next. Escape: {place.backLabel.toLowerCase()}.</p>
        </aside>
      </div>
    </div>
  )
}
