// An album: its name (renamed here), its grid of photos, the uploads (file and folder pickers,
// drag-and-drop of files and folders, and what the Photos screen's chooser handed over), the
// selection and its bar (Selection.tsx: download as a zip, delete to Recently deleted), Download album, and the photo
// view when the route names a photo (#/albums/<album>/<asset>), drawn over the grid so that going
// back keeps the place; its menu sets the album's cover.
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore, type DragEvent, type FormEvent, type KeyboardEvent, type ReactNode } from 'react'
import { renameAlbum, setAlbumCover } from '#photos/albums.ts'
import { TAMPERING } from '#photos/tampering.ts'
import type { CofferClient } from '#sdk/client.ts'
import { linkTo } from '../../app/router.ts'
import { useSession } from '../../app/session.tsx'
import { ErrorLine, Heading, useAction } from '../../app/ui.tsx'
import { AlbumModel, type HistoryState } from '../../lib/album.ts'
import { problemOf } from '../../lib/errors.ts'
import { countText } from '../../lib/format.ts'
import { albumAccess, type AlbumAccess } from '../../lib/sharing.ts'
import { browserContacts } from '../../lib/contacts.ts'
import type { SharingAccount } from '#photos/sharing.ts'
import { zipNameOf } from '../../lib/zip-download.ts'
import type { SavedKeys } from '../../lib/store.ts'
import { dropOf, droppedItems, type Picked } from '../../lib/picked.ts'
import { takeHandedOver } from '../../lib/upload-handoff.ts'
import { replacePhoto, Uploads } from '../../lib/uploads.ts'
import { Grid, useReturnTo } from './Grid.tsx'
import { Pickers } from './Pickers.tsx'
import { Links, SelectionLink } from './Links.tsx'
import { People } from './People.tsx'
import { PhotoView, type PhotoSharing } from './PhotoView.tsx'
import { useOrganiseSelection } from './OrganiseSelection.tsx'
import { deletion, SelectionBar, useSelectMode, useZipSave, ZipStatus } from './Selection.tsx'
import { UndoToast, useUndoable } from './Undo.tsx'
import { UploadPanel } from './UploadPanel.tsx'

/** How often an open album asks for what other devices added. */
const POLL_MS = 20_000

function useAlbum(access: AlbumAccess | null, albumId: string): { model: AlbumModel; uploads: Uploads } | null {
  const [opened, setOpened] = useState<{ model: AlbumModel; uploads: Uploads } | null>(null)
  useEffect(() => {
    if (access === null) return
    const model = new AlbumModel(access.library, albumId, { checkHistory: true, shared: access.shared })
    const uploads = new Uploads(model)
    setOpened({ model, uploads })
    // The album first (isStored needs its assets), then what an earlier visit left to upload,
    // and what the Photos screen's upload chooser handed over for this album.
    let closed = false
    void model.refresh().then(() => {
      if (closed) return
      void uploads.resume()
      for (const files of takeHandedOver(albumId)) void uploads.add(files)
    })
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void model.refresh()
    }, POLL_MS)
    return () => {
      closed = true
      clearInterval(timer)
      uploads.close()
      model.close()
    }
  }, [access, albumId])
  return opened?.model.albumId === albumId ? opened : null
}

const photos = (n: number): string => countText(n, 'photo')

/** Who added each photo of an album others are in, and what this account may change (the owner anything, a contributor its own); undefined for an album only its owner is in. */
function photoSharing(access: AlbumAccess, userId: string): PhotoSharing | undefined {
  const { owner, members } = access.members
  if (access.role === 'owner' && members.length === 0) return undefined
  const emails = new Map([[owner.user_id, owner.email], ...members.map((member) => [member.user_id, member.email] as const)])
  return {
    addedBy: (writer) => (writer === userId ? 'you' : (emails.get(writer) ?? null)),
    mayChange: (writer) => access.role === 'owner' || (access.role === 'contributor' && writer === userId),
    mayOrganise: access.role === 'owner',
  }
}

