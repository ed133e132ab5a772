// One account as the operator sees it (GET /v1/admin/accounts/{user_id}): who, since when, its
// standing, what it stores, its second factor (with its recovery codes left), its public links
// (AccountLinks.tsx) and its moderation record; suspend or reinstate it, reset its second factor, delete it. A deleted account is a
// tombstone: its record and what a hold keeps are shown, and nothing more can be done to it.
import { useState } from 'react'
import type { AdminAccount, CofferAdmin } from '#sdk/admin.ts'
import { ErrorLine, useAction } from '../app/ui.tsx'
import { countText, sizeText, whenText } from '../lib/format.ts'
import { Confirm, REASON_MAX } from './Confirm.tsx'
import { AccountLinks } from './AccountLinks.tsx'
import { asOperator, type Lock } from './errors.ts'
import { RecordEvents } from './Record.tsx'

/** None left: a lost phone can only be answered with a reset. */
function recoveryCodesText(remaining: number): string {
  if (remaining === 0) return 'no recovery codes left'
  return `${countText(remaining, 'recovery code')} left`
}

interface Props {
  readonly admin: CofferAdmin
  readonly account: AdminAccount
  readonly onChange: (account: AdminAccount) => void
  readonly onLock: Lock
}

export function AccountCard({ admin, account, onChange, onLock }: Props) {
  const [reason, setReason] = useState('')
  const [confirming, setConfirming] = useState(false)
  // Said of the account this action produced: gone once anything else changes it.
  const [done, setDone] = useState<{ readonly text: string; readonly of: AdminAccount } | null>(null)
  const { busy, error, run } = useAction()
  const suspended = account.state === 'suspended'
  const { assets, bytes } = account.usage
  const [resetReason, setResetReason] = useState<string | null>(null)
  const [resetDone, setResetDone] = useState<AdminAccount | null>(null)
  const reset = useAction()
  const deleted = account.state === 'deleted'
  const [deleteReason, setDeleteReason] = useState<string | null>(null)
  const removal = useAction()

  const act = () =>
    void run(async () => {
      setConfirming(false)
      setDone(null)
      const why = reason.trim() === '' ? undefined : reason.trim()
      const changed = await asOperator('account', onLock, async () => {
        await (suspended ? admin.reinstate(account.user_id, why) : admin.suspend(account.user_id, why))
        // The answer is the record alone: the state with it is read again.
        return admin.account(account.user_id)
      })
      if (changed === undefined) return
      onChange(changed)
      setReason('')
      setDone({ text: suspended ? 'Account reinstated.' : 'Account suspended.', of: changed })
    })

  const resetSecondFactor = (reasonText: string) =>
    void reset.run(async () => {
      setResetReason(null)
      setResetDone(null)
      const why = reasonText.trim() === '' ? undefined : reasonText.trim()
      const changed = await asOperator('account', onLock, async () => {
        await admin.resetSecondFactor(account.user_id, why)
        return admin.account(account.user_id)
      })
      if (changed === undefined) return
      onChange(changed)
      setResetDone(changed)
    })

  const deleteAccount = (reasonText: string) =>
    void removal.run(async () => {
      setDeleteReason(null)
      const why = reasonText.trim() === '' ? undefined : reasonText.trim()
      const changed = await asOperator('account', onLock, async () => {
        await admin.deleteAccount(account.user_id, why)
        return admin.account(account.user_id)
      })
      if (changed !== undefined) onChange(changed)
    })

  return (
    <section className="card" aria-labelledby="account-email">
      <h2 id="account-email">{deleted ? 'Deleted account' : account.email}</h2>
      <dl className="facts">
        <dt>Account id</dt>
        <dd>
          <code>{account.user_id}</code>
        </dd>
        <dt>Created</dt>
        <dd>{whenText(account.created_at)}</dd>
        <dt>State</dt>
        <dd className={suspended || deleted ? 'error' : 'ok'}>
          {deleted
            ? `Deleted ${whenText(account.deleted_at ?? '')}: nobody can sign in to it, and what it held is removed except what a legal hold or a retention floor keeps`
            : suspended
              ? `Suspended since ${whenText(account.moderation.suspended_since ?? '')}: it can sign in and read, not write`
              : 'Active'}
        </dd>
        <dt>Storage</dt>
        <dd>
          {/* The server cannot tell a photo from an album's record: both are encrypted assets. */}
          {sizeText(bytes)} in {countText(assets, 'asset')} (photos, videos and album records)
        </dd>
        <dt>Second factor</dt>
        <dd>{account.second_factor.enabled ? `On (authenticator app), ${recoveryCodesText(account.second_factor.recovery_codes_remaining)}` : 'Off'}</dd>
      </dl>

      {!deleted && (account.second_factor.enabled || resetDone === account || reset.error !== null) && (
        <div className="second-factor">
          {account.second_factor.enabled && (
            <button type="button" className="danger" disabled={reset.busy} onClick={() => setResetReason('')}>
              {reset.busy ? 'One moment…' : 'Reset second factor'}
            </button>
          )}
          <ErrorLine error={reset.error} />
          {resetDone === account && (
            <p className="ok" role="status">
              Second factor reset: every session of the account ended, and its next sign-in needs the password alone.
            </p>
          )}
        </div>
      )}

      {!deleted && <AccountLinks admin={admin} userId={account.user_id} onLock={onLock} />}

      <h3>Moderation record</h3>
      <p className="hint">Oldest first. The account’s owner sees the same record.</p>
      <RecordEvents record={account.moderation} />

      {!deleted && (
        <>
          <h3>{suspended ? 'Reinstate' : 'Suspend'}</h3>
          <form
            onSubmit={(event) => {
              event.preventDefault()
              if (suspended) act()
              else setConfirming(true)
            }}
          >
            <label>
              Reason (optional; the owner sees it)
              <input name="account-reason" maxLength={REASON_MAX} value={reason} onChange={(e) => setReason(e.target.value)} />
            </label>
            <ErrorLine error={error} />
            {done?.of === account && (
              <p className="ok" role="status">
                {done.text}
              </p>
            )}
            <button type="submit" className={suspended ? undefined : 'danger'} disabled={busy}>
              {busy ? 'One moment…' : suspended ? 'Reinstate account' : 'Suspend account'}
            </button>
          </form>

          <h3>Delete</h3>
          <p className="hint">
            As the owner can: every session ends, its albums and photos are removed (except what a legal hold or a retention floor keeps), and its email is free
            again. It cannot be undone.
          </p>
          <ErrorLine error={removal.error} />
          <button type="button" className="danger" disabled={removal.busy} onClick={() => setDeleteReason('')}>
            {removal.busy ? 'One moment…' : 'Delete account'}
          </button>
        </>
      )}
      {resetReason !== null && (
        <Confirm
          title={`Reset the second factor of ${account.email}?`}
          confirmLabel="Reset"
          reason={resetReason}
          onReason={setResetReason}
          onConfirm={() => resetSecondFactor(resetReason)}
          onCancel={() => setResetReason(null)}
        >
          <p>
            For an owner who lost their authenticator app, once you are sure it is them: the app is removed, every session of the account ends, and the next
            sign-in needs the password alone. The owner sees the reset in their record.
          </p>
        </Confirm>
      )}
      {deleteReason !== null && (
        <Confirm
          title={`Delete the account ${account.email}?`}
          confirmLabel="Delete for good"
          reason={deleteReason}
          onReason={setDeleteReason}
          reasonReader="kept in the account's record"
          onConfirm={() => deleteAccount(deleteReason)}
          onCancel={() => setDeleteReason(null)}
        >
          <p>
            Every album and photo of the account is removed from the server and every session ends. This cannot be undone. The record stays, with your reason.
          </p>
        </Confirm>
      )}
      {confirming && (
        <Confirm title={`Suspend ${account.email}?`} confirmLabel="Suspend" reason={reason} onConfirm={act} onCancel={() => setConfirming(false)}>
          <p>Until it is reinstated, the account can sign in and read its photos, but every upload and change is refused.</p>
        </Confirm>
      )}
    </section>
  )
}
