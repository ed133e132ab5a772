// One photo, full screen over the grid on a dark background (a dialog; docs/decisions/0056-viewer.md):
// its preview first, then the original once decrypted when it is an image the browser shows;
// zoom and pan (the wheel about the pointer, double-click, pinch, drag, + - 0), a swipe or the
// arrow keys to the photo before or after (their previews fetched as this one opens), Escape
// back to the grid. The bar: back, the name, Download (the original, decrypted here), Info (the
// date taken, camera, exposure, size, albums, place), the favourite heart (and `f`; decision
// 0061) and More (Add to album… and Move to album…, which send nothing of the photo again;
// Replace and Delete, both held for their undo window by the album page; the link to its custody).
import { useEffect, useLayoutEffect, useRef, useState, type PointerEvent as ReactPointerEvent } from 'react'
import { albumNameOf } from '#photos/albums.ts'
import type { OpenedAsset } from '#photos/files.ts'
import type { GeoLocation } from '#photos/format/metadata.ts'
import { linkTo } from '../../app/router.ts'
import { ErrorLine, useAction } from '../../app/ui.tsx'
import { addToAlbum, moveToAlbum, setFavourites } from '../../lib/organise.ts'
import { takenDown, type AlbumModel } from '../../lib/album.ts'
import { sizeText, utcOffsetText, wallClockText } from '../../lib/format.ts'
import { cameraText, coordinatesText, exposureParts, megapixelsText } from '../../lib/photo-facts.ts'
import { preloadNeighbours, previewOf } from '../../lib/previews.ts'
import { durationText } from '#photos/media.ts'
import { isVideo, streamedVideo } from '../../lib/video.ts'
import { loadPlaces, mapLink, placeText } from '#photos/places.ts'
import { clamp, FITTED, panBy, STEP, swipeOf, toggled, wheelScale, zoomAt, type Size, type Zoom } from '../../lib/zoom.ts'
import { metadataTaken, takenIso, viewerZoned, type TakenSource } from '#photos/taken.ts'
import { AlbumChooser } from './AlbumChooser.tsx'

/** Media types every browser the app supports draws in an img. */
const SHOWABLE = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif', 'image/bmp', 'image/svg+xml'])

/** Where a date taken came from, in words (src/client/taken.ts, the order they are tried in). */
const TAKEN_FROM: Record<TakenSource, string> = {
  'exif-original': 'from the camera (EXIF)',
  exif: 'from the camera (EXIF)',
  'exif-digitized': 'from the camera (EXIF, digitized)',
  'exif-modified': 'from EXIF (when the file was last saved)',
  gps: 'from the GPS clock',
  takeout: 'from Google Photos (Takeout)',
  xmp: 'from an XMP sidecar',
  container: "from the video's creation time",
  'file-name': 'from the file name',
  'file-modified': "from the file's modification time",
  uploaded: 'upload time',
}

/** The info panel stays open (or closed) from one photo to the next, for this page's life. */
let infoOpen = false

/**
 * The photo whose More menu is open: a new version of it (a favourite mark written, the album
 * read again) is a view of its own, which opens with the menu as the person left it.
 */
let moreOpenFor: string | null = null

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

/** An element's size, kept up to date. */
function useSize(element: React.RefObject<HTMLElement | null>): Size {
  const [size, setSize] = useState<Size>({ width: 0, height: 0 })
  useLayoutEffect(() => {
    const target = element.current
    if (target === null) return
    const measure = () => setSize({ width: target.clientWidth, height: target.clientHeight })
    measure()
    const observer = new ResizeObserver(measure)
    observer.observe(target)
    return () => observer.disconnect()
  }, [element])
  return size
}

/**
 * Album names read from their records, by album id: a name never changes (the album's id follows
 * from it), so this page keeps each once read.
 */
const albumNames = new Map<string, Promise<string | null>>()