export function Album({ client, keys, albumId, assetId }: { client: CofferClient; keys: SavedKeys; albumId: string; assetId: string | null }) {
  const [access, setAccess] = useState<AlbumAccess | null>(null)
  const load = useAction()
  const loadRun = load.run
  useEffect(() => {
    void loadRun(async () => setAccess(await albumAccess(client, keys, albumId)))
  }, [client, keys, albumId, loadRun])
  const opened = useAlbum(access, albumId)
  // The owner's links (Links.tsx) seal with the same account its sharing does.
  const linkSharing = useMemo(() => (access?.role === 'owner' ? { library: access.library, contacts: browserContacts(keys.masterKey) } : null), [access, keys])
  if (load.error !== null)
    return (
      <main>
        <p className="crumbs">
          <a href={linkTo('albums')}>Albums</a>
        </p>
        <Heading>This album does not open</Heading>
        <ErrorLine error={load.error} />
      </main>
    )
  if (opened === null || access === null)
    return (
      <p className="loading" role="status">
        Opening the album…
      </p>
    )
  return (
    <OpenAlbum
      model={opened.model}
      uploads={opened.uploads}
      assetId={assetId}
      people={(trusted) => <People client={client} keys={keys} access={access} albumId={albumId} trusted={trusted} />}
      role={access.role}
      sharing={photoSharing(access, keys.userId)}
      linkSharing={linkSharing}
    />
  )
}

