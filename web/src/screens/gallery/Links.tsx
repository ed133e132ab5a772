// Public links of an album (decision 0068), on its owner's album page, folded under "Links" until
// opened: each link with its URL to copy, what it allows, how often it was opened, and Revoke;
// and a form to make one (downloads or view only, an expiry, a password, a limit on opens). The
// selection bar makes a link to the photos chosen (LinkMaker in a dialog). The link's key is made
// here and travels only in the URL's fragment; the password is stretched in a worker.
import { useCallback, useEffect, useState, type FormEvent } from 'react'
import { createLink, listOwnLinks, revokeLink, type LinkOptions, type OwnedLink } from '#photos/links.ts'
import type { SharingAccount } from '#photos/sharing.ts'
import { ErrorLine, Modal, useAction } from '../../app/ui.tsx'
import { workerArgon2id } from '../../lib/argon2.ts'
import { countText, whenText } from '../../lib/format.ts'

const DAY_S = 86_400
const EXPIRIES: ReadonlyArray<readonly [label: string, seconds: number | null]> = [
  ['Never', null],
  ['In a day', DAY_S],
  ['In a week', 7 * DAY_S],
  ['In 30 days', 30 * DAY_S],
]

/** What a link allows and how it stands, in words. */
function factsOf({ link }: OwnedLink): string {
  const state = {
    active: null,
    expired: 'expired',
    used_up: 'opened as often as allowed',
    revoked: 'revoked',
    disabled: `turned off by the operator${link.disabled_reason === null ? '' : `: ${link.disabled_reason}`}`,
  }[link.state]
  return [
    state,
    link.asset_ids === null ? 'the whole album' : countText(link.asset_ids.length, 'photo'),
    link.downloads ? 'downloads allowed' : 'view only',
    link.password ? 'password' : null,
    link.expires_at === null ? null : `until ${whenText(link.expires_at)}`,
    `opened ${countText(link.opens, 'time')}${link.max_opens === null ? '' : ` of ${link.max_opens}`}`,
  ]
    .filter((fact) => fact !== null)
    .join(' · ')
}

/** A link's URL, selectable, with Copy. */
function LinkUrl({ url }: { url: string }) {
  const [copied, setCopied] = useState(false)
  return (
    <span className="link-url">
      <input readOnly value={url} aria-label="Link" onFocus={(event) => event.currentTarget.select()} />
      <button
        type="button"
        className="secondary"
        onClick={() =>
          void navigator.clipboard.writeText(url).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </span>
  )
}

/** The form that makes a link to the album, or to `assetIds` of it; `onMade` is told the new link. */
export function LinkMaker({
  sharing,
  albumId,
  assetIds,
  onMade,
}: {
  sharing: SharingAccount
  albumId: string
  assetIds?: readonly string[]
  onMade: (made: OwnedLink) => void
}) {
  const [downloads, setDownloads] = useState(true)
  const [expiresInS, setExpiresInS] = useState<number | null>(null)
  const [password, setPassword] = useState('')
  const [maxOpens, setMaxOpens] = useState('')
  const make = useAction()
  const submit = (event: FormEvent) => {
    event.preventDefault()
    void make.run(async () => {
      const options: LinkOptions = {
        downloads,
        argon2id: workerArgon2id,
        ...(assetIds === undefined ? {} : { assetIds }),
        ...(expiresInS === null ? {} : { expiresInS }),
        ...(password === '' ? {} : { password }),
        ...(maxOpens === '' ? {} : { maxOpens: Number(maxOpens) }),
      }
      onMade(await createLink(sharing, albumId, options))
      setPassword('')
    })
  }
  return (
    <form className="link-form" onSubmit={submit}>
      <label className="check">
        <input type="checkbox" checked={downloads} onChange={(event) => setDownloads(event.target.checked)} /> Allow downloads of the originals
      </label>
      <label>
        Expires
        <select value={String(expiresInS)} onChange={(event) => setExpiresInS(event.target.value === 'null' ? null : Number(event.target.value))}>
          {EXPIRIES.map(([label, seconds]) => (
            <option key={label} value={String(seconds)}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Password (optional)
        <input type="password" autoComplete="new-password" value={password} onChange={(event) => setPassword(event.target.value)} />
      </label>
      <label>
        Opens allowed (optional)
        <input type="number" min={1} inputMode="numeric" value={maxOpens} onChange={(event) => setMaxOpens(event.target.value)} />
      </label>
      <button type="submit" disabled={make.busy}>
        {make.busy ? 'Making the link…' : 'Make link'}
      </button>
      <ErrorLine error={make.error} />
    </form>
  )
}

export function Links({ sharing, albumId }: { sharing: SharingAccount; albumId: string }) {
  const [links, setLinks] = useState<readonly OwnedLink[] | null>(null)
  const change = useAction()
  const changeRun = change.run
  const reload = useCallback(async () => setLinks(await listOwnLinks(sharing.library, albumId)), [sharing, albumId])
  useEffect(() => {
    void changeRun(reload)
  }, [changeRun, reload])
  const works = ({ link }: OwnedLink) => link.state === 'active' || link.state === 'used_up'
  // Those that still work first (newest first), then those that stopped.
  const listed = links === null ? null : [...links.filter(works), ...links.filter((owned) => !works(owned))]
  const working = (links ?? []).filter(works)
  return (
    <details className="links">
      <summary>{working.length === 0 ? 'Links' : `Links: ${countText(working.length, 'link')} working`}</summary>
      <p className="hint">Anyone with a link sees these photos without an account. Its key is in the link itself: the server cannot open them.</p>
      {listed !== null && listed.length > 0 && (
        <ul className="link-list">
          {listed.map((owned) => (
            <li key={owned.link.link_id} data-link={owned.link.link_id} data-state={owned.link.state}>
              <LinkUrl url={owned.url} />
              <span className="person-role">{factsOf(owned)}</span>
              {works(owned) && (
                <button
                  type="button"
                  className="secondary"
                  disabled={change.busy}
                  onClick={() =>
                    void changeRun(async () => {
                      await revokeLink(sharing.library, owned.link.link_id)
                      await reload()
                    })
                  }
                >
                  Revoke
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <ErrorLine error={change.error} />
      <LinkMaker sharing={sharing} albumId={albumId} onMade={() => void changeRun(reload)} />
    </details>
  )
}

/** A link to the photos chosen, made in a dialog: the form, then the link to copy. */
export function SelectionLink({
  sharing,
  albumId,
  assetIds,
  onDone,
}: {
  sharing: SharingAccount
  albumId: string
  assetIds: readonly string[]
  onDone: () => void
}) {
  const [made, setMade] = useState<OwnedLink | null>(null)
  return (
    <Modal title={`A link to ${countText(assetIds.length, 'photo')}`} onCancel={onDone}>
      {made === null ? (
        <LinkMaker sharing={sharing} albumId={albumId} assetIds={assetIds} onMade={setMade} />
      ) : (
        <>
          <p>Anyone with this link sees these photos, and no others of the album.</p>
          <LinkUrl url={made.url} />
        </>
      )}
      <div className="actions">
        <button type="button" className="secondary" onClick={onDone}>
          {made === null ? 'Cancel' : 'Done'}
        </button>
      </div>
    </Modal>
  )
}
