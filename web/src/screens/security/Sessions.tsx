// The account's sessions (where it is signed in) and its devices (the signed directory).
// The server records no "last used": a session's created_at is when its tokens were last
// renewed (it was in use then), authenticated_at when a password or code was last proved on it.
// Two browsers of one kind are told apart by their device's name (when the session has one), the
// app, and the sign-in time to the second; should all of that match, by the session's id.
import { useState } from 'react'
import { CofferProblem, type CofferClient, type Devices } from '#sdk/client.ts'
import { linkTo } from '../../app/router.ts'
import { Confirm, ErrorLine, LoadStatus, useAction, useLoaded, type Loaded } from '../../app/ui.tsx'
import { momentText, whenText } from '../../lib/format.ts'
import { appText } from '../../lib/user-agent.ts'
import type { DirectoryView } from './directory.ts'

type Session = Devices['sessions'][number]

function deviceNames(directory: DirectoryView | undefined): Map<string, string> {
  if (directory?.kind !== 'verified') return new Map()
  return new Map(directory.directory.devices.flatMap((device) => (device.name === undefined ? [] : [[device.device_id, device.name] as const])))
}

/** Each session's name on this screen: "Kitchen laptop (Chrome on Linux), signed in 2 Dec 2026, 14:02:07", unique among `sessions`. */
function sessionNames(sessions: readonly Session[], devices: ReadonlyMap<string, string>, thisDevice: string | null): Map<string, string> {
  const plain = new Map(
    sessions.map((session) => {
      const app = appText(session.user_agent)
      // A browser signs in without naming its device: the current session's is this browser's.
      const deviceId = session.device_id ?? (session.current ? thisDevice : null)
      const device = deviceId === null ? undefined : devices.get(deviceId)
      const who = device === undefined || device === app ? app : `${device} (${app})`
      return [session.session_id, `${who}, signed in ${momentText(session.authenticated_at)}`] as const
    }),
  )
  const uses = new Map<string, number>()
  for (const name of plain.values()) uses.set(name, (uses.get(name) ?? 0) + 1)
  return new Map([...plain].map(([id, name]) => [id, uses.get(name)! > 1 ? `${name} (session ${id.slice(0, 8)})` : name]))
}

export function Sessions({ client, directory, thisDevice }: { client: CofferClient; directory: DirectoryView | undefined; thisDevice: string | null }) {
  const sessions = useLoaded(() => client.listSessions(), [client])
  const [asking, setAsking] = useState<Session | null>(null)
  const [done, setDone] = useState<string | null>(null)
  const { busy, error, run } = useAction()
  const names = sessionNames(sessions.value?.sessions ?? [], deviceNames(directory), thisDevice)
  const describe = (session: Session): string => names.get(session.session_id) ?? appText(session.user_agent)

  const revoke = (session: Session) =>
    void run(async () => {
      setAsking(null)
      setDone(null)
      try {
        await client.revokeSession(session.session_id)
        setDone(`${describe(session)} is signed out.`)
      } catch (caught) {
        if (!(caught instanceof CofferProblem && caught.code === 'error.not_found')) throw caught
        setDone('That session had already ended.')
      } finally {
        sessions.reload()
      }
    })

  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Where you are signed in</h2>
      <LoadStatus loaded={sessions} what="the sessions" />
      {sessions.value !== undefined && (
        <ul className="cards">
          {sessions.value.sessions.map((session) => (
            <li key={session.session_id}>
              <p className="title">
                {describe(session)}
                {session.current && <span className="badge">This device</span>}
              </p>
              <p className="muted">
                Last renewed {whenText(session.created_at)}
                {session.ip_address !== null && <> · from {session.ip_address}</>}
              </p>
              {!session.current && (
                <button type="button" className="secondary" disabled={busy} onClick={() => setAsking(session)}>
                  Sign out this session
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {done !== null && (
        <p className="ok" role="status">
          {done}
        </p>
      )}
      <ErrorLine error={error} />
      {asking !== null && (
        <Confirm title="Sign out this session?" confirmLabel="Sign it out" onConfirm={() => revoke(asking)} onCancel={() => setAsking(null)}>
          <p>{describe(asking)} will be signed out at its next request. Its device keys stay: signing in again there needs only the password (and code).</p>
        </Confirm>
      )}
    </section>
  )
}

export function DeviceList({ directory, thisDevice }: { directory: Loaded<DirectoryView>; thisDevice: string | null }) {
  const view = directory.value
  return (
    <section aria-labelledby="devices-title">
      <h2 id="devices-title">Your devices</h2>
      <LoadStatus loaded={directory} what="the device list" />
      {view?.kind === 'no-keys' && <p>This browser is not a device of the account yet, so it cannot check the device list. Add it as a device first.</p>}
      {view?.kind === 'none' && <p>The account has no device list on the server yet.</p>}
      {view?.kind === 'not-verified' && (
        <p className="error" role="alert">
          The device list on the server is not signed by your account's identity key, so nothing in it is shown: it was changed by someone who does not hold
          your keys. Tell the operator. ({view.why})
        </p>
      )}
      {view?.kind === 'verified' && (
        <>
          <p>
            <span className="ok">Verified in this browser:</span> signed by your account's identity key.
          </p>
          <ul className="cards">
            {view.directory.devices.map((device) => (
              <li key={device.device_id}>
                <p className="title">
                  {device.name ?? 'A device with no name'}
                  {device.device_id === thisDevice && <span className="badge">This device</span>}
                </p>
                <p className="muted">
                  {device.added_at === undefined ? 'Date added not recorded' : `Added ${whenText(device.added_at)}`} · device {device.device_id.slice(0, 8)}
                </p>
              </li>
            ))}
          </ul>
          <p>
            <a href={linkTo('devices', 'add')}>Add a device</a>
          </p>
        </>
      )}
      {view !== undefined && view.kind !== 'no-keys' && (
        <p className="muted">
          Identity key fingerprint: <code className="fingerprint">{view.fingerprint}</code>. Every device of your account shows the same one.
        </p>
      )}
    </section>
  )
}