function OpenAlbum({
  model,
  uploads,
  assetId,
  people,
  role,
  sharing,
  linkSharing,
}: {
  model: AlbumModel
  uploads: Uploads
  assetId: string | null
  /** The album's people, told whether the album's history checked out. */
  people: (trusted: boolean) => ReactNode
  role: AlbumAccess['role']
  sharing: PhotoSharing | undefined
  /** The owner's, to make and list the album's public links; null for a member. */
  linkSharing: SharingAccount | null
}) {
  const subscribeModel = useCallback((listener: () => void) => model.subscribe(listener), [model])
  const ids = useSyncExternalStore(subscribeModel, () => model.ids)
  const history = useSyncExternalStore(subscribeModel, () => model.history)
  const subscribeUploads = useCallback((listener: () => void) => uploads.subscribe(listener), [uploads])
  const items = useSyncExternalStore(subscribeUploads, () => uploads.items)
  const adding = useSyncExternalStore(subscribeUploads, () => uploads.adding)
  const { selected, select, selectItems, selectAll, selecting, startSelecting, endSelection } = useSelectMode(ids)
  const zip = useZipSave()
  const [dropping, setDropping] = useState(false)
  const { toast, start, startReversible, undo, dismiss } = useUndoable()
  const organise = useOrganiseSelection(
    model.library,
    () => inOrder(selected),
    () => {
      endSelection()
      void model.refresh()
    },
    model.albumId,
  )
  const { watch } = useSession()
  // A viewer adds and deletes nothing: the album is shown as a suspended account's is, without saying so.
  const viewer = role === 'viewer'
  const suspended = watch.record?.standing === 'suspended'
  // An upload refused for a suspension the page did not know of yet: read the record now (the banner, the disabled button).
  const refusedAsSuspended = items.some((item) => item.state === 'failed' && problemOf(item.error)?.code === 'error.account.suspended')
  const refreshRecord = watch.refresh
  useEffect(() => {
    if (refusedAsSuspended) refreshRecord()
  }, [refusedAsSuspended, refreshRecord])
  const returnTo = useReturnTo(assetId)
  const [linking, setLinking] = useState<readonly string[] | null>(null)

  const remove = (assetIds: readonly string[]) => {
    endSelection()
    if (assetId !== null) location.hash = linkTo('albums', model.albumId)
    startReversible(
      deletion(
        assetIds.map((id) => ({ model, assetId: id })),
        { hide: (hiding, hidden) => model.hide(hiding, hidden), refresh: () => model.refresh() },
      ),
    )
  }
  const zipName = zipNameOf(model.name ?? 'Album')
  const inOrder = (chosen: ReadonlySet<string>) => ids.filter((id) => chosen.has(id)).map((id) => ({ model, assetId: id }))

  const replace = (id: string, file: File) =>
    start({
      label: `Replacing the photo with ${file.name}`,
      done: `Replaced the photo with ${file.name}`,
      run: async () => {
        await replacePhoto(model, id, file)
        await model.refresh()
      },
      undone: () => {},
    })

  const add = (files: Iterable<Picked> | AsyncIterable<Picked>) => {
    if (!suspended && !viewer) void uploads.add(files)
  }

  const dragOver = (event: DragEvent) => {
    if (viewer || !event.dataTransfer.types.includes('Files')) return
    event.preventDefault()
    event.dataTransfer.dropEffect = 'copy'
    setDropping(true)
  }
  const drop = (event: DragEvent) => {
    event.preventDefault()
    setDropping(false)
    // The drop's entries are taken now (they cannot be later); the folders in it are read as the upload goes.
    const { entries, loose } = dropOf(event.dataTransfer)
    add(droppedItems(entries, loose))
  }

  const cover = useAction()
  const empty = model.scanned && ids.length === 0 && items.length === 0 && !suspended && !viewer
  const setCover = (id: string) => void cover.run(async () => model.recordChanged(await setAlbumCover(model.library, model.albumId, id)))

  return (
    <main
      className={dropping ? 'album dropping' : 'album'}
      data-history={history.state}
      onDragOver={dragOver}
      onDragLeave={() => setDropping(false)}
      onDrop={drop}
    >
      <p className="crumbs">
        <a href={linkTo('albums')}>Albums</a>
      </p>
      <AlbumTitle model={model} canRename={role === 'owner'} />
      <HistoryWarning history={history} />
      <div className="toolbar">
        {!viewer && <Pickers onPicked={add} disabled={suspended} describedBy={suspended ? 'adding-paused' : undefined} />}
        <button type="button" className="secondary" aria-pressed={selecting} onClick={() => (selecting ? endSelection() : startSelecting())}>
          {selecting ? 'Cancel selection' : 'Select'}
        </button>
        <button
          type="button"
          className="secondary"
          disabled={ids.length === 0 || zip.busy}
          onClick={() =>
            zip.save(
              zipName,
              ids.map((id) => ({ model, assetId: id })),
            )
          }
        >
          Download album
        </button>
        <a href={linkTo('custody', model.albumId)}>Custody of this album</a>
      </div>
      {suspended && (
        <p id="adding-paused" className="notice">
          You cannot add photos while your account is suspended. <a href={linkTo('record')}>Your moderation record</a> says why; to ask about it, contact the
          operator of this server.
        </p>
      )}
      {!empty && (
        <p className="hint">
          {model.scanned ? `${photos(ids.length)}.` : `${photos(ids.length)} so far…`}
          {suspended || viewer ? '' : ' Drop photos or folders anywhere on this page to add them.'}
        </p>
      )}
      <ErrorLine error={model.scanError} />
      <ZipStatus busy={zip.busy} error={zip.error} note={zip.note} />
      {selecting && (
        <SelectionBar
          count={selected.size}
          total={ids.length}
          onSelectAll={selectAll}
          onClear={endSelection}
          actions={[
            { label: 'Download', busy: zip.busy, run: () => zip.save(zipName, inOrder(selected)) },
            ...(role === 'owner' ? organise.actions : []),
            ...(linkSharing === null ? [] : [{ label: 'Link', run: () => setLinking(ids.filter((id) => selected.has(id))) }]),
            ...(viewer ? [] : [{ label: 'Delete', danger: true, run: () => remove(ids.filter((id) => selected.has(id))) }]),
          ]}
        />
      )}
      {organise.shown}
      {people(history.state === 'trusted')}
      {linkSharing !== null && <Links sharing={linkSharing} albumId={model.albumId} />}
      {linkSharing !== null && linking !== null && (
        <SelectionLink
          sharing={linkSharing}
          albumId={model.albumId}
          assetIds={linking}
          onDone={() => {
            setLinking(null)
            endSelection()
          }}
        />
      )}
      <UploadPanel uploads={uploads} items={items} suspended={suspended} adding={adding} />
      {empty && (
        <section className="empty-state" aria-labelledby="album-empty">
          <h2 id="album-empty">Add photos</h2>
          <p>
            Drag photos or folders onto this page, or choose Add photos above. They are encrypted on this device before they are uploaded, and only your devices
            can open them.
          </p>
        </section>
      )}
      <ErrorLine error={cover.error} />
      <Grid
        source={model}
        ids={ids}
        months={model.months}
        selecting={selecting}
        selected={selected}
        onSelect={select}
        onSelectItems={selectItems}
        returnTo={returnTo}
      />
      {/* One view per version: a replace moves the asset to a new feed position, and the view opens the new version. */}
      {assetId !== null && (
        <PhotoView
          key={`${assetId}@${model.positionOf(assetId)}`}
          model={model}
          assetId={assetId}
          onDelete={remove}
          onReplace={replace}
          cover={{ current: cover.busy ? null : model.cover, set: setCover }}
          onChanged={() => void model.refresh()}
          {...(sharing === undefined ? {} : { sharing })}
        />
      )}
      <UndoToast toast={toast} undo={undo} dismiss={dismiss} />
    </main>
  )
}