/** The names of these albums, sorted, each '…' until read: the model's own from it, the others from their records. */
function useAlbumNames(model: AlbumModel, albumIds: readonly string[]): string[] {
  const [, setRead] = useState(0)
  const key = albumIds.join()
  // biome-ignore lint/correctness/useExhaustiveDependencies: key is albumIds
  useEffect(() => {
    let live = true
    for (const albumId of albumIds) {
      if (albumId === model.albumId && model.name !== undefined) continue
      let name = albumNames.get(albumId)
      if (name === undefined) {
        name = albumNameOf(model.library, albumId).catch(() => null)
        albumNames.set(albumId, name)
      }
      void name.then((read) => {
        known.set(albumId, read)
        if (live) setRead((n) => n + 1)
      })
    }
    return () => {
      live = false
    }
  }, [model, key])
  return albumIds
    .map((albumId) => (albumId === model.albumId && model.name !== undefined ? model.name : known.get(albumId)))
    .map((name) => (name === undefined ? '…' : name === null ? 'Unnamed album' : name))
    .sort((a, b) => a.localeCompare(b))
}

/** The place's name from the shipped table (places.ts), once loaded; null while it loads, when it cannot, and at sea. */
function usePlaceName(location: GeoLocation | undefined): string | null {
  const [name, setName] = useState<string | null>(null)
  useEffect(() => {
    setName(null)
    if (location === undefined) return
    let live = true
    void loadPlaces().then(
      (lookup) => {
        const place = lookup(location)
        if (live && place !== null) setName(placeText(place))
      },
      () => {}, // offline before the table was ever loaded: the coordinates alone
    )
    return () => {
      live = false
    }
  }, [location])
  return name
}

/** The names read so far (albumNames, settled). */
const known = new Map<string, string | null>()

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
  /** The album's cover as its record names it (null: none chosen, or being set), and how to set it to this photo: an album's view only. */
  readonly cover?: { readonly current: string | null; readonly set: (assetId: string) => void }
  readonly place?: PhotoPlace
  /** Every album that holds this photo (the Photos screen knows them); its own alone unless given. */
  readonly albumIds?: readonly string[]
  /** Told once the photo was marked, added or moved: the screen reads the albums' feeds again. */
  readonly onChanged?: () => void
  /** In an album several people are in: who added each photo, and whether this account may change it (the owner any, a contributor its own). */
  readonly sharing?: PhotoSharing
  /** Shown through a public link (web/src/link): nothing changes, nothing of an account is offered, and Download only when the link allows it. */
  readonly link?: { readonly downloads: boolean }
}

export interface PhotoSharing {
  /** The email of the account that added a photo (its manifest's writer), or null when not known here. */
  readonly addedBy: (userId: string) => string | null
  readonly mayChange: (userId: string) => boolean
  /** Add to and move to another album: the owner's alone (its other albums are its own). */
  readonly mayOrganise: boolean
}

/** A pointer on the stage: where it went down and where it is. */
interface Touch {
  readonly type: string
  readonly startX: number
  readonly startY: number
  x: number
  y: number
}

