// A modal question before an action that is hard on someone (suspend, take down), with the
// reason it will record: the browser's own <dialog>, so focus stays inside it and Escape cancels.
import { useEffect, useId, useRef, type ReactNode } from 'react'

interface Props {
  readonly title: string
  readonly children: ReactNode
  readonly confirmLabel: string
  /** The reason the action will record, as typed. */
  readonly reason: string
  readonly onConfirm: () => void
  readonly onCancel: () => void
}

export function Confirm({ title, children, confirmLabel, reason, onConfirm, onCancel }: Props) {
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
      <p>{reason.trim() === '' ? 'No reason will be recorded.' : `Reason recorded: “${reason.trim()}”`}</p>
      <div className="actions">
        <button type="button" className="danger" onClick={onConfirm}>
          {confirmLabel}
        </button>
        <button type="button" className="secondary" onClick={onCancel} autoFocus>
          Cancel
        </button>
      </div>
    </dialog>
  )
}
