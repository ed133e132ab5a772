// The second factor (TOTP), as the server says it stands (GET /v1/auth/totp), offering only what
// applies: without one, set it up with a QR code (and the secret as text, for typing it in) and a
// first code; with one, how many recovery codes are left, new recovery codes (a recent password
// proof and a code) and turning it off (a code). Recovery codes are shown once, when made.
import { useId, useState, type FormEvent } from 'react'
import { withFreshSignIn } from '#photos/account.ts'
import type { CofferClient } from '#sdk/client.ts'
import { typedSecondFactorCode } from '#sdk/second-factor-code.ts'
import { CodeField, ErrorLine, LoadStatus, useAction, useLoaded } from '../../app/ui.tsx'
import { countText } from '../../lib/format.ts'
import { usePasswordPrompt } from '../device/parts.tsx'
import { QrCode } from './QrCode.tsx'

/** Fewer left than this, and the screen says to make new ones. */
const FEW_LEFT = 3

/** The base32 secret of an otpauth:// URI, in groups of four for reading it out. */
function secretOf(uri: string): string {
  const secret = new URL(uri).searchParams.get('secret') ?? ''
  return secret.match(/.{1,4}/g)?.join(' ') ?? ''
}

/** What the person typed, as sent; a sentence when it is no code at all. */
function codeOf(typed: string): string {
  const code = typedSecondFactorCode(typed)
  if (code === null) throw new Error('Enter the 6-digit code from your authenticator app, or one of your recovery codes (like abcde-12345).')
  return code
}

/** Recovery codes just made: shown this once, with what they are for. */
function RecoveryCodes({ codes, onSaved }: { codes: readonly string[]; onSaved: () => void }) {
  const heading = useId()
  return (
    <section className="panel" aria-labelledby={heading}>
      <h3 id={heading}>Save your recovery codes</h3>
      <p>
        If you lose your phone, each of these codes signs you in once in place of a code from the app. Save them now, away from this device: print them, write
        them down or keep them in a password manager. They are not shown again.
      </p>
      <ul className="recovery-codes" aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <p className="muted">
        They are not your 24-word recovery phrase: that one opens your photos on a new device; these only stand in for the authenticator app when you sign in.
      </p>
      <button type="button" onClick={onSaved}>
        I have saved them
      </button>
    </section>
  )
}

function remainingText(remaining: number): string {
  if (remaining === 0) return 'No recovery codes are left: make new ones, or losing your phone locks you out of signing in.'
  const left = `${countText(remaining, 'recovery code')} ${remaining === 1 ? 'is' : 'are'} left`
  return remaining <= FEW_LEFT ? `Only ${left}: make new ones soon.` : `${left}.`
}

export function SecondFactor({ client }: { client: CofferClient }) {
  const status = useLoaded(() => client.secondFactorStatus(), [client])
  const [uri, setUri] = useState<string | null>(null)
  const [code, setCode] = useState('')
  const [renewCode, setRenewCode] = useState('')
  const [offCode, setOffCode] = useState('')
  const [shown, setShown] = useState<readonly string[] | null>(null)
  const [done, setDone] = useState<string | null>(null)
  const setUp = useAction()
  const renew = useAction()
  const off = useAction()
  const password = usePasswordPrompt()

  const start = () =>
    void setUp.run(async () => {
      setDone(null)
      setUri(await client.startTotpEnrollment())
    })

  const confirm = (event: FormEvent) => {
    event.preventDefault()
    void setUp.run(async () => {
      setShown(await client.confirmTotpEnrollment(code.replace(/\s/g, '')))
      setUri(null)
      setCode('')
      setDone('Your authenticator app is set up: every sign-in now asks for a code from it.')
      status.reload()
    })
  }

  const makeNewCodes = (event: FormEvent) => {
    event.preventDefault()
    void renew.run(async () => {
      setDone(null)
      const sent = codeOf(renewCode)
      // A sign-in older than 10 minutes: the password is asked for, then the same code is sent again.
      setShown(await withFreshSignIn(client, () => client.regenerateRecoveryCodes(sent), password.prompt))
      setRenewCode('')
      setDone('New recovery codes are made: the old ones no longer work.')
      status.reload()
    })
  }

  const turnOff = (event: FormEvent) => {
    event.preventDefault()
    void off.run(async () => {
      setDone(null)
      await client.disableTotp(codeOf(offCode))
      setOffCode('')
      setShown(null)
      setDone('The authenticator app is turned off: signing in needs only your password.')
      status.reload()
    })
  }

  const current = status.value
  return (
    <section aria-labelledby="totp-title">
      <h2 id="totp-title">Sign-in codes (authenticator app)</h2>
      <p>With an authenticator app, signing in needs a 6-digit code from your phone as well as the password.</p>
      <LoadStatus loaded={status} what="the sign-in code settings" />
      {done !== null && (
        <p className="ok" role="status">
          {done}
        </p>
      )}
      {shown !== null && <RecoveryCodes codes={shown} onSaved={() => setShown(null)} />}
      {current !== undefined && current.status !== 'active' && uri === null && (
        <>
          <p>Off: signing in needs only your password.</p>
          <button type="button" disabled={setUp.busy} onClick={start}>
            Set up an authenticator app
          </button>
          <ErrorLine error={setUp.error} />
        </>
      )}
      {uri !== null && (
        <form onSubmit={confirm} className="panel">
          <p>Scan this code with your authenticator app, then enter the code it shows.</p>
          <QrCode text={uri} label="QR code to scan with your authenticator app" />
          <p>
            Cannot scan? Enter this key in the app instead: <code className="secret">{secretOf(uri)}</code>
          </p>
          <CodeField label="Code from the app" value={code} onChange={setCode} recovery={false} />
          <ErrorLine error={setUp.error} />
          <button type="submit" disabled={setUp.busy}>
            {setUp.busy ? 'Checking…' : 'Turn on'}
          </button>
          <button type="button" className="secondary" onClick={() => setUri(null)}>
            Cancel
          </button>
        </form>
      )}
      {current?.status === 'active' && (
        <>
          <p>
            On: every sign-in asks for a code from your authenticator app.{' '}
            <span className={current.recovery_codes_remaining <= FEW_LEFT ? 'warning' : undefined}>{remainingText(current.recovery_codes_remaining)}</span>
          </p>
          <form onSubmit={makeNewCodes}>
            <h3>New recovery codes</h3>
            <p>Makes 10 new recovery codes and stops the old ones working: when you have used some, or someone may have seen them.</p>
            <CodeField label="Code from the app, or a recovery code" value={renewCode} onChange={setRenewCode} recovery />
            <ErrorLine error={renew.error} />
            <button type="submit" className="secondary" disabled={renew.busy}>
              {renew.busy ? 'Making…' : 'Make new recovery codes'}
            </button>
          </form>
          <form onSubmit={turnOff}>
            <h3>Turn the authenticator app off</h3>
            <CodeField label="Current code from the app, or a recovery code" value={offCode} onChange={setOffCode} recovery />
            <ErrorLine error={off.error} />
            <button type="submit" className="secondary" disabled={off.busy}>
              {off.busy ? 'Checking…' : 'Turn off'}
            </button>
          </form>
        </>
      )}
      {password.dialog}
    </section>
  )
}
