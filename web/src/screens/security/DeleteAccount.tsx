// Deleting the account, for good: the password (proved again at once, as the server wants a
// recent proof) and, when the account has a second factor, a code; then the server removes every
// album and photo, and this browser forgets the session, the keys and the upload queue.
import { useState, type FormEvent } from 'react'
import { CofferProblem } from '#sdk/client.ts'
import { useSession } from '../../app/session.tsx'
import { Confirm, ErrorLine, useAction } from '../../app/ui.tsx'

/** What a refusal means here, in words; anything else is shown as the app shows errors. */
function refusalText(problem: CofferProblem): string | null {
  switch (problem.code) {
    case 'error.auth.invalid_credentials':
      return 'The password is not right, so nothing was deleted. Type it again (many wrong tries lock the account for a while).'
    case 'error.auth.second_factor_required':
      return 'Your account has a second factor: type the code your authenticator app shows, then delete again.'
    case 'error.totp.invalid_code':
      return 'The code is wrong, expired or already used, so nothing was deleted. Type the code the app shows now.'
    default:
      return null
  }
}

export function DeleteAccount() {
  const { deleteAccount } = useSession()
  const [password, setPassword] = useState('')
  const [code, setCode] = useState('')
  const [asking, setAsking] = useState(false)
  const { busy, error, run } = useAction()

  const submit = (event: FormEvent) => {
    event.preventDefault()
    setAsking(true)
  }
  const confirm = () => {
    setAsking(false)
    void run(async () => {
      try {
        await deleteAccount(password, code.replace(/\s/g, '') || undefined)
      } catch (caught) {
        const text = caught instanceof CofferProblem ? refusalText(caught) : null
        throw text === null ? caught : new Error(text)
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
        <ErrorLine error={error} />
        <button type="submit" className="danger" disabled={busy}>
          {busy ? 'Deleting…' : 'Delete account'}
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
