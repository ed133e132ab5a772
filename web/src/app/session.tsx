// The signed-in state shared by every screen: the saved session and its client, and this
// browser's device keys once it is a device of the account.
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react'
import type { CofferClient } from '#sdk/client.ts'
import { IdentityKey } from '#sdk/identity.ts'
import { sessionClient } from '../lib/client.ts'
import { keysWithPublicKey } from '../lib/library.ts'
import { dropKeys, dropSession, readKeys, readSession, saveKeys, startSignIn, type PasswordKey, type SavedKeys, type SavedSession } from '../lib/store.ts'
import { dropAlbumHistory } from '../lib/album-history.ts'
import { dropContacts } from '../lib/contacts.ts'
import { dropDateIndex } from '../lib/date-index.ts'
import { dropPhotoIndex } from '../lib/photo-index.ts'
import { endTakeoutImport } from '../lib/takeout-import.ts'
import { dropQueuedUploads } from '../lib/uploads.ts'
import { useAccountWatch, type AccountWatch } from './watch.ts'

export type SessionState =
  | { readonly kind: 'loading' }
  | { readonly kind: 'signed-out'; readonly notice: string | null }
  | { readonly kind: 'signed-in'; readonly session: SavedSession; readonly client: CofferClient; readonly keys: SavedKeys | null }

interface SessionApi {
  readonly state: SessionState
  /** After register or sign-in: keep the session sealed, with the password key that opens this account's keys (lib/store.ts passwordKeyFor). */
  signedIn(session: SavedSession, passwordKey: PasswordKey): Promise<void>
  /** The browser became a device (setup, add this browser, recover). */
  keysSaved(keys: SavedKeys): void
  /** Ends the session on the server (when it still answers) and here, with the upload queue and the photo index; keeps the device keys, sealed under the password. */
  signOut(notice?: string): Promise<void>
  /** Signs out and removes this browser's device keys. */
  forgetBrowser(): Promise<void>
  /** Ends every session of the account, this one too, with the proof of this browser's identity key. */
  revokeAll(): Promise<void>
  /**
   * Deletes the account (with a code when it has a second factor) and forgets it here. The
   * server wants a recent password proof: reauthenticate first (DeleteAccount.tsx does).
   */
  deleteAccount(totpCode: string | undefined): Promise<void>
  /** The account's moderation record, kept fresh while signed in (watch.ts). */
  readonly watch: AccountWatch
}

const SessionContext = createContext<SessionApi | null>(null)

export function useSession(): SessionApi {
  const api = useContext(SessionContext)
  if (api === null) throw new Error('useSession outside SessionProvider')
  return api
}

/** The signed-in state, for screens that only show when signed in. */
export function useSignedIn(): Extract<SessionState, { kind: 'signed-in' }> {
  const { state } = useSession()
  if (state.kind !== 'signed-in') throw new Error('this screen needs a session')
  return state
}

const REVOKED = 'You were signed out: this session was ended (from another device, by a password change, or it expired). Sign in again.'
const REVOKED_ALL = 'Every session of your account was signed out, this one too. Sign in again here and on each device you still use.'
const DELETED = 'Your account is deleted, with every album and photo in it. This browser has forgotten it.'

let ending: Promise<number> | null = null

/**
 * Drops the sign-in here: the session, its keys, and the upload queue and photo index they
 * sealed, and the date index; a Takeout import stops; answers how many uploads were dropped. A sign-out runs it and so does the client's end
 * of its tokens (open()): both are given the one run in flight, so both tell the same count.
 */
function endedHere(): Promise<number> {
  ending ??= (async () => {
    await dropSession()
    await Promise.all([dropPhotoIndex(), dropDateIndex(), endTakeoutImport()])
    return dropQueuedUploads()
  })().finally(() => (ending = null))
  return ending
}

