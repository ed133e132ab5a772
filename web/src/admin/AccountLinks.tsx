// An account's public links as the operator sees them (GET /v1/admin/links?user_id=; decision
// 0068): each link's id, album, what it allows, how often it was opened and where it stands, and
// Disable for one reported (with the reason its owner sees beside it). The operator sees no URL:
// the link's secret is only in the owner's sealed copy, which this list leaves out.
import { useCallback, useEffect, useState } from 'react'
import type { CofferAdmin } from '#sdk/admin.ts'
import type { LinkView } from '#sdk/client.ts'
import { ErrorLine, useAction } from '../app/ui.tsx'
import { countText, whenText } from '../lib/format.ts'
import { Confirm } from './Confirm.tsx'
import { asOperator, type Lock } from './errors.ts'

const STATE_TEXT: Readonly<Record<LinkView['state'], string>> = {
  active: 'works',
  expired: 'expired',
  used_up: 'opened as often as allowed',
  revoked: 'revoked by its owner',
  disabled: 'disabled',
}

function factsOf(link: LinkView): string {
  return [
    link.asset_ids === null ? 'the whole album' : countText(link.asset_ids.length, 'photo'),
    link.downloads ? 'downloads' : 'view only',
    link.password ? 'password' : null,
    `made ${whenText(link.created_at)}`,
    link.expires_at === null ? null : `until ${whenText(link.expires_at)}`,
    `opened ${countText(link.opens, 'time')}`,
  ]
    .filter((fact) => fact !== null)
    .join(' · ')
}

export function AccountLinks({ admin, userId, onLock }: { admin: CofferAdmin; userId: string; onLock: Lock }) {
  const [links, setLinks] = useState<readonly LinkView[] | null>(null)
  const [disabling, setDisabling] = useState<{ readonly link: LinkView; readonly reason: string } | null>(null)
  const { error, run } = useAction()
  const load = useCallback(async () => {
    const listed = await asOperator('account', onLock, () => admin.listLinks({ userId }))
    if (listed !== undefined) setLinks(listed.links)
  }, [admin, userId, onLock])
  useEffect(() => {
    void run(load)
  }, [run, load])

  const disable = (link: LinkView, reason: string) =>
    void run(async () => {
      setDisabling(null)
      const why = reason.trim() === '' ? undefined : reason.trim()
      await asOperator('account', onLock, () => admin.disableLink(link.link_id, why))
      await load()
    })

  return (
    <>
      <h3>Public links</h3>
      <p className="hint">Links that show this account’s albums to people with no account. You see their ids, never their keys.</p>
      <ErrorLine error={error} />
      {links !== null && links.length === 0 && <p>None.</p>}
      {links !== null && links.length > 0 && (
        <ul className="admin-links">
          {links.map((link) => (
            <li key={link.link_id} data-link={link.link_id} data-state={link.state}>
              <code>{link.link_id}</code> <span>{STATE_TEXT[link.state]}</span>
              {link.state === 'disabled' && link.disabled_reason !== null && <span> ({link.disabled_reason})</span>}
              <span className="hint"> {factsOf(link)}</span>
              {link.state !== 'disabled' && link.state !== 'revoked' && (
                <button type="button" className="danger" onClick={() => setDisabling({ link, reason: '' })}>
                  Disable
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {disabling !== null && (
        <Confirm
          title={`Disable the link ${disabling.link.link_id}?`}
          confirmLabel="Disable"
          reason={disabling.reason}
          onReason={(reason) => setDisabling({ ...disabling, reason })}
          onConfirm={() => disable(disabling.link, disabling.reason)}
          onCancel={() => setDisabling(null)}
        >
          <p>Whoever has the link sees nothing more through it, at once, even a page already open. Its owner sees it disabled, with your reason.</p>
        </Confirm>
      )}
    </>
  )
}
