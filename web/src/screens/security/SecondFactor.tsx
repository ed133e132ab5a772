// The second factor (TOTP): set up with a QR code (and the secret as text, for typing it in),
// confirmed with a first code; turned off with a code. The server does not say whether one is
// on, so both are offered and its answer says which applies (error sentences, lib/errors.ts).
import { useState, type FormEvent } from 'react'
import type { CofferClient } from '../../../../src/sdk/client.ts'
import { ErrorLine, useAction } from '../../app/ui.tsx'
import { QrCode } from './QrCode.tsx'

/** The base32 secret of an otpauth:// URI, in groups of four for reading it out. */
function secretOf(uri: string): string {
  const secret = new URL(uri).searchParams.get('secret') ?? ''
  return secret.match(/.{1,4}/g)?.join(' ') ?? ''
}

function CodeField({ value, onChange, label }: { value: string; onChange: (value: string) => void; label: string }) {
  return (
    <label>
      {label}
      <input inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]{6,7}" required value={value} onChange={(e) => onChange(e.target.value)} />
    </label>
  )
}

export function SecondFactor({ client }: { client: CofferClient }) {
  const [uri, setUri] = useState<string | null>(null)
  const [code, setCode] = useState('')
  const [offCode, setOffCode] = useState('')
  const [done, setDone] = useState<string | null>(null)
  const setUp = useAction()
  const off = useAction()

  const start = () =>
    void setUp.run(async () => {
      setDone(null)
      setUri(await client.startTotpEnrollment())
    })

  const confirm = (event: FormEvent) => {
    event.preventDefault()
    void setUp.run(async () => {
      await client.confirmTotpEnrollment(code.replace(/\s/g, ''))
      setUri(null)
      setCode('')
      setDone('Your authenticator app is set up: every sign-in now asks for a code from it.')
    })
  }

  const turnOff = (event: FormEvent) => {
    event.preventDefault()
    void off.run(async () => {
      setDone(null)
      await client.disableTotp(offCode.replace(/\s/g, ''))
      setOffCode('')
      setDone('The authenticator app is turned off: signing in needs only your password.')
    })
  }

  return (
    <section aria-labelledby="totp-title">
      <h2 id="totp-title">Sign-in codes (authenticator app)</h2>
      <p>With an authenticator app, signing in needs a 6-digit code from your phone as well as the password.</p>
      {uri === null ? (
        <>
          <button type="button" disabled={setUp.busy} onClick={start}>
            Set up an authenticator app
          </button>
          <ErrorLine error={setUp.error} />
        </>
      ) : (
        <form onSubmit={confirm} className="panel">
          <p>Scan this code with your authenticator app, then enter the code it shows.</p>
          <QrCode text={uri} label="QR code to scan with your authenticator app" />
          <p>
            Cannot scan? Enter this key in the app instead: <code className="secret">{secretOf(uri)}</code>
          </p>
          <CodeField label="Code from the app" value={code} onChange={setCode} />
          <ErrorLine error={setUp.error} />
          <button type="submit" disabled={setUp.busy}>
            {setUp.busy ? 'Checking…' : 'Turn on'}
          </button>
          <button type="button" className="secondary" onClick={() => setUri(null)}>
            Cancel
          </button>
        </form>
      )}
      {done !== null && (
        <p className="ok" role="status">
          {done}
        </p>
      )}
      <form onSubmit={turnOff}>
        <h3>Turn the authenticator app off</h3>
        <CodeField label="Current code from the app" value={offCode} onChange={setOffCode} />
        <ErrorLine error={off.error} />
        <button type="submit" className="secondary" disabled={off.busy}>
          {off.busy ? 'Checking…' : 'Turn off'}
        </button>
      </form>
    </section>
  )
}
