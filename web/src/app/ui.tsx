// Small pieces every screen uses: a form's error line, a notice, a busy button, a page heading that takes
// focus when the screen opens (so a keyboard or screen-reader user knows where they are).
import { useEffect, useRef, useState, type ReactNode } from 'react'
import { sentenceFor } from '../lib/errors.ts'

export function ErrorLine({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null
  return (
    <p className="error" role="alert">
      {sentenceFor(error)}
    </p>
  )
}

/** A notice the screen opens with (signed out, locked), read out when it appears. */
export function Notice({ text }: { text: string | null }) {
  if (text === null) return null
  return (
    <p className="notice" role="status">
      {text}
    </p>
  )
}

export function Heading({ children }: { children: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null)
  useEffect(() => ref.current?.focus(), [])
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  )
}

/**
 * Runs an async action for a form or button: busy while it runs, the error kept for ErrorLine.
 * `run` ignores a second start while the first is running.
 */
export function useAction(): { busy: boolean; error: unknown; run: (action: () => Promise<void>) => Promise<void>; setError: (error: unknown) => void } {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const running = useRef(false)
  const run = async (action: () => Promise<void>): Promise<void> => {
    if (running.current) return
    running.current = true
    setBusy(true)
    setError(null)
    try {
      await action()
    } catch (caught) {
      setError(caught)
    } finally {
      running.current = false
      setBusy(false)
    }
  }
  return { busy, error, run, setError }
}
