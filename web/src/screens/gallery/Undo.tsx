// "Undo until committed": a replace waits UNDO_WINDOW_MS with an Undo button before it is sent;
// once sent it is final, and the toast says so. One action waits at a time: a new one sends the
// waiting one first. A delete is sent at once, since it only moves the photos to Recently
// deleted (decision 0059): its toast's Undo restores them.
import { useCallback, useEffect, useRef, useState } from 'react'
import { sentenceFor } from '../../lib/errors.ts'

export const UNDO_WINDOW_MS = 5000
/** How long the outcome stays on screen. */
const OUTCOME_MS = 8000

export interface PendingAction {
  /** While waiting: "Deleting 2 photos". */
  readonly label: string
  /** Once sent: "Deleted 2 photos". */
  readonly done: string
  readonly run: () => Promise<void>
  /** Told when the person undid it (the action was never sent). */
  readonly undone: () => void
}

/** An action sent at once whose outcome can be reversed by another (a move to the trash, and the restore). */
export interface ReversibleAction {
  readonly label: string
  readonly done: string
  readonly run: () => Promise<void>
  readonly reverse: { readonly label: string; readonly done: string; readonly run: () => Promise<void> }
}

type Toast =
  | { readonly kind: 'waiting'; readonly action: PendingAction; readonly until: number }
  | { readonly kind: 'sending'; readonly action: Pick<PendingAction, 'label'> }
  | { readonly kind: 'outcome'; readonly text: string; readonly failed: boolean; readonly reverse?: ReversibleAction['reverse'] }

export function useUndoable(): {
  toast: Toast | null
  start: (action: PendingAction) => void
  startReversible: (action: ReversibleAction) => void
  undo: () => void
  dismiss: () => void
} {
  const [toast, setToast] = useState<Toast | null>(null)
  const waiting = useRef<{ action: PendingAction; timer: ReturnType<typeof setTimeout> } | null>(null)

  /** Runs the action with its toast: on its success `after` is offered (a reverse), or it is said to be final, or nothing. */
  const send = useCallback(async (action: Omit<PendingAction, 'undone'>, after: ReversibleAction['reverse'] | 'final' | 'plain') => {
    setToast({ kind: 'sending', action })
    try {
      await action.run()
      setToast(
        after === 'final'
          ? { kind: 'outcome', text: `${action.done}. This is final: it cannot be undone now.`, failed: false }
          : after === 'plain'
            ? { kind: 'outcome', text: `${action.done}.`, failed: false }
            : { kind: 'outcome', text: `${action.done}.`, failed: false, reverse: after },
      )
    } catch (error) {
      setToast({ kind: 'outcome', text: `${action.label} failed: ${sentenceFor(error)}`, failed: true })
    }
  }, [])

  const commitWaiting = useCallback(() => {
    const now = waiting.current
    if (now === null) return
    clearTimeout(now.timer)
    waiting.current = null
    void send(now.action, 'final')
  }, [send])

  const start = useCallback(
    (action: PendingAction) => {
      commitWaiting()
      const timer = setTimeout(commitWaiting, UNDO_WINDOW_MS)
      waiting.current = { action, timer }
      setToast({ kind: 'waiting', action, until: Date.now() + UNDO_WINDOW_MS })
    },
    [commitWaiting],
  )

  const startReversible = useCallback(
    (action: ReversibleAction) => {
      commitWaiting()
      void send(action, action.reverse)
    },
    [commitWaiting, send],
  )

  const undo = useCallback(() => {
    const reverse = toast?.kind === 'outcome' ? toast.reverse : undefined
    if (reverse !== undefined) {
      void send(reverse, 'plain')
      return
    }
    const now = waiting.current
    if (now === null) return
    clearTimeout(now.timer)
    waiting.current = null
    now.action.undone()
    setToast({ kind: 'outcome', text: `Undone: nothing was sent.`, failed: false })
  }, [toast, send])

  // Leaving the album sends what waits: the person asked for it and saw no undo.
  useEffect(() => commitWaiting, [commitWaiting])

  // An outcome that can still be undone stays until dismissed or replaced: its Undo is not timed away.
  useEffect(() => {
    if (toast?.kind !== 'outcome' || toast.reverse !== undefined) return
    const timer = setTimeout(() => setToast(null), OUTCOME_MS)
    return () => clearTimeout(timer)
  }, [toast])

  return { toast, start, startReversible, undo, dismiss: () => setToast(null) }
}

function SecondsLeft({ until }: { until: number }) {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250)
    return () => clearInterval(timer)
  }, [])
  return <>{Math.max(0, Math.ceil((until - now) / 1000))}</>
}

export function UndoToast({ toast, undo, dismiss }: { toast: Toast | null; undo: () => void; dismiss: () => void }) {
  return (
    <div className="toast-area" role="status" aria-live="polite">
      {toast !== null && (
        <div className={`toast${toast.kind === 'outcome' && toast.failed ? ' toast-failed' : ''}`}>
          {toast.kind === 'waiting' && (
            <>
              <span>
                {toast.action.label} in <SecondsLeft until={toast.until} /> s.
              </span>
              <button type="button" onClick={undo}>
                Undo
              </button>
            </>
          )}
          {toast.kind === 'sending' && <span>{toast.action.label}…</span>}
          {toast.kind === 'outcome' && (
            <>
              <span>{toast.text}</span>
              {toast.reverse !== undefined && (
                <button type="button" onClick={undo}>
                  Undo
                </button>
              )}
              <button type="button" className="secondary" onClick={dismiss}>
                Dismiss
              </button>
            </>
          )}
        </div>
      )}
    </div>
  )
}
