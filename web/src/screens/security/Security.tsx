// #/security: where the account is signed in, its devices, sign-in codes, the password, recent
// security events, a copy of the account's data, and the ways to end things: sign out every
// device (revoke-all, proved with this browser's identity key), forget this browser, and delete
// the account.
import { useState } from 'react'
import { CofferProblem, type CofferClient, type SecurityEvents } from '#sdk/client.ts'
import { useSession, useSignedIn } from '../../app/session.tsx'
import { Confirm, ErrorLine, Heading, LoadStatus, useAction, useLoaded } from '../../app/ui.tsx'
import { sizeText, whenText } from '../../lib/format.ts'
import { appText } from '../../lib/user-agent.ts'
import { saveStream } from '../../lib/save.ts'
import { DeviceList, Sessions } from './Sessions.tsx'
import { SecondFactor } from './SecondFactor.tsx'
import { PasswordChange } from './Password.tsx'
import { DeleteAccount } from './DeleteAccount.tsx'
import { loadDirectory } from './directory.ts'
import { newestFirst } from '../../lib/numbered.ts'

const EVENT_TEXT: Record<SecurityEvents['events'][number]['kind'], string> = {
  password_lockout: 'Signing in was locked after too many wrong passwords',
  second_factor_lockout: 'Codes were refused after too many wrong codes',
  recovery_code_used: 'A recovery code was used in place of a code from the authenticator app',
}

function Events({ client, round }: { client: CofferClient; round: number }) {
  const events = useLoaded(() => client.listSecurityEvents(), [client, round])
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Recent security events</h2>
      <LoadStatus loaded={events} what="the security events" />
      {events.value?.events.length === 0 && <p>None: no lockouts and no refused codes.</p>}
      {events.value !== undefined && events.value.events.length > 0 && (
        <ul className="cards">
          {newestFirst(events.value.events).map(({ entry: event, number }) => (
            <li key={number}>
              <p className="title">{EVENT_TEXT[event.kind]}</p>
              <p className="muted">
                {whenText(event.at)}
                {event.until !== undefined && <> · until {whenText(event.until)}</>}
                {event.ip_address !== undefined && <> · from {event.ip_address}</>}
                {event.user_agent !== undefined && <> · {appText(event.user_agent)}</>}
              </p>
            </li>
          ))}
        </ul>
      )}
      <p className="muted">If you do not recognise one, change your password and sign out every device.</p>
    </section>
  )
}

/**
 * The account export, saved as a file as it arrives (lib/save.ts): to a file the person picks
 * where the browser can, else streamed into the browser's downloads; never held whole. Named as
 * the server names it (coffer-export-<user_id>.json), known before asking: the picker comes first.
 */
function DownloadData({ client, userId }: { client: CofferClient; userId: string }) {
  const { busy, error, run } = useAction()
  const [saved, setSaved] = useState<string | null>(null)
  const download = () =>
    void run(async () => {
      setSaved(null)
      const name = `coffer-export-${userId}.json`
      let refused: unknown = null
      const done = await saveStream(name, 'application/json', async () => {
        try {
          return (await client.exportAccount()).body
        } catch (problem) {
          refused =
            problem instanceof CofferProblem && problem.code === 'error.rate_limited' && problem.retryAfterS !== null
              ? new Error(`Your data can be downloaded a few times an hour. Try again in ${Math.ceil(problem.retryAfterS / 60)} minutes.`)
              : problem
          throw refused
        }
      }).catch((failed: unknown) => {
        throw refused ?? new Error('The download was cut short, so nothing was saved. Try again.', { cause: failed })
      })
      if (done !== null) setSaved(`Saved ${name} (${sizeText(done.bytes)})${done.where === 'downloads' ? ' to your downloads' : ''}.`)
    })
  return (
    <section aria-labelledby="export-title">
      <h2 id="export-title">Your data</h2>
      <p>
        One file with everything the server holds about your account, for your records: your profile, where you are signed in, security events, your moderation
        record, and each album's history of changes with the custody receipts of its photos. Your photos themselves are not in it: the server holds them
        encrypted and cannot read them; open them here or restore them with coffer-photos.
      </p>
      <button type="button" className="secondary" disabled={busy} onClick={download}>
        {busy ? 'Preparing your data…' : 'Download my data'}
      </button>
      <ErrorLine error={error} />
      {saved !== null && (
        <p className="ok" role="status">
          {saved}
        </p>
      )}
    </section>
  )
}

function SignOutEverywhere({ canProve }: { canProve: boolean }) {
  const { revokeAll } = useSession()
  const [asking, setAsking] = useState(false)
  const { busy, error, run } = useAction()
  return (
    <section aria-labelledby="revoke-all-title">
      <h2 id="revoke-all-title">Sign out every device</h2>
      <p>
        Ends every session of your account at once, this browser's included: use it when a device was lost or someone else may be signed in. Each device then
        needs the password (and code) again; their keys and your photos stay.
      </p>
      {canProve ? (
        <button type="button" className="danger" disabled={busy} onClick={() => setAsking(true)}>
          Sign out every device
        </button>
      ) : (
        <p className="muted">This browser holds none of the account's keys, so it cannot prove it may do this. Do it from a device of the account.</p>
      )}
      <ErrorLine error={error} />
      {asking && (
        <Confirm
          title="Sign out every device?"
          confirmLabel="Sign out everywhere"
          onConfirm={() => {
            setAsking(false)
            void run(revokeAll)
          }}
          onCancel={() => setAsking(false)}
        >
          <p>Every session ends, this one too: you will see the sign-in screen here next.</p>
        </Confirm>
      )}
    </section>
  )
}

function ForgetBrowser() {
  const { forgetBrowser } = useSession()
  const [asking, setAsking] = useState(false)
  return (
    <section aria-labelledby="forget-title">
      <h2 id="forget-title">Forget this browser</h2>
      <p>
        Signs out and deletes this browser's keys for the account, for a shared or borrowed computer. It is then no longer one of your devices: to use your
        photos here again you need another device to add it, or your recovery phrase. Your photos on the server and on your other devices are not touched.
      </p>
      <button type="button" className="danger" onClick={() => setAsking(true)}>
        Forget this browser
      </button>
      {asking && (
        <Confirm title="Forget this browser?" confirmLabel="Forget it" onConfirm={() => void forgetBrowser()} onCancel={() => setAsking(false)}>
          <p>This browser's keys are deleted. Without another device or your recovery phrase, it cannot open your photos again.</p>
        </Confirm>
      )}
    </section>
  )
}

export function Security() {
  const { client, keys, session } = useSignedIn()
  const directory = useLoaded(() => loadDirectory(client, keys), [client, keys])
  // A password change ends other sessions: the lists are read again.
  const [round, setRound] = useState(0)
  return (
    <main className="sections">
      <Heading>Security</Heading>
      <Sessions key={round} client={client} directory={directory.value} thisDevice={keys?.deviceId ?? null} />
      <DeviceList directory={directory} thisDevice={keys?.deviceId ?? null} />
      <SecondFactor client={client} />
      <PasswordChange client={client} onChanged={() => setRound((n) => n + 1)} />
      <Events client={client} round={round} />
      <DownloadData client={client} userId={session.userId} />
      <SignOutEverywhere canProve={keys !== null} />
      <ForgetBrowser />
      <DeleteAccount />
    </main>
  )
}
