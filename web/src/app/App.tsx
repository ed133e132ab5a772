// The gallery's frame: signed out, the sign-in screen; signed in without this browser being a
// device, the device screens; otherwise the navigation and the screen the URL names.
import type { ReactNode } from 'react'
import { Custody } from '../screens/custody/Custody.tsx'
import { AddDevice } from '../screens/device/AddDevice.tsx'
import { BecomeDevice } from '../screens/device/BecomeDevice.tsx'
import { ModerationRecord } from '../screens/record/Record.tsx'
import { Security } from '../screens/security/Security.tsx'
import { Album } from '../screens/gallery/Album.tsx'
import { Albums } from '../screens/gallery/Albums.tsx'
import { Photos } from '../screens/gallery/Photos.tsx'
import { SignIn } from '../screens/SignIn.tsx'
import { whenText } from '../lib/format.ts'
import { linkTo, useRoute } from './router.ts'
import { SessionProvider, useSession, useSignedIn } from './session.tsx'

/** On every screen while the account is suspended: what that means, and where to read more. */
function SuspendedBanner() {
  const { record } = useSession().watch
  if (record?.standing !== 'suspended') return null
  return (
    <div className="banner" role="status">
      Your account is suspended{record.suspended_since === undefined ? '' : ` since ${whenText(record.suspended_since)}`}: you can see and download your photos,
      but not add, change or delete anything. <a href={linkTo('record')}>See your moderation record</a>.
    </div>
  )
}

function Frame({ children, current }: { children: ReactNode; current: string }) {
  const { state, signOut } = useSession()
  const links: [string[], string][] = [
    [['photos'], 'Photos'],
    [['albums'], 'Albums'],
    [['security'], 'Security'],
    [['record'], 'Moderation record'],
  ]
  // Only a device of the account has keys to give.
  if (state.kind === 'signed-in' && state.keys !== null) links.splice(2, 0, [['devices', 'add'], 'Add a device'])
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="bar">
        <a className="brand" href={linkTo('photos')}>
          Coffer Photos
        </a>
        <nav aria-label="Main">
          {links.map(([route, label]) => (
            <a key={label} href={linkTo(...route)} aria-current={current === route[0] ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span className="who">{state.kind === 'signed-in' ? state.session.email : ''}</span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <SuspendedBanner />
      <div id="main">{children}</div>
    </>
  )
}

/** The screen a route names (`key` makes a new route a fresh screen, with its heading focused). */
function Screen({ first, rest }: { first: string; rest: string[] }) {
  const { client, keys } = useSignedIn()
  if (first === 'security') return <Security />
  if (first === 'record') return <ModerationRecord />
  if (keys === null) return <BecomeDevice flow={first === 'device' ? rest[0] : undefined} />
  if (first === 'devices' && rest[0] === 'add') return <AddDevice />
  if (first === 'custody' && rest[0] !== undefined) return <Custody key={rest.join('/')} albumId={rest[0]} assetId={rest[1] ?? null} />
  const [albumId, assetId = null] = rest
  if (first === 'albums')
    return albumId !== undefined ? (
      <Album key={albumId} client={client} keys={keys} albumId={albumId} assetId={assetId} />
    ) : (
      <Albums client={client} keys={keys} />
    )
  return <Photos client={client} keys={keys} albumId={albumId ?? null} assetId={assetId} />
}

function Screens() {
  const { state } = useSession()
  const route = useRoute()
  if (state.kind === 'loading')
    return (
      <p className="loading" role="status">
        Opening…
      </p>
    )
  if (state.kind === 'signed-out') return <SignIn notice={state.notice} />
  const [first = 'photos', ...rest] = route
  return (
    <Frame current={first}>
      <Screen first={first} rest={rest} />
    </Frame>
  )
}

export function App() {
  return (
    <SessionProvider>
      <Screens />
    </SessionProvider>
  )
}
