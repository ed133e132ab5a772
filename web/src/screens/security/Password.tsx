// Changing the password. The server checks the current password itself (no separate freshness
// step), ends every other session, and keeps this one. This browser's device keys are then
// sealed again under the new password's key (lib/store.ts), so that the next sign-in here opens
// them with the new password.
import { useState, type FormEvent } from 'react'
import { CofferProblem, type CofferClient } from '#sdk/client.ts'
import { useSignedIn } from '../../app/session.tsx'
import { ErrorLine, useAction } from '../../app/ui.tsx'
import { workerArgon2id } from '../../lib/argon2.ts'
import { newPasswordKey, readPasswordKey, resealKeys } from '../../lib/store.ts'
import { PASSWORD_MIN } from '../SignIn.tsx'

export function PasswordChange({ client, onChanged }: { client: CofferClient; onChanged: () => void }) {
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [again, setAgain] = useState('')
  const [done, setDone] = useState(false)
  const { busy, error, run } = useAction()
  const { session } = useSignedIn()

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      setDone(false)
      if (next.length < PASSWORD_MIN) throw new Error(`Choose a new password of at least ${PASSWORD_MIN} characters.`)
      if (next !== again) throw new Error('The two new passwords differ. Type the new password twice, the same both times.')
      try {
        await client.changePassword(current, next)
      } catch (caught) {
        if (caught instanceof CofferProblem && caught.code === 'error.auth.invalid_credentials') {
          throw new Error('The current password is not right, so nothing changed. Type it again (many wrong tries lock the account for a while).')
        }
        throw caught
      }
      await resealKeys(session.userId, (await readPasswordKey()) ?? null, await newPasswordKey(next, workerArgon2id))
      setCurrent('')
      setNext('')
      setAgain('')
      setDone(true)
      onChanged()
    })
  }

  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form onSubmit={submit}>
        <label>
          Current password
          <input type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
        </label>
        <label>
          New password
          <input type="password" autoComplete="new-password" required value={next} onChange={(e) => setNext(e.target.value)} />
        </label>
        <label>
          New password again
          <input type="password" autoComplete="new-password" required value={again} onChange={(e) => setAgain(e.target.value)} />
        </label>
        <p className="hint">At least {PASSWORD_MIN} characters. Changing it signs out every other session; this browser stays signed in.</p>
        <ErrorLine error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Changing…' : 'Change password'}
        </button>
      </form>
      {done && (
        <p className="ok" role="status">
          Your password is changed. Every other session was signed out; sign in there with the new password.
        </p>
      )}
    </section>
  )
}
