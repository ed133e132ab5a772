// The operator page (/admin): whether the server has the operator API at all, the token (kept
// in this page's memory only: a reload asks again), then finding an account and acting on it
// or on an asset. Everything goes through the SDK's CofferAdmin, as a tool an operator writes.
import { useEffect, useState, type FormEvent } from 'react'
import { CofferAdmin, type AdminAccount } from '#sdk/admin.ts'
import { CofferProblem, problemOf } from '#sdk/client.ts'
import { ErrorLine, Heading, Notice, useAction } from '../app/ui.tsx'
import { AccountCard } from './AccountCard.tsx'
import { AssetActions } from './AssetActions.tsx'
import { asOperator, type Lock } from './errors.ts'
import { ID_EXAMPLE, UUID } from './ids.ts'

type Phase =
  | { readonly kind: 'probing' }
  | { readonly kind: 'unreachable'; readonly error: unknown }
  | { readonly kind: 'disabled' }
  | { readonly kind: 'locked'; readonly notice: string | null }
  | { readonly kind: 'open'; readonly admin: CofferAdmin }

/**
 * Whether the server has the operator API: without a credential an operator path answers 401
 * when ADMIN_TOKEN is set, and 404 (as every /v1/admin path) when it is not (API.md section 8).
 */
async function operatorApiEnabled(): Promise<boolean> {
  const response = await fetch('/v1/admin/accounts')
  if (response.status === 401 || response.status === 404) {
    await response.body?.cancel()
    return response.status === 401
  }
  throw await problemOf(response)
}

export function Operator() {
  const [phase, setPhase] = useState<Phase>({ kind: 'probing' })
  const probe = () => {
    setPhase({ kind: 'probing' })
    operatorApiEnabled().then(
      (enabled) => setPhase(enabled ? { kind: 'locked', notice: null } : { kind: 'disabled' }),
      (error: unknown) => setPhase({ kind: 'unreachable', error }),
    )
  }
  useEffect(probe, [])

  switch (phase.kind) {
    case 'probing':
      return (
        <p className="loading" role="status">
          Opening…
        </p>
      )
    case 'unreachable':
      return (
        <main className="narrow">
          <Heading>Coffer operator</Heading>
          <ErrorLine error={phase.error} />
          <button type="button" onClick={probe}>
            Try again
          </button>
        </main>
      )
    case 'disabled':
      return <Disabled />
    case 'locked':
      return <TokenForm notice={phase.notice} onOpen={(admin) => setPhase({ kind: 'open', admin })} />
    case 'open':
      return <Console admin={phase.admin} onLock={(notice) => setPhase({ kind: 'locked', notice })} />
  }
}

const ENABLE = `export ADMIN_TOKEN="$(openssl rand -base64 32)"
echo "$ADMIN_TOKEN"    # the token to enter here
npm start`

function Disabled() {
  return (
    <main className="narrow">
      <Heading>The operator API is disabled</Heading>
      <p>
        This server has no <code>ADMIN_TOKEN</code>, so it answers no operator request and this page can do nothing.
      </p>
      <p>To enable it, set a token of at least 32 characters in the server’s environment and restart the server, for example:</p>
      <pre>
        <code>{ENABLE}</code>
      </pre>
      <p>Then reload this page and enter the same token. Keep it as secret as a password: it can suspend any account.</p>
    </main>
  )
}

function TokenForm({ notice, onOpen }: { notice: string | null; onOpen: (admin: CofferAdmin) => void }) {
  const [token, setToken] = useState('')
  const { busy, error, run } = useAction()
  const submit = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      const admin = new CofferAdmin({ baseUrl: location.origin, adminToken: token.trim() })
      try {
        // Any operator request checks the token; an empty email matches no account.
        await admin.findAccounts('')
      } catch (caught) {
        if (caught instanceof CofferProblem && caught.status === 401)
          throw new Error('That is not this server’s operator token. Check ADMIN_TOKEN and try again.')
        throw caught
      }
      onOpen(admin)
    })
  }
  return (
    <main className="narrow">
      <Heading>Coffer operator</Heading>
      <p className="muted">Enter the server’s ADMIN_TOKEN. It stays in this page’s memory only: reloading or locking the page forgets it.</p>
      <Notice text={notice} />
      <form onSubmit={submit}>
        <label>
          Operator token
          <input name="token" type="password" autoComplete="off" spellCheck={false} required value={token} onChange={(e) => setToken(e.target.value)} />
        </label>
        <ErrorLine error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Open'}
        </button>
      </form>
    </main>
  )
}

function Console({ admin, onLock }: { admin: CofferAdmin; onLock: Lock }) {
  const [query, setQuery] = useState('')
  const [account, setAccount] = useState<AdminAccount | null>(null)
  const { busy, error, run } = useAction()

  const lookUp = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      setAccount(null)
      const wanted = query.trim()
      if (UUID.test(wanted)) {
        const found = await asOperator('account', onLock, () => admin.account(wanted.toLowerCase()))
        if (found !== undefined) setAccount(found)
        return
      }
      if (!wanted.includes('@')) throw new Error(`Enter an account id (a UUID, such as ${ID_EXAMPLE}) or an email address.`)
      const found = await asOperator('account', onLock, () => admin.findAccounts(wanted))
      if (found === undefined) return
      if (found[0] === undefined) throw new Error(`No account has the email ${wanted}. Check the spelling (case does not matter).`)
      setAccount(found[0])
    })
  }

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="bar">
        <span className="brand">Coffer operator</span>
        <span className="who">Operator token entered</span>
        <button type="button" className="secondary" onClick={() => onLock('Locked: the token is forgotten.')}>
          Lock
        </button>
      </header>
      <main id="main" className="operator">
        <Heading>Find an account</Heading>
        <search>
          <form onSubmit={lookUp} className="lookup">
            <label>
              Account id or email
              <input name="lookup" autoComplete="off" spellCheck={false} required value={query} onChange={(e) => setQuery(e.target.value)} />
            </label>
            <button type="submit" disabled={busy}>
              {busy ? 'Looking…' : 'Look up'}
            </button>
          </form>
        </search>
        <ErrorLine error={error} />
        {account !== null && <AccountCard key={account.user_id} admin={admin} account={account} onChange={setAccount} onLock={onLock} />}
        <AssetActions admin={admin} account={account} onAccount={setAccount} onLock={onLock} />
      </main>
    </>
  )
}
