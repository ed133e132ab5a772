// While signed in, the app asks the server about the account now and then: on start, whenever
// the window gets focus, and every POLL seconds. The answer (the moderation record) says whether
// the account is suspended, for the banner on every screen; asking at all is what notices a
// session revoked from elsewhere: the server refuses the token, the refresh is refused, and the
// session's client signs this browser out (session.tsx). POLL is 30 s, or the `poll` query
// parameter read at start (`/?poll=2#/security`: whole seconds, 1 to 3600), which tests use to
// see a revocation quickly; docs/web.md documents it.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import type { CofferClient, ModerationRecord } from '#sdk/client.ts'

const DEFAULT_POLL_S = 30

function pollSeconds(): number {
  const asked = Number(new URLSearchParams(location.search).get('poll'))
  return Number.isInteger(asked) && asked >= 1 && asked <= 3600 ? asked : DEFAULT_POLL_S
}

const POLL_MS = pollSeconds() * 1000

export interface AccountWatch {
  /** The account's moderation record as last read; null until the first answer. */
  readonly record: ModerationRecord | null
  /** Reads it again now (after the person asks, or an action that may change it). */
  readonly refresh: () => void
}

/** Keeps the moderation record fresh as above, and with it notices a revoked session. */
export function useAccountWatch(client: CofferClient | null): AccountWatch {
  // Kept with the client it was read by, so that another sign-in never sees the last one's.
  const [read, setRead] = useState<{ readonly by: CofferClient; readonly record: ModerationRecord } | null>(null)
  // A look now, on the client of the time (nothing before there is one, or once it is gone).
  const lookNow = useRef<() => void>(() => {})
  useEffect(() => {
    if (client === null) return
    let live = true
    // A failure is left to the next look: a refused session has already signed out (see above).
    const look = () =>
      void client.moderationRecord().then(
        (record) => live && setRead({ by: client, record }),
        () => {},
      )
    lookNow.current = look
    look()
    const timer = setInterval(look, POLL_MS)
    addEventListener('focus', look)
    return () => {
      live = false
      lookNow.current = () => {}
      clearInterval(timer)
      removeEventListener('focus', look)
    }
  }, [client])
  const record = read !== null && read.by === client ? read.record : null
  const refresh = useCallback(() => lookNow.current(), [])
  return useMemo(() => ({ record, refresh }), [record, refresh])
}