const sentence = (text: string): string => `${text.charAt(0).toUpperCase()}${text.slice(1)}`

/**
 * The warning of a server found rewriting the album's history (lib/album.ts HistoryState): said
 * as what it is, not as a failure to load, and with what to do.
 */
function HistoryWarning({ history }: { history: HistoryState }) {
  if (history.state !== 'tampered') return null
  const { error } = history
  return (
    <section className="tampered" role="alert" aria-labelledby="tampered-title" data-kind={error.kind}>
      <h2 id="tampered-title" className="tampered-title">
        The server changed this album's history
      </h2>
      <p>
        {sentence(TAMPERING[error.kind])}. This is not a network problem: the server is not trustworthy, and what it shows of this album is not what your
        devices wrote.
      </p>
      <p>Keep your own copies of these photos. Do not delete anything from your devices until the album checks out again.</p>
      <p className="hint">Details: {error.detail}.</p>
    </section>
  )
}

/** The album's name, and a Rename button that turns it into a form (Escape or Cancel leave it as it was). */
function AlbumTitle({ model, canRename }: { model: AlbumModel; canRename: boolean }) {
  const [renaming, setRenaming] = useState(false)
  const [draft, setDraft] = useState('')
  const rename = useAction()
  const name = model.name
  const submit = (event: FormEvent) => {
    event.preventDefault()
    void rename.run(async () => {
      model.recordChanged(await renameAlbum(model.library, model.albumId, draft))
      setRenaming(false)
    })
  }
  const cancelOnEscape = (event: KeyboardEvent) => {
    if (event.key === 'Escape') setRenaming(false)
  }
  if (!renaming)
    return (
      <div className="album-title">
        <Heading>{name === undefined ? 'Album' : name === null ? 'Unnamed album' : name}</Heading>
        {canRename && (
          <button
            type="button"
            className="secondary"
            disabled={name === undefined}
            onClick={() => {
              setDraft(name ?? '')
              setRenaming(true)
            }}
          >
            Rename
          </button>
        )}
      </div>
    )
  return (
    <form className="album-title rename" onSubmit={submit} onKeyDown={cancelOnEscape}>
      <label>
        Album name
        {/* biome-ignore lint/a11y/noAutofocus: the form replaces the heading the person chose to rename */}
        <input name="album-name" required maxLength={200} autoFocus value={draft} onChange={(e) => setDraft(e.target.value)} />
      </label>
      <button type="submit" disabled={rename.busy}>
        {rename.busy ? 'Renaming…' : 'Save'}
      </button>
      <button type="button" className="secondary" onClick={() => setRenaming(false)}>
        Cancel
      </button>
      <ErrorLine error={rename.error} />
    </form>
  )
}
