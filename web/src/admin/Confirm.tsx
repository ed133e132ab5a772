// The question before an action that is hard on someone (suspend, take down, reset a second
// factor), with the reason it will record: typed beside the action's button and shown here, or
// asked here.
import type { ReactNode } from 'react'
import { Confirm as Question } from '../app/ui.tsx'

/** The longest reason the operator API takes. */
export const REASON_MAX = 2000

interface Props {
  readonly title: string
  readonly children: ReactNode
  readonly confirmLabel: string
  /** The reason the action will record, as typed. */
  readonly reason: string
  /** Given: the reason is asked in the dialog, and each change of it told here. */
  readonly onReason?: (reason: string) => void
  /** Who reads the reason asked for, beside its label; the owner unless given (a deleted account has none left to read it). */
  readonly reasonReader?: string
  readonly onConfirm: () => void
  readonly onCancel: () => void
}

export function Confirm({ children, reason, onReason, reasonReader = 'the owner sees it', ...question }: Props) {
  return (
    <Question {...question}>
      {children}
      {onReason === undefined ? (
        <p>{reason.trim() === '' ? 'No reason will be recorded.' : `Reason recorded: “${reason.trim()}”`}</p>
      ) : (
        <label>
          Reason (optional; {reasonReader})
          <input name="confirm-reason" maxLength={REASON_MAX} value={reason} onChange={(e) => onReason(e.target.value)} />
        </label>
      )}
    </Question>
  )
}
