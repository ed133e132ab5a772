// The gallery's frame: signed out, the sign-in screen; signed in without this browser being a
// device, the device screens; otherwise the navigation and the screen the URL names.
import { useEffect, useRef, useState, type ReactNode } from 'react'
import { Custody } from '../screens/custody/Custody.tsx'
import { AddDevice } from '../screens/device/AddDevice.tsx'
import { BecomeDevice } from '../screens/device/BecomeDevice.tsx'
import { ModerationRecord } from '../screens/record/Record.tsx'
import { Security } from '../screens/security/Security.tsx'
import { Album } from '../screens/gallery/Album.tsx'
import { Albums } from '../screens/gallery/Albums.tsx'
import { Photos } from '../screens/gallery/Photos.tsx'
import { TakeoutImport } from '../screens/gallery/TakeoutImport.tsx'
import { Trash } from '../screens/gallery/Trash.tsx'
import { Share } from '../screens/share/Share.tsx'
import { SignIn } from '../screens/SignIn.tsx'
import { whenText } from '../lib/format.ts'
import { useOffline } from './installed.ts'
import { linkTo, useRoute } from './router.ts'
import { Heading } from './ui.tsx'
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

/**
 * The account button of the phone's compact header and its menu: the email, the screens that
 * are not on the bottom bar, and Sign out. A disclosure (a button and what it shows), closed by
 * Escape, a click elsewhere, or going to a screen.
 */
function AccountMenu({ links, email, signOut }: { links: readonly [string[], string][]; email: string; signOut: () => void }) {
  const [open, setOpen] = useState(false)
  const box = useRef<HTMLDivElement>(null)
  const button = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (!open) return
    const close = () => setOpen(false)
    const outside = (event: PointerEvent) => {
      if (!box.current?.contains(event.target as Node)) close()
    }
    const key = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return
      close()
      button.current?.focus()
    }
    addEventListener('hashchange', close)
    addEventListener('pointerdown', outside)
    addEventListener('keydown', key)
    return () => {
      removeEventListener('hashchange', close)
      removeEventListener('pointerdown', outside)
      removeEventListener('keydown', key)
    }
  }, [open])
  return (
    <div className="account" ref={box}>
      <button ref={button} type="button" className="account-button" aria-expanded={open} aria-controls="account-menu" onClick={() => setOpen(!open)}>
        Account
      </button>
      <div id="account-menu" className="account-menu" hidden={!open}>
        <p className="account-email">{email}</p>
        <nav aria-label="Account">
          <ul>
            {links.map(([route, label]) => (
              <li key={label}>
                <a href={linkTo(...route)}>{label}</a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" className="secondary" onClick={signOut}>
          Sign out
        </button>
      </div>
    </div>
  )
}

/** The frame's routes: those on a phone's bottom bar, then those in its account menu. */
const PLACES: [string[], string][] = [
  [['photos'], 'Photos'],
  [['albums'], 'Albums'],
  [['favourites'], 'Favourites'],
  [['search'], 'Search'],
]

/**
 * The signed-in frame. Wide: the header with every link, the email and Sign out. Phone width
 * (styles.css, max-width 40rem): a compact header (the name and the account menu) and a bottom
 * bar with Photos, Albums and Favourites; the page keeps room under its content for the bar.
 */
function Frame({ children, current }: { children: ReactNode; current: string }) {
  const { state, signOut } = useSession()
  const more: [string[], string][] = [
    [['trash'], 'Recently deleted'],
    [['security'], 'Security'],
    [['record'], 'Moderation record'],
  ]
  // Only a device of the account has keys to give.
  if (state.kind === 'signed-in' && state.keys !== null) more.unshift([['devices', 'add'], 'Add a device'])
  const links = [...PLACES, ...more]
  const email = state.kind === 'signed-in' ? state.session.email : ''
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="bar">
        <a className="brand" href={linkTo('photos')}>
          Coffer Photos
        </a>
        <nav aria-label="Main" className="wide-only">
          {links.map(([route, label]) => (
            <a key={label} href={linkTo(...route)} aria-current={current === route[0] ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span className="who wide-only">{email}</span>
        <button type="button" className="wide-only" title={`Signed in as ${email}`} onClick={() => void signOut()}>
          Sign out
        </button>
        <AccountMenu links={more} email={email} signOut={() => void signOut()} />
      </header>
      <SuspendedBanner />
      <div id="main">{children}</div>
      <nav aria-label="Sections" className="bottom-bar">
        {PLACES.map(([route, label]) => (
          <a key={label} href={linkTo(...route)} aria-current={current === route[0] ? 'page' : undefined}>
            <span aria-hidden="true" className={`bottom-icon bottom-icon-${route[0]}`} />
            {label}
          </a>
        ))}
      </nav>
    </>
  )
}

/** Offline: what the app can do then (nothing of the person's is kept to show), and that it goes on once online. */
function Offline() {
  return (
    <main className="narrow">
      <Heading>You are offline</Heading>
      <p role="status">
        Coffer Photos needs the server to open your photos: nothing of yours is kept on this device to show without it, encrypted or not. It goes on as soon as
        you are back online.
      </p>
    </main>
  )
}

/** The screen a route names (`key` makes a new route a fresh screen, with its heading focused). */
function Screen({ first, rest }: { first: string; rest: string[] }) {
  const { client, keys } = useSignedIn()
  if (first === 'security') return <Security />
  if (first === 'record') return <ModerationRecord />
  if (keys === null) return <BecomeDevice flow={first === 'device' ? rest[0] : undefined} />
  if (first === 'devices' && rest[0] === 'add') return <AddDevice />
  if (first === 'share') return <Share client={client} keys={keys} />
  if (first === 'trash') return <Trash client={client} keys={keys} />
  if (first === 'import') return <TakeoutImport client={client} keys={keys} />
  if (first === 'custody' && rest[0] !== undefined) return <Custody key={rest.join('/')} albumId={rest[0]} assetId={rest[1] ?? null} />
  if (first === 'search') {
    const [query = '', inAlbum, photo = null] = rest
    return <Photos key={first} client={client} keys={keys} albumId={inAlbum ?? null} assetId={photo} search={query} />
  }
  const [albumId, assetId = null] = rest
  if (first === 'albums')
    return albumId !== undefined ? (
      <Album key={albumId} client={client} keys={keys} albumId={albumId} assetId={assetId} />
    ) : (
      <Albums client={client} keys={keys} />
    )
  // A key of its own: the Favourites screen is another timeline than the Photos screen's.
  return <Photos key={first} client={client} keys={keys} albumId={albumId ?? null} assetId={assetId} favourites={first === 'favourites'} />
}

function Screens() {
  const { state } = useSession()
  const route = useRoute()
  const offline = useOffline()
  // Started offline (the shell from the service worker's cache): once online, start again.
  const startedOffline = useRef(offline)
  useEffect(() => {
    if (!offline && startedOffline.current) location.reload()
  }, [offline])
  if (offline && (startedOffline.current || state.kind === 'loading')) return <Offline />
  if (state.kind === 'loading')
    return (
      <p className="loading" role="status">
        Opening…
      </p>
    )
  if (state.kind === 'signed-out')
    return <SignIn notice={state.notice ?? (route[0] === 'share' ? 'Sign in to add the photos you shared: they wait in this app meanwhile.' : null)} />
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
