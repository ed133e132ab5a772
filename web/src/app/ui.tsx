// Small pieces every screen uses: a form's error line, a notice, a busy button, a page heading
// that takes focus when the screen opens (so a keyboard or screen-reader user knows where they
// are), data loaded for a screen, a confirmation dialog.
import { useCallback, useEffect, useId, useRef, useState, type DependencyList, type ReactNode, type Ref } from 'react'
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
  // The same function across renders: an effect that runs an action names it in its dependencies.
  const run = useCallback(async (action: () => Promise<void>): Promise<void> => {
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
  }, [])
  return { busy, error, run, setError }
}

/**
 * A modal dialog: the browser's own <dialog>, shown while mounted, so focus stays inside it and
 * Escape calls `onCancel`.
 */
export function Modal({ title, children, onCancel }: { title: string; children: ReactNode; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null)
  const heading = useId()
  useEffect(() => {
    const dialog = ref.current
    dialog?.showModal()
    return () => dialog?.close()
  }, [])
  return (
    // Escape is a `cancel` event; `close` would also come from the clean-up's close().
    <dialog
      ref={ref}
      aria-labelledby={heading}
      onCancel={(event) => {
        event.preventDefault()
        onCancel()
      }}
    >
      <h2 id={heading}>{title}</h2>
      {children}
    </dialog>
  )
}

/** A modal question before an action that is hard to undo; Cancel comes first, so it has the focus when the dialog opens. */
export function Confirm({
  title,
  children,
  confirmLabel,
  onConfirm,
  onCancel,
}: {
  title: string
  children: ReactNode
  confirmLabel: string
  onConfirm: () => void
  onCancel: () => void
}) {
  return (
    <Modal title={title} onCancel={onCancel}>
      {children}
      <div className="actions">
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="danger" onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </Modal>
  )
}

/** What a screen loads from the server: the value once it came (or the error), and a way to load it again. */
export interface Loaded<T> {
  readonly value: T | undefined
  readonly error: unknown
  readonly reload: () => void
}

/** Runs `load` when `deps` change (and on reload); an answer that arrives after a newer load started is dropped. */
export function useLoaded<T>(load: () => Promise<T>, deps: DependencyList): Loaded<T> {
  const [result, setResult] = useState<{ value: T | undefined; error: unknown }>({ value: undefined, error: null })
  // The load of this render (a new closure each time); `deps` say when to run it.
  const latestLoad = useRef(load)
  latestLoad.current = load
  // Counts loads: an answer is kept only while its load is the latest.
  const loads = useRef(0)
  const reload = useCallback(() => {
    const mine = ++loads.current
    latestLoad.current().then(
      (value) => loads.current === mine && setResult({ value, error: null }),
      (error: unknown) => loads.current === mine && setResult({ value: undefined, error }),
    )
  }, [])
  useEffect(() => {
    reload()
    return () => {
      loads.current++
    }
  }, [reload, ...deps])
  return { ...result, reload }
}

/** While `loaded` loads, says so; when it failed, the sentence and a way to try again. */
export function LoadStatus({ loaded, what }: { loaded: Loaded<unknown>; what: string }) {
  if (loaded.error === null) return loaded.value === undefined ? <p className="muted">Loading {what}…</p> : null
  return (
    <div>
      <ErrorLine error={loaded.error} />
      <button type="button" className="secondary" onClick={loaded.reload}>
        Load {what} again
      </button>
    </div>
  )
}

/**
 * A second-factor code field: the authenticator app's six digits only, or (`recovery`) a recovery
 * code in their place. One input either way, so that switching keeps it (and its focus).
 */
export function CodeField({
  value,
  onChange,
  label,
  recovery,
  inputRef,
}: {
  value: string
  onChange: (value: string) => void
  label: string
  recovery: boolean
  inputRef?: Ref<HTMLInputElement>
}) {
  return (
    <label>
      {label}
      <input
        ref={inputRef}
        name="code"
        autoComplete="one-time-code"
        required
        value={value}
        onChange={(e) => onChange(e.target.value)}
        inputMode={recovery ? 'text' : 'numeric'}
        pattern={recovery ? undefined : '[0-9 ]{6,7}'}
        autoCapitalize={recovery ? 'none' : undefined}
        spellCheck={recovery ? false : undefined}
      />
    </label>
  )
}
