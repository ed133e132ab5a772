// The gallery's frame: signed out, the sign-in screen; signed in without this browser being a
// device, the device screens; otherwise the navigation and the screen the URL names.
import type { ReactNode } from 'react'
import { SignIn } from '../screens/SignIn.tsx'
import { linkTo, useRoute } from './router.ts'
import { SessionProvider, useSession } from './session.tsx'

function Frame({ children, current }: { children: ReactNode; current: string }) {
  const { state, signOut } = useSession()
  const links: [string, string][] = [
    ['albums', 'Albums'],
    ['security', 'Security'],
    ['record', 'Moderation record'],
  ]
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="bar">
        <a className="brand" href={linkTo('albums')}>
          Coffer Photos
        </a>
        <nav aria-label="Main">
          {links.map(([route, label]) => (
            <a key={route} href={linkTo(route)} aria-current={current === route ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span className="who">{state.kind === 'signed-in' ? state.session.email : ''}</span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <div id="main">{children}</div>
    </>
  )
}

function Screens() {
  const { state } = useSession()
  const route = useRoute()
  if (state.kind === 'loading') return <p className="loading" role="status">Opening…</p>
  if (state.kind === 'signed-out') return <SignIn notice={state.notice} />
  const [first = 'albums'] = route
  return (
    <Frame current={first}>
      <main>
        <h1 tabIndex={-1}>Signed in as {state.session.email}</h1>
      </main>
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