export function PhotoView({
  model,
  assetId,
  onDelete: deleting,
  onReplace: replacing,
  cover: covering,
  place: given,
  albumIds,
  onChanged,
  sharing,
  link,
}: Props) {
  const place: PhotoPlace = given ?? {
    back: linkTo('albums', model.albumId),
    backLabel: 'Back to the album',
    linkOf: (id) => linkTo('albums', model.albumId, id),
    neighbour: (id, step) => model.neighbour(id, step),
  }
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' })
  const [shown, setShown] = useState<Blob | null>(null)
  const [original, setOriginal] = useState<Blob | null>(null)
  /** A video's src through the service worker (lib/video.ts); null until set up, or without a worker (then the original's object URL). */
  const [streamed, setStreamed] = useState<string | null>(null)
  const [unplayable, setUnplayable] = useState(false)
  const [imageError, setImageError] = useState<unknown>(null)
  const [natural, setNatural] = useState<Size | null>(null)
  const [zoom, setZoom] = useState<Zoom>(FITTED)
  const [info, setInfo] = useState(infoOpen)
  const [more, setMoreShown] = useState(() => moreOpenFor === assetId)
  const setMore = (open: boolean) => {
    moreOpenFor = open ? assetId : null
    setMoreShown(open)
  }
  const shownUrl = useObjectUrl(shown)
  const originalUrl = useObjectUrl(original)
  const download = useAction()
  const organise = useAction()
  /** The favourite mark as last set here, until the photo's new version comes back; null: as its metadata says. */
  const [marked, setMarked] = useState<boolean | null>(null)
  const [choosing, setChoosing] = useState<'add' | 'move' | null>(null)
  const [said, setSaid] = useState<string | null>(null)
  const replaceInput = useRef<HTMLInputElement>(null)
  const heading = useRef<HTMLHeadingElement>(null)
  const stage = useRef<HTMLDivElement>(null)
  const stageSize = useSize(stage)
  const pointers = useRef(new Map<number, Touch>())
  /** A pinch under way: the zoom and the two fingers' distance and midpoint when it began. */
  const pinch = useRef<{ zoom: Zoom; distance: number; x: number; y: number } | null>(null)
  const close = () => {
    location.hash = place.back
  }
  const go = (step: -1 | 1) => {
    const to = place.neighbour(assetId, step)
    if (to !== null) location.hash = place.linkOf(to)
  }
  const showInfo = (open: boolean) => {
    infoOpen = open
    setInfo(open)
  }

  useEffect(() => {
    let live = true
    let closeVideo = () => {}
    void (async () => {
      let asset: OpenedAsset
      let preview: Awaited<ReturnType<typeof previewOf>>
      try {
        preview = await previewOf(model, assetId)
        asset = preview.asset
      } catch (error) {
        if (live) setLoaded(takenDown(error) ? { kind: 'withheld' } : { kind: 'failed', error })
        return
      }
      if (!live) return
      setLoaded({ kind: 'opened', asset })
      if (preview.image !== null) setShown(preview.image)
      if (preview.error !== undefined) setImageError(preview.error)
      // This photo's preview first, then its neighbours', then its original.
      preloadNeighbours(model, assetId)
      try {
        if (isVideo(asset.metadata.type)) {
          const opened = asset
          const video = await streamedVideo(
            opened,
            (start, end) => model.originalCiphertext(opened, start, end),
            (error) => live && setImageError(error),
          )
          if (video !== null) {
            if (!live) return video.close()
            closeVideo = video.close
            setStreamed(video.src)
            return
          }
        }
        // A video without a service worker to stream it plays from the whole original, as an image shows from it.
        if (SHOWABLE.has(asset.metadata.type) || isVideo(asset.metadata.type)) {
          const full = await model.original(asset)
          if (live) setOriginal(full)
        }
      } catch (error) {
        if (live) setImageError(error)
      }
    })()
    return () => {
      live = false
      closeVideo()
    }
  }, [model, assetId])

  // Each photo (each version) is a view of its own (Album.tsx keys it): its heading takes the focus.
  useEffect(() => heading.current?.focus(), [])

  const asset = loaded.kind === 'opened' ? loaded.asset : null
  const writer = asset?.envelope.created_by_user ?? null
  // What this account may do to the photo: anything in its own albums; in a shared one, what its role lets it.
  const mayChange = link === undefined && (sharing === undefined || (writer !== null && sharing.mayChange(writer)))
  const onDelete = mayChange ? deleting : undefined
  const onReplace = mayChange ? replacing : undefined
  const cover = sharing === undefined || sharing.mayOrganise ? covering : undefined
  const mayOrganise = sharing === undefined || sharing.mayOrganise
  const addedBy = sharing !== undefined && writer !== null ? sharing.addedBy(writer) : null
  const metadata = asset?.metadata
  const video = metadata !== undefined && isVideo(metadata.type)
  const videoUrl = video ? (streamed ?? originalUrl) : null
  const imageUrl = video ? null : (originalUrl ?? shownUrl)
  // The photo's size as shown (fitted to the stage, never enlarged): from its metadata, else from what was drawn.
  const full = metadata?.width != null && metadata.height != null ? { width: metadata.width, height: metadata.height } : natural
  const fit = full === null || stageSize.width === 0 ? 0 : Math.min(1, stageSize.width / full.width, stageSize.height / full.height)
  const fitted: Size = full === null ? { width: 0, height: 0 } : { width: Math.round(full.width * fit), height: Math.round(full.height * fit) }
  /** A point of the page from the stage's centre. */
  const fromCentre = (clientX: number, clientY: number) => {
    const box = stage.current!.getBoundingClientRect()
    return { x: clientX - box.left - box.width / 2, y: clientY - box.top - box.height / 2 }
  }
  const zoomTo = (scale: number) => setZoom((now) => zoomAt(now, scale, { x: 0, y: 0 }, fitted, stageSize))

  // The stage resized (the info panel, a turned phone): the photo kept within its edges.
  // biome-ignore lint/correctness/useExhaustiveDependencies: fitted follows from these
  useEffect(() => setZoom((now) => clamp(now, fitted, stageSize)), [stageSize.width, stageSize.height, fitted.width, fitted.height])

  // The wheel zooms about the pointer: a listener of its own, since React's is passive and the page must not scroll.
  useEffect(() => {
    const element = stage.current
    if (element === null) return
    const wheel = (event: WheelEvent) => {
      event.preventDefault()
      const at = fromCentre(event.clientX, event.clientY)
      setZoom((now) => zoomAt(now, wheelScale(now.scale, event.deltaY, event.ctrlKey), at, fitted, stageSize))
    }
    element.addEventListener('wheel', wheel, { passive: false })
    return () => element.removeEventListener('wheel', wheel)
  })

  useEffect(() => {
    const keys = (event: KeyboardEvent) => {
      if (choosing !== null || event.target instanceof HTMLInputElement || event.altKey || event.ctrlKey || event.metaKey) return
      switch (event.key) {
        case 'Escape':
          if (more) setMore(false)
          else close()
          break
        case 'ArrowLeft':
        case 'ArrowRight':
          go(event.key === 'ArrowLeft' ? -1 : 1)
          break
        case '+':
        case '=':
          zoomTo(zoom.scale * STEP)
          break
        case '-':
          zoomTo(zoom.scale / STEP)
          break
        case '0':
          setZoom(FITTED)
          break
        case 'i':
          showInfo(!info)
          break
        case 'f':
          toggleFavourite()
          break
        default:
          return
      }
      event.preventDefault()
    }
    addEventListener('keydown', keys)
    return () => removeEventListener('keydown', keys)
  })

  const pointerDown = (event: ReactPointerEvent) => {
    // A video's own controls take the pointer (its seek bar is dragged).
    if ((event.pointerType === 'mouse' && event.button !== 0) || event.target instanceof HTMLVideoElement) return
    try {
      event.currentTarget.setPointerCapture(event.pointerId)
    } catch {
      // A pointer the browser does not track (a synthetic event): followed without capture.
    }
    pointers.current.set(event.pointerId, { type: event.pointerType, startX: event.clientX, startY: event.clientY, x: event.clientX, y: event.clientY })
    setMore(false)
    if (pointers.current.size === 2) {
      const [a, b] = [...pointers.current.values()] as [Touch, Touch]
      const middle = fromCentre((a.x + b.x) / 2, (a.y + b.y) / 2)
      pinch.current = { zoom, distance: Math.hypot(a.x - b.x, a.y - b.y) || 1, ...middle }
    }
  }
  const pointerMove = (event: ReactPointerEvent) => {
    const pointer = pointers.current.get(event.pointerId)
    if (pointer === undefined) return
    const [dx, dy] = [event.clientX - pointer.x, event.clientY - pointer.y]
    pointer.x = event.clientX
    pointer.y = event.clientY
    const started = pinch.current
    if (started !== null && pointers.current.size === 2) {
      const [a, b] = [...pointers.current.values()] as [Touch, Touch]
      const middle = fromCentre((a.x + b.x) / 2, (a.y + b.y) / 2)
      const scale = (started.zoom.scale * Math.hypot(a.x - b.x, a.y - b.y)) / started.distance
      // Zoomed about where the fingers began, then moved with them.
      const zoomed = zoomAt(started.zoom, scale, started, fitted, stageSize)
      setZoom(panBy(zoomed, middle.x - started.x, middle.y - started.y, fitted, stageSize))
    } else if (pointers.current.size === 1 && zoom.scale > 1) setZoom((now) => panBy(now, dx, dy, fitted, stageSize))
  }
  const pointerUp = (event: ReactPointerEvent) => {
    const pointer = pointers.current.get(event.pointerId)
    if (pointer === undefined) return
    pointers.current.delete(event.pointerId)
    if (pinch.current !== null) {
      // The end of a pinch is not a swipe: the finger left waits for the next touch.
      if (pointers.current.size === 0) pinch.current = null
      return
    }
    if (pointer.type === 'mouse' || zoom.scale > 1 || event.type === 'pointercancel') return
    const swipe = swipeOf(pointer.x - pointer.startX, pointer.y - pointer.startY, stageSize.width)
    if (swipe !== 0) go(swipe)
  }

  const previous = place.neighbour(assetId, -1)
  const next = place.neighbour(assetId, 1)
  // At the wall clock where it was taken; a modification or upload time in this browser's zone.
  const taken = asset === null ? null : metadataTaken(asset.metadata, asset.envelope.timestamp)
  const camera = cameraText(metadata?.camera)
  const exposure = exposureParts(metadata?.camera)
  const albumNames = useAlbumNames(model, albumIds ?? [model.albumId])
  const placeName = usePlaceName(metadata?.location)
  const favourite = marked ?? metadata?.favourite === true
  const here = [{ albumId: model.albumId, assetId }]

  function toggleFavourite(): void {
    if (asset === null || !mayChange || organise.busy) return
    const on = !favourite
    setMarked(on)
    void organise.run(async () => {
      const outcome = await setFavourites(model.library, here, on)
      if (outcome.failures.length > 0) {
        setMarked(!on)
        throw outcome.failures[0]!.error
      }
      onChanged?.()
    })
  }

  const organised = async (to: { albumId: string; name: string }) => {
    const moving = choosing === 'move'
    const outcome = moving ? await moveToAlbum(model.library, here, to.albumId) : await addToAlbum(model.library, here, to.albumId)
    if (outcome.failures.length > 0) throw outcome.failures[0]!.error
    setChoosing(null)
    setMore(false)
    onChanged?.()
    // Moved: it is no longer in this album, so the view goes back to where it was opened from.
    if (moving) close()
    else setSaid(`Added to ${to.name}`)
  }

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
    <div className={info ? 'viewer with-info' : 'viewer'} role="dialog" aria-modal="true" aria-labelledby="photo-title">
      <div className="viewer-bar">
        <button type="button" className="viewer-icon" onClick={close} aria-label={place.backLabel} title={`${place.backLabel} (Escape)`}>
          ×
        </button>
        <h2 id="photo-title" ref={heading} tabIndex={-1}>
          {metadata?.name ?? (loaded.kind === 'withheld' ? 'Withheld photo' : 'Photo')}
        </h2>
        {asset !== null && (link?.downloads ?? true) && (
          <button type="button" className="secondary" onClick={() => void save()} disabled={download.busy}>
            {download.busy ? 'Decrypting…' : 'Download'}
          </button>
        )}
        {asset !== null && mayChange && (
          <button
            type="button"
            className={favourite ? 'viewer-icon viewer-favourite on' : 'viewer-icon viewer-favourite'}
            aria-pressed={favourite}
            aria-label="Favourite"
            title="Favourite (f)"
            onClick={toggleFavourite}
          >
            {favourite ? '♥' : '♡'}
          </button>
        )}
        <button type="button" className="secondary" aria-pressed={info} aria-controls="photo-info" onClick={() => showInfo(!info)} title="Info (i)">
          Info
        </button>
        <div className="viewer-more" hidden={link !== undefined}>
          <button type="button" className="secondary" aria-expanded={more} aria-controls="photo-more" onClick={() => setMore(!more)}>
            More
          </button>
          <div id="photo-more" className="viewer-menu" hidden={!more}>
            {asset !== null && mayOrganise && (
              <>
                <button
                  type="button"
                  className="secondary"
                  onClick={() => {
                    setMore(false)
                    setChoosing('add')
                  }}
                >
                  Add to album…
                </button>
                <button
                  type="button"
                  className="secondary"
                  onClick={() => {
                    setMore(false)
                    setChoosing('move')
                  }}
                >
                  Move to album…
                </button>
              </>
            )}
            {asset !== null && onReplace !== undefined && (
              <button type="button" className="secondary" onClick={() => replaceInput.current?.click()}>
                Replace…
              </button>
            )}
            {asset !== null && cover !== undefined && (
              <button
                type="button"
                className="secondary"
                disabled={cover.current === assetId}
                onClick={() => {
                  setMore(false)
                  cover.set(assetId)
                }}
              >
                {cover.current === assetId ? 'This is the album cover' : 'Set as album cover'}
              </button>
            )}
            {onDelete !== undefined ? (
              <button type="button" className="danger" onClick={() => onDelete([assetId])}>
                Delete
              </button>
            ) : (
              deleting === undefined && <a href={linkTo('albums', model.albumId, assetId)}>In its album</a>
            )}
            <a href={linkTo('custody', model.albumId, assetId)}>Custody</a>
            <p className="muted">Where and how safely the server keeps it.</p>
          </div>
        </div>
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
            setMore(false)
            if (file !== undefined) onReplace?.(assetId, file)
          }}
        />
      </div>
      <ErrorLine error={download.error} />
      <ErrorLine error={organise.error} />
      {said !== null && (
        <p className="viewer-said" role="status">
          {said}
        </p>
      )}
      {choosing !== null && (
        <AlbumChooser
          library={model.library}
          title={choosing === 'add' ? 'Add to which album?' : 'Move to which album?'}
          submitLabel={choosing === 'add' ? 'Add' : 'Move'}
          busyLabel={choosing === 'add' ? 'Adding…' : 'Moving…'}
          exclude={model.albumId}
          onChosen={organised}
          onCancel={() => setChoosing(null)}
        />
      )}
      {/* biome-ignore lint/a11y/noStaticElementInteractions: gestures on the photo; the dialog's keys do the same (+ - 0, ← →) */}
      <div
        ref={stage}
        className={zoom.scale > 1 ? 'viewer-stage zoomed' : 'viewer-stage'}
        onPointerDown={pointerDown}
        onPointerMove={pointerMove}
        onPointerUp={pointerUp}
        onPointerCancel={pointerUp}
        onDoubleClick={(event) => !video && setZoom((now) => toggled(now, fromCentre(event.clientX, event.clientY), fitted, stageSize))}
      >
        {video && videoUrl !== null && (
          // biome-ignore lint/a11y/useMediaCaption: a person's own video has no captions to offer
          <video
            src={videoUrl}
            poster={shownUrl ?? undefined}
            controls
            autoPlay
            playsInline
            aria-label={metadata.name}
            data-streamed={streamed !== null ? 'yes' : 'no'}
            onLoadedMetadata={(event) => setNatural({ width: event.currentTarget.videoWidth, height: event.currentTarget.videoHeight })}
            onError={(event) => setUnplayable(event.currentTarget.error?.code === MediaError.MEDIA_ERR_SRC_NOT_SUPPORTED)}
            style={fitted.width > 0 ? { width: fitted.width, height: fitted.height } : {}}
          />
        )}
        {imageUrl !== null && metadata !== undefined && (
          <img
            src={imageUrl}
            alt={metadata.name}
            draggable={false}
            data-full={originalUrl !== null ? 'original' : 'preview'}
            data-scale={zoom.scale}
            onLoad={(event) => setNatural({ width: event.currentTarget.naturalWidth, height: event.currentTarget.naturalHeight })}
            style={{
              ...(fitted.width > 0 ? { width: fitted.width, height: fitted.height } : {}),
              transform: `translate(${zoom.x}px, ${zoom.y}px) scale(${zoom.scale})`,
            }}
          />
        )}
        <div className="viewer-notes">
          {loaded.kind === 'withheld' && (
            <p className="notice">Withheld by the operator: this photo was taken down and cannot be shown or downloaded. Your moderation record says why.</p>
          )}
          {loaded.kind === 'failed' && <ErrorLine error={loaded.error} />}
          {(loaded.kind === 'loading' || (loaded.kind === 'opened' && imageUrl === null && videoUrl === null && imageError === null)) && (
            <p role="status">Decrypting…</p>
          )}
          {loaded.kind === 'opened' && ((!video && !SHOWABLE.has(loaded.asset.metadata.type)) || unplayable) && (
            <p className="muted">
              This browser cannot {video ? 'play' : 'show'} a {loaded.asset.metadata.type} file; download it to open it.
            </p>
          )}
          <ErrorLine error={imageError} />
        </div>
      </div>
      {previous !== null && (
        <a className="viewer-step viewer-previous" href={place.linkOf(previous)} aria-label="Previous photo" title="Previous photo (←)">
          ‹
        </a>
      )}
      {next !== null && (
        <a className="viewer-step viewer-next" href={place.linkOf(next)} aria-label="Next photo" title="Next photo (→)">
          ›
        </a>
      )}
      <aside id="photo-info" className="viewer-info" hidden={!info} aria-labelledby="photo-info-title">
        <div className="viewer-info-head">
          <h3 id="photo-info-title">Info</h3>
          <button type="button" className="viewer-icon" onClick={() => showInfo(false)} aria-label="Close the info">
            ×
          </button>
        </div>
        {metadata !== undefined && (
          <dl>
            <dt>Name</dt>
            <dd data-fact="name">{metadata.name}</dd>
            {metadata.description !== undefined && (
              <>
                <dt>Description</dt>
                <dd data-fact="description" className="viewer-description">
                  {metadata.description}
                </dd>
              </>
            )}
            {addedBy !== null && (
              <>
                <dt>Added by</dt>
                <dd data-fact="added-by">{addedBy}</dd>
              </>
            )}
            {favourite && (
              <>
                <dt>Favourite</dt>
                <dd data-fact="favourite">
                  <span className="favourite-heart" aria-hidden="true">
                    ♥
                  </span>{' '}
                  A favourite
                </dd>
              </>
            )}
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
            {camera !== null && (
              <>
                <dt>Camera</dt>
                <dd data-fact="camera">{camera}</dd>
              </>
            )}
            {metadata.camera?.lens !== undefined && (
              <>
                <dt>Lens</dt>
                <dd data-fact="lens">{metadata.camera.lens}</dd>
              </>
            )}
            {exposure.length > 0 && (
              <>
                <dt>Exposure</dt>
                <dd data-fact="exposure">
                  {exposure.map((part, i) => (
                    <span key={part}>
                      {i > 0 && ' · '}
                      <span className="nowrap">{part}</span>
                    </span>
                  ))}
                </dd>
              </>
            )}
            <dt>Dimensions</dt>
            <dd>
              <span data-fact="dimensions">{metadata.width !== null && metadata.height !== null ? `${metadata.width} × ${metadata.height}` : 'Unknown'}</span>
              {metadata.width !== null && metadata.height !== null && (
                <span className="muted" data-fact="megapixels">
                  {' '}
                  · {megapixelsText(metadata.width, metadata.height)}
                </span>
              )}
            </dd>
            {metadata.duration !== undefined && (
              <>
                <dt>Length</dt>
                <dd data-fact="duration">{durationText(metadata.duration)}</dd>
              </>
            )}
            <dt>Size</dt>
            <dd data-fact="size">{sizeText(metadata.size)}</dd>
            <dt>Type</dt>
            <dd data-fact="type">{metadata.type}</dd>
            <dt>{albumNames.length === 1 ? 'Album' : 'Albums'}</dt>
            <dd data-fact="album">{albumNames.join(', ')}</dd>
            {metadata.location !== undefined && (
              <>
                <dt>Place</dt>
                <dd>
                  {placeName !== null && (
                    <>
                      <span data-fact="place-name">{placeName}</span>
                      <br />
                    </>
                  )}
                  <span className="muted" data-fact="place">
                    {coordinatesText(metadata.location)}
                  </span>{' '}
                  · {/* The map is OpenStreetMap's: opening it tells them the position, which is why it is only a link. */}
                  <a href={mapLink(metadata.location)} target="_blank" rel="noreferrer noopener">
                    Map
                  </a>
                </dd>
              </>
            )}
          </dl>
        )}
        <p className="hint">
          Keys: ← → previous and next, + − 0 zoom, i info, f favourite, Escape {place.backLabel.toLowerCase()}. Wheel or pinch to zoom, double-click for 2×,
          drag to move; swipe for the next photo.
        </p>
      </aside>
    </div>
  )
}
