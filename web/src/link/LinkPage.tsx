// The page a public link opens (decision 0068; docs/web.md "Public links"): no account, the key in
// the URL's fragment. It asks the server whether the link wants a password, stretches the
// password in a worker, opens the link (kept for the tab: a reload spends no other open) and shows its album with the gallery's own grid and photo
// view, every photo checked under its writer's key as the owner's devices check it. Inside the
// page the fragment is `<secret>` or `<secret>/<photo>`: the photo view is a fragment too, so it
// never reaches the server and the back button closes it. A link that stops (expired, revoked,
// disabled) stops the page at its next read, mid-view too.
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore, type FormEvent } from 'react'
import { ClientFormatError } from '#photos/format/errors.ts'
import { linkAsksPassword, LinkPasswordError, openPublicLink, resumePublicLink, type KeptLink, type OpenedPublicLink } from '#photos/links.ts'
import { CofferProblem } from '#sdk/client.ts'
import { ErrorLine, useAction } from '../app/ui.tsx'
import { AlbumModel } from '../lib/album.ts'
import { workerArgon2id } from '../lib/argon2.ts'
import { sentenceFor } from '../lib/errors.ts'
import { countText, whenText } from '../lib/format.ts'
import { Grid, useReturnTo, type TileSource } from '../screens/gallery/Grid.tsx'
import { PhotoView, type PhotoPlace } from '../screens/gallery/PhotoView.tsx'

/** How often an open link asks for what was added (and finds out it stopped, when it did). */
const POLL_MS = 20_000

/** The fragment: the secret, and the photo shown (none: the album). */
function readFragment(): { secret: string; assetId: string | null } {
  const [secret = '', assetId] = location.hash.slice(1).split('/')
  return { secret, assetId: assetId === undefined || assetId === '' ? null : assetId }
}

function useFragment(): { secret: string; assetId: string | null } {
  const [fragment, setFragment] = useState(readFragment)
  useEffect(() => {
    const changed = () => setFragment(readFragment())
    addEventListener('hashchange', changed)
    return () => removeEventListener('hashchange', changed)
  }, [])
  return fragment
}

type Stage =
  | { readonly kind: 'probing' }
  | { readonly kind: 'password'; readonly wrong: boolean }
  | { readonly kind: 'opened'; readonly link: OpenedPublicLink; readonly model: AlbumModel }
  | { readonly kind: 'stopped'; readonly why: unknown }

/** What the page says when a link does not open, or stopped. */
function stoppedSentence(why: unknown): string {
  if (why instanceof ClientFormatError && why.code === 'malformed')
    return 'This link is incomplete: copy all of it, including the part after the #, and open it again.'
  if (why instanceof ClientFormatError) return 'This link does not open: what the server sent is not what the person who shared it sealed.'
  if (why instanceof CofferProblem && why.code === 'error.not_found') return 'This link does not exist. Check that you copied all of it.'
  if (why instanceof CofferProblem && why.code === 'error.link.denied') return 'This link does not open: part of it is missing or wrong. Copy all of it again.'
  return sentenceFor(why)
}

/** Where this tab keeps the link it opened (resumePublicLink): a reload reads on, and spends no other open. */
const keptItem = (url: string): string => `coffer-link:${url}`

function readKept(url: string): KeptLink | null {
  try {
    return JSON.parse(sessionStorage.getItem(keptItem(url)) ?? 'null') as KeptLink | null
  } catch {
    return null
  }
}

/**
 * fetch, telling `stopped` of each 410 the server answers (the link expired, was revoked or
 * disabled): the page stops at once rather than leave its tiles failing one by one; and `ended`
 * of a 401 (the kept session ended: the link is opened again).
 */
function watchedFetch(stopped: (problem: CofferProblem) => void, ended: () => void): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init)
    if (response.status === 401) ended()
    if (response.status === 410) {
      const problem = (await response
        .clone()
        .json()
        .catch(() => null)) as { code?: unknown } | null
      if (typeof problem?.code === 'string')
        stopped(new CofferProblem(410, { type: '', title: '', status: 410, detail: '', instance: '', code: problem.code }, response.headers))
    }
    return response
  }
}