function withDroppedUploads(notice: string | null, dropped: number): string | null {
  if (dropped === 0) return notice
  const said = `${dropped === 1 ? 'One photo' : `${dropped} photos`} waiting to upload ${dropped === 1 ? 'was' : 'were'} dropped: this browser keeps nothing it could open after a sign-out. Add ${dropped === 1 ? 'it' : 'them'} again once signed in.`
  return notice === null ? said : `${notice} ${said}`
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ kind: 'loading' })
  // Set while this browser ends its own session on purpose (sign out, revoke-all): what the
  // sign-in screen then says, instead of the notice for a session ended from elsewhere.
  const endingHere = useRef<{ readonly notice: string | null } | null>(null)
  const watch = useAccountWatch(state.kind === 'signed-in' ? state.client : null)

  const open = useCallback(async (session: SavedSession): Promise<void> => {
    const saved = await readKeys()
    let keys = saved !== undefined && saved.userId === session.userId ? saved : null
    if (keys !== null && keys.identityPublicKey === undefined) {
      keys = keysWithPublicKey(keys)
      await saveKeys(keys)
    }
    const client = sessionClient(session, () => {
      const notice = endingHere.current === null ? REVOKED : endingHere.current.notice
      void endedHere().then((dropped) =>
        setState((now) => (now.kind === 'signed-out' ? now : { kind: 'signed-out', notice: withDroppedUploads(notice, dropped) })),
      )
    })
    setState({ kind: 'signed-in', session, client, keys })
  }, [])

  useEffect(() => {
    void readSession().then((session) => (session === undefined ? setState({ kind: 'signed-out', notice: null }) : open(session)))
  }, [open])

  const api = useMemo<SessionApi>(() => {
    const signOut = async (notice?: string): Promise<void> => {
      endingHere.current = { notice: notice ?? null }
      try {
        if (state.kind === 'signed-in') await state.client.logout().catch(() => {})
      } finally {
        endingHere.current = null
      }
      const dropped = await endedHere()
      // Already signed out when the logout's end of the tokens told the client first (open()), with the same notice.
      setState((now) => (now.kind === 'signed-out' ? now : { kind: 'signed-out', notice: withDroppedUploads(notice ?? null, dropped) }))
    }
    return {
      state,
      signedIn: async (session, passwordKey) => {
        // Whatever an earlier sign-in (perhaps of another account) left of the index no longer opens: it goes.
        await Promise.all([dropPhotoIndex(), dropDateIndex()])
        await startSignIn(session, passwordKey)
        await open(session)
      },
      keysSaved: (keys) => setState((now) => (now.kind === 'signed-in' ? { ...now, keys } : now)),
      signOut,
      forgetBrowser: async () => {
        await signOut('This browser has forgotten the account and its keys.')
        await Promise.all([dropKeys(), dropAlbumHistory(), dropContacts()])
      },
      revokeAll: async () => {
        if (state.kind !== 'signed-in' || state.keys === null)
          throw new Error("This browser holds none of the account's keys, so it cannot prove it may sign every device out.")
        endingHere.current = { notice: REVOKED_ALL }
        try {
          await state.client.revokeAllSessions(IdentityKey.fromSeeds(state.keys.identitySeeds))
        } finally {
          endingHere.current = null
        }
      },
      deleteAccount: async (totpCode) => {
        if (state.kind !== 'signed-in') return
        endingHere.current = { notice: DELETED }
        try {
          // The client forgets its tokens: the session ends here as for any other ending (open()).
          await state.client.deleteAccount(totpCode === undefined ? {} : { totpCode })
        } finally {
          endingHere.current = null
        }
        await Promise.all([dropKeys(), dropQueuedUploads(), endTakeoutImport(), dropPhotoIndex(), dropDateIndex(), dropAlbumHistory(), dropContacts()])
      },
      watch,
    }
  }, [state, open, watch])

  return <SessionContext.Provider value={api}>{children}</SessionContext.Provider>
}
