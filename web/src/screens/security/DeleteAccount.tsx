// Deleting the account, for good: first the password, checked by the server (reauthenticate:
// it deletes nothing, and gives the recent proof deletion needs) and, when the account has a
// second factor, a code typed; only then "Delete for good?"; then the server removes every
// album and photo (checking the code), and this browser forgets the session, the keys and the
// upload queue.
import { useState, type FormEvent } from 'react'
import { CofferProblem } from '#sdk/client.ts'
import { useSession, useSignedIn } from '../../app/session.tsx'
import { Confirm, ErrorLine, useAction } from '../../app/ui.tsx'

const CODE_NEEDED = 'Your account has a second factor: type the code your authenticator app shows, then delete again.'

/** What a refusal means here, in words; anything else is shown as the app shows errors. */
function refusalText(problem: CofferProblem): string | null {
  switch (problem.code) {
    case 'error.auth.invalid_credentials':
      return 'The password is not right, so nothing was deleted. Type it again (many wrong tries lock the account for a while).'
    case 'error.auth.second_factor_required':
      return CODE_NEEDED
    case 'error.totp.invalid_code':
      return 'The code is wrong, expired or already used, so nothing was deleted. Type the code the app shows now.'
    case 'error.auth.reauthentication_required':
      return 'The password was checked more than 10 minutes ago, so nothing was deleted. Delete the account again.'
    default:
      return null
  }
}

/** A refusal in words (refusalText), or the error as it came. */
function explained(caught: unknown): unknown {
  const text = caught instanceof CofferProblem ? refusalText(caught) : null
  return text === null ? caught : new Error(text)
}

export function DeleteAccount() {
  const { deleteAccount } = useSession()
  const { client } = useSignedIn()
  const [password, setPassword] = useState('')
  const [code, setCode] = useState('')
  const [asking, setAsking] = useState(false)
  const check = useAction()
  const remove = useAction()
  const totpCode = code.replace(/\s/g, '') || undefined

  // The password first: a wrong one is said before anything is asked.
  const submit = (event: FormEvent) => {
    event.preventDefault()
    remove.setError(null)
    void check.run(async () => {
      try {
        await client.reauthenticate(password)
      } catch (caught) {
        throw explained(caught)
      }
      if (totpCode === undefined && (await client.secondFactorStatus()).status === 'active') throw new Error(CODE_NEEDED)
      setAsking(true)
    })
  }
  const confirm = () => {
    setAsking(false)
    void remove.run(async () => {
      try {
        await deleteAccount(totpCode)
      } catch (caught) {
        throw explained(caught)
      }
    })
  }

  return (
    <section aria-labelledby="delete-account-title">
      <h2 id="delete-account-title">Delete your account</h2>
      <p>
        Deletes your account on the server, with every album and photo in it, every device's session and your recovery escrow: your recovery phrase then gets
        nothing back. It cannot be undone. Download the photos you want to keep first.
      </p>
      <form onSubmit={submit}>
        <label>
          Your password
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <label>
          Code from your authenticator app (if you set one up)
          <input inputMode="numeric" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value)} />
        </label>
        <ErrorLine error={check.error ?? remove.error} />
        <button type="submit" className="danger" disabled={check.busy || remove.busy}>
          {check.busy ? 'Checking the password…' : remove.busy ? 'Deleting…' : 'Delete account'}
        </button>
      </form>
      {asking && (
        <Confirm title="Delete your account and every photo in it?" confirmLabel="Delete for good" onConfirm={confirm} onCancel={() => setAsking(false)}>
          <p>Every album and photo is deleted from the server, and every device is signed out. This cannot be undone.</p>
        </Confirm>
      )}
    </section>
  )
}
