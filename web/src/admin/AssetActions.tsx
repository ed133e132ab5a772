// Acting on one asset by its id: take it down or restore it, put it under legal hold, lift the hold. The
// answer is the moderation record of the account that owns it: shown in the account card when
// that is the account on screen, else on its own (the API names no owner for an asset id).
import { useState, type FormEvent } from 'react'
import type { AdminAccount, CofferAdmin } from '#sdk/admin.ts'
import type { ModerationRecord } from '#sdk/client.ts'
import { ErrorLine, useAction } from '../app/ui.tsx'
import { Confirm, REASON_MAX } from './Confirm.tsx'
import { asOperator, type Lock } from './errors.ts'
import { ID_EXAMPLE, UUID } from './ids.ts'
import { RecordEvents } from './Record.tsx'

type AssetAction = 'take-down' | 'restore' | 'legal-hold' | 'lift-hold'

const ACTIONS: Readonly<
  Record<AssetAction, { label: string; done: string; call: (admin: CofferAdmin, assetId: string, reason?: string) => Promise<ModerationRecord> }>
> = {
  'take-down': { label: 'Take down', done: 'Asset taken down: its files are withheld.', call: (admin, id, reason) => admin.takeDown(id, reason) },
  restore: { label: 'Restore', done: 'Asset restored: its files are served again.', call: (admin, id, reason) => admin.restore(id, reason) },
  'legal-hold': {
    label: 'Legal hold',
    done: 'Asset put under legal hold: none of its files will be deleted.',
    call: (admin, id, reason) => admin.legalHold(id, reason),
  },
  'lift-hold': { label: 'Lift hold', done: 'Legal hold lifted.', call: (admin, id, reason) => admin.liftHold(id, reason) },
}

interface Props {
  readonly admin: CofferAdmin
  /** The account on screen, if any. */
  readonly account: AdminAccount | null
  readonly onAccount: (account: AdminAccount) => void
  readonly onLock: Lock
}

export function AssetActions({ admin, account, onAccount, onLock }: Props) {
  const [assetId, setAssetId] = useState('')
  const [reason, setReason] = useState('')
  const [confirming, setConfirming] = useState(false)
  const [done, setDone] = useState<string | null>(null)
  const [owner, setOwner] = useState<{ assetId: string; record: ModerationRecord } | null>(null)
  const { busy, error, run } = useAction()

  const act = (action: AssetAction) =>
    void run(async () => {
      setConfirming(false)
      setDone(null)
      setOwner(null)
      const id = assetId.trim().toLowerCase()
      if (!UUID.test(id)) throw new Error(`An asset id is a UUID, such as ${ID_EXAMPLE}. Check it and try again.`)
      const why = reason.trim() === '' ? undefined : reason.trim()
      const record = await asOperator('asset', onLock, () => ACTIONS[action].call(admin, id, why))
      if (record === undefined) return
      const shown = account === null ? undefined : await asOperator('account', onLock, () => admin.account(account.user_id))
      if (shown !== undefined && JSON.stringify(shown.moderation) === JSON.stringify(record)) onAccount(shown)
      else setOwner({ assetId: id, record })
      setReason('')
      setDone(ACTIONS[action].done)
    })

  const submit = (event: FormEvent) => event.preventDefault()

  return (
    <section className="card" aria-labelledby="asset-heading">
      <h2 id="asset-heading">Act on an asset</h2>
      <p className="hint">An asset is one photo or video with its versions. Its id is in the owner’s app and in complaints about it.</p>
      <form onSubmit={submit}>
        <label>
          Asset id
          <input name="asset-id" autoComplete="off" spellCheck={false} value={assetId} onChange={(e) => setAssetId(e.target.value)} />
        </label>
        <label>
          Reason (optional; the owner sees it)
          <input name="asset-reason" maxLength={REASON_MAX} value={reason} onChange={(e) => setReason(e.target.value)} />
        </label>
        <ErrorLine error={error} />
        {done !== null && (
          <p className="ok" role="status">
            {done}
          </p>
        )}
        <button type="button" className="danger" disabled={busy} onClick={() => setConfirming(true)}>
          {ACTIONS['take-down'].label}
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={() => act('restore')}>
          {ACTIONS.restore.label}
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={() => act('legal-hold')}>
          {ACTIONS['legal-hold'].label}
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={() => act('lift-hold')}>
          {ACTIONS['lift-hold'].label}
        </button>
      </form>
      {owner !== null && (
        <>
          <h3>Moderation record of the asset’s owner</h3>
          <p className="hint">
            {account === null ? 'Look the owner up to see the rest of the account.' : 'The asset belongs to another account than the one shown above.'}
          </p>
          <RecordEvents record={owner.record} />
        </>
      )}
      {confirming && (
        <Confirm
          title="Take this asset down?"
          confirmLabel="Take down"
          reason={reason}
          onConfirm={() => act('take-down')}
          onCancel={() => setConfirming(false)}
        >
          <p>
            Asset <code>{assetId.trim()}</code>: its files are withheld from everyone, its owner included, and no longer count as safely stored. The owner sees
            the takedown in their record.
          </p>
        </Confirm>
      )}
    </section>
  )
}
