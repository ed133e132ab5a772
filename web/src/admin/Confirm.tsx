// The question before an action that is hard on someone (suspend, take down), with the reason
// it will record.
import type { ReactNode } from 'react'
import { Confirm as Question } from '../app/ui.tsx'

interface Props {
  readonly title: string
  readonly children: ReactNode
  readonly confirmLabel: string
  /** The reason the action will record, as typed. */
  readonly reason: string
  readonly onConfirm: () => void
  readonly onCancel: () => void
}

export function Confirm({ children, reason, ...question }: Props) {
  return (
    <Question {...question}>
      {children}
      <p>{reason.trim() === '' ? 'No reason will be recorded.' : `Reason recorded: “${reason.trim()}”`}</p>
    </Question>
  )
}