export function LinkPage() {
  const { secret, assetId } = useFragment()
  const [stage, setStage] = useState<Stage>({ kind: 'probing' })
  const opening = useAction()
  const openRun = opening.run
  /** The link's URL as it was made: this page's address with the secret alone in its fragment. */
  const url = `${location.origin}${location.pathname}#${secret}`

  const open = useCallback(
    (password?: string) =>
      openRun(async () => {
        const kept = readKept(url)
        try {
          const stop = (why: unknown) => {
            sessionStorage.removeItem(keptItem(url))
            setStage({ kind: 'stopped', why })
          }
          const ended = () => {
            sessionStorage.removeItem(keptItem(url))
            location.reload()
          }
          const fetchWatched = watchedFetch(stop, ended)
          const link =
            kept !== null
              ? await resumePublicLink(url, kept, { fetch: fetchWatched })
              : await openPublicLink(url, { ...(password === undefined ? {} : { password }), argon2id: workerArgon2id, fetch: fetchWatched })
          sessionStorage.setItem(keptItem(url), JSON.stringify(link.kept))
          const { contents } = link
          const model = new AlbumModel(
            {
              client: link.client,
              recordId: contents.recordId,
              name: contents.name,
              keys: { albumId: contents.albumId, identityPublicKey: link.keys.identityPublicKey, albumKeys: contents.albumKeys, writers: contents.writers },
            },
            contents.albumId,
          )
          setStage({ kind: 'opened', link, model })
        } catch (error) {
          if (kept !== null) {
            // What this tab kept no longer opens: open the link afresh.
            sessionStorage.removeItem(keptItem(url))
            location.reload()
          } else if (error instanceof LinkPasswordError) setStage({ kind: 'password', wrong: error.wrong })
          else setStage({ kind: 'stopped', why: error })
        }
      }),
    [openRun, url],
  )

  // biome-ignore lint/correctness/useExhaustiveDependencies: opened once per page; the fragment's photo part changes within it
  useEffect(() => {
    if (readKept(url) !== null) {
      void open()
      return
    }
    linkAsksPassword(url).then(
      (asks) => (asks ? setStage({ kind: 'password', wrong: false }) : open()),
      (error: unknown) => setStage({ kind: 'stopped', why: error }),
    )
  }, [])

  const model = stage.kind === 'opened' ? stage.model : null
  useEffect(() => {
    if (model === null) return
    void model.refresh()
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void model.refresh()
    }, POLL_MS)
    return () => {
      clearInterval(timer)
      model.close()
    }
  }, [model])

  switch (stage.kind) {
    case 'probing':
      return (
        <main className="narrow link-page">
          <p className="loading" role="status">
            Opening the link…
          </p>
        </main>
      )
    case 'password':
      return <PasswordForm wrong={stage.wrong} busy={opening.busy} onOpen={(password) => void open(password)} />
    case 'stopped':
      return (
        <main className="narrow link-page">
          <h1>Shared photos</h1>
          <p className="notice" role="alert" data-stopped>
            {stoppedSentence(stage.why)}
          </p>
        </main>
      )
    case 'opened':
      return <LinkedAlbum link={stage.link} model={stage.model} secret={secret} assetId={assetId} />
  }
}

function PasswordForm({ wrong, busy, onOpen }: { wrong: boolean; busy: boolean; onOpen: (password: string) => void }) {
  const [password, setPassword] = useState('')
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (password !== '') onOpen(password)
  }
  return (
    <main className="narrow link-page">
      <h1>Shared photos</h1>
      <p>The person who shared these photos protected them with a password.</p>
      <form onSubmit={submit}>
        <label>
          Password
          <input type="password" autoComplete="off" value={password} onChange={(event) => setPassword(event.target.value)} disabled={busy} />
        </label>
        {wrong && !busy && (
          <p className="error" role="alert">
            That password is not this link’s. Check it with the person who shared it.
          </p>
        )}
        <button type="submit" disabled={busy || password === ''}>
          {busy ? 'Unlocking…' : 'Open'}
        </button>
      </form>
    </main>
  )
}

const NOTHING_SELECTED: ReadonlySet<string> = new Set()
const ignore = () => {}

function LinkedAlbum({ link, model, secret, assetId }: { link: OpenedPublicLink; model: AlbumModel; secret: string; assetId: string | null }) {
  const subscribe = useCallback((listener: () => void) => model.subscribe(listener), [model])
  const ids = useSyncExternalStore(subscribe, () => model.ids)
  const scanned = useSyncExternalStore(subscribe, () => model.scanned)
  const returnTo = useReturnTo(assetId)
  const source = useMemo<TileSource>(
    () => ({
      albumId: model.albumId,
      tile: (id) => model.tile(id),
      watch: (id, listener, ahead) => model.watch(id, listener, ahead),
      hrefOf: (id) => `#${secret}/${id}`,
    }),
    [model, secret],
  )
  const place = useMemo<PhotoPlace>(
    () => ({ back: `#${secret}`, backLabel: 'Back to the album', linkOf: (id) => `#${secret}/${id}`, neighbour: (id, step) => model.neighbour(id, step) }),
    [model, secret],
  )
  const name = link.contents.name === '' ? 'Shared photos' : link.contents.name
  useEffect(() => {
    document.title = name
  }, [name])
  const facts = [
    scanned ? countText(ids.length, 'photo') : 'Reading the album…',
    link.downloads ? null : 'view only',
    link.expiresAt === null ? null : `until ${whenText(link.expiresAt)}`,
  ].filter((fact) => fact !== null)
  return (
    <main className="album link-page">
      <header className="link-head">
        <h1>{name}</h1>
        <p className="muted" data-facts>
          {facts.join(' · ')}
        </p>
      </header>
      <ErrorLine error={model.scanError} />
      <Grid
        source={source}
        ids={ids}
        months={model.months}
        selecting={false}
        selected={NOTHING_SELECTED}
        onSelect={ignore}
        onSelectItems={ignore}
        returnTo={returnTo}
      />
      {assetId !== null && (
        <PhotoView key={`${assetId}@${model.positionOf(assetId)}`} model={model} assetId={assetId} place={place} link={{ downloads: link.downloads }} />
      )}
      <footer className="link-foot muted">Shared with Coffer Photos. Decrypted in this page with the key in the link, which never reaches the server.</footer>
    </main>
  )
}
