// Register and sign in, with the second step when the account has TOTP: a code from the
// authenticator app, or one of the account's recovery codes when the phone is lost. Every way in
// types the password: argon2id makes the password key of it (in a worker), which opens this
// browser's sealed device keys (lib/store.ts). When they were sealed under an earlier password
// (changed on another device), a last step asks for that one, or lets them go.
import { useRef, useState, type FormEvent } from 'react'
import { workerArgon2id } from '../lib/argon2.ts'
import { anonymousClient } from '../lib/client.ts'
import { dropKeys, newPasswordKey, passwordKeyFor, resealKeys, type SavedSession } from '../lib/store.ts'
import { useSession } from '../app/session.tsx'
import { CodeField, ErrorLine, Heading, Notice, useAction } from '../app/ui.tsx'
import type { CofferClient, Tokens } from '#sdk/client.ts'
import { typedSecondFactorCode } from '#sdk/second-factor-code.ts'

type Step =
  | { readonly kind: 'password' }
  | { readonly kind: 'code'; readonly client: CofferClient; readonly mfaToken: string; readonly email: string; readonly password: string }
  | { readonly kind: 'earlier-password'; readonly session: SavedSession; readonly password: string }

export const PASSWORD_MIN = 12

export function SignIn({ notice }: { notice: string | null }) {
  const { signedIn } = useSession()
  const [mode, setMode] = useState<'sign-in' | 'register'>('sign-in')
  const [step, setStep] = useState<Step>({ kind: 'password' })
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [code, setCode] = useState('')
  const [recovery, setRecovery] = useState(false)
  const codeInput = useRef<HTMLInputElement>(null)
  const { busy, error, run, setError } = useAction()

  const finish = async (client: CofferClient, tokens: Tokens, who: string, typed: string): Promise<void> => {
    const profile = await client.getProfile()
    const session = { email: who, userId: profile.user_id, tokens }
    const passwordKey = await passwordKeyFor(session.userId, typed, workerArgon2id)
    if (passwordKey === null) {
      setPassword('')
      return setStep({ kind: 'earlier-password', session, password: typed })
    }
    await signedIn(session, passwordKey)
  }

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      const client = anonymousClient()
      if (step.kind === 'earlier-password') {
        const earlier = await passwordKeyFor(step.session.userId, password, workerArgon2id)
        if (earlier === null) throw new Error('That password does not open them either. Try another one you used before, or let them go.')
        const now = await newPasswordKey(step.password, workerArgon2id)
        await resealKeys(step.session.userId, earlier, now)
        return signedIn(step.session, now)
      }
      if (step.kind === 'code') {
        const sent = typedSecondFactorCode(code)
        if (sent === null)
          throw new Error(recovery ? 'A recovery code has 10 letters and digits, like abcde-12345.' : 'Enter the 6 digits your authenticator app shows.')
        return finish(step.client, await step.client.verifyLogin(step.mfaToken, sent), step.email, step.password)
      }
      if (mode === 'register') {
        if (password.length < PASSWORD_MIN) throw new Error(`Choose a password of at least ${PASSWORD_MIN} characters.`)
        return finish(client, await client.register(email.trim(), password), email.trim(), password)
      }
      const result = await client.login(email.trim(), password)
      if (result.kind === 'second_factor') {
        setStep({ kind: 'code', client, mfaToken: result.challenge.mfa_token, email: email.trim(), password })
        setPassword('')
        return
      }
      await finish(client, result.tokens, email.trim(), password)
    })
  }

  const switchMode = () => {
    setMode(mode === 'sign-in' ? 'register' : 'sign-in')
    setError(null)
  }

  if (step.kind === 'earlier-password') {
    const withoutThem = () =>
      void run(async () => {
        await dropKeys()
        await signedIn(step.session, await newPasswordKey(step.password, workerArgon2id))
      })
    return (
      <main className="narrow">
        <Heading>Unlock this browser's keys</Heading>
        <p>
          This browser keeps your account's keys locked with the password you had before (it was changed on another device). Enter that earlier password once to
          unlock them; they are then locked with your new one.
        </p>
        <form onSubmit={submit}>
          <label>
            Earlier password
            <input name="earlier-password" type="password" autoComplete="off" required value={password} onChange={(e) => setPassword(e.target.value)} />
          </label>
          <ErrorLine error={error} />
          <button type="submit" disabled={busy}>
            {busy ? 'One moment…' : 'Unlock'}
          </button>
        </form>
        <p>
          Forgot it?{' '}
          <button type="button" className="link" disabled={busy} onClick={withoutThem}>
            Let them go
          </button>{' '}
          and add this browser again with a code from another device, or with your recovery phrase.
        </p>
      </main>
    )
  }

  if (step.kind === 'code') {
    return (
      <main className="narrow">
        <Heading>Enter your code</Heading>
        {recovery ? (
          <p>Enter one of the recovery codes you saved when you set up the authenticator app ({step.email}). Each works once.</p>
        ) : (
          <p>Open your authenticator app and enter the 6-digit code for Coffer ({step.email}).</p>
        )}
        <form onSubmit={submit}>
          <CodeField label={recovery ? 'Recovery code' : 'Code'} value={code} onChange={setCode} recovery={recovery} inputRef={codeInput} />
          <ErrorLine error={error} />
          <button type="submit" disabled={busy}>
            {busy ? 'Checking…' : 'Sign in'}
          </button>
          <button
            type="button"
            className="link"
            onClick={() => {
              setRecovery(!recovery)
              setCode('')
              setError(null)
              // The field is the same one, now for the other kind of code: the person types there next.
              codeInput.current?.focus()
            }}
          >
            {recovery ? 'Use a code from the authenticator app instead' : 'Lost your phone? Use a recovery code'}
          </button>{' '}
          <button type="button" className="link" onClick={() => setStep({ kind: 'password' })}>
            Start again
          </button>
        </form>
      </main>
    )
  }

  return (
    <main className="narrow">
      <Heading>{mode === 'sign-in' ? 'Sign in to Coffer Photos' : 'Create your Coffer account'}</Heading>
      <p className="muted">Your photos are encrypted on your devices; the server stores only what it cannot read.</p>
      <Notice text={notice} />
      <form onSubmit={submit}>
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete={mode === 'sign-in' ? 'current-password' : 'new-password'}
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {mode === 'register' && (
          <p className="hint">
            At least {PASSWORD_MIN} characters. It protects your account; your photos are protected by keys on your devices and your recovery phrase.
          </p>
        )}
        <ErrorLine error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'One moment…' : mode === 'sign-in' ? 'Sign in' : 'Create account'}
        </button>
      </form>
      <p>
        {mode === 'sign-in' ? 'New here? ' : 'Already have an account? '}
        <button type="button" className="link" onClick={switchMode}>
          {mode === 'sign-in' ? 'Create an account' : 'Sign in'}
        </button>
      </p>
    </main>
  )
}
