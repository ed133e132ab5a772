// What the device screens share: the password dialog the freshness gate asks through, the
// question about the 6-digit codes, the device name field, the notes while a pairing waits and
// while argon2id runs, and the keys as this browser saves them.
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from 'react'
import type { AccountKeys, PasswordPrompt } from '#photos/account.ts'
import { DEVICE_NAME_MAX } from '#photos/account.ts'
import type { ConfirmSas } from '#photos/enrollment.ts'
import { EnrollmentError } from '#photos/enrollment.ts'
import { Modal } from '../../app/ui.tsx'
import type { SavedKeys } from '../../lib/store.ts'

export function savedKeysOf(userId: string, deviceId: string, keys: AccountKeys): SavedKeys {
  return { userId, deviceId, masterKey: keys.masterKey, identitySeeds: keys.identitySeeds, xwingSeed: keys.xwingSeed }
}

/** Thrown into a flow when the person closes the password dialog. */
class PasswordCancelled extends Error {
  constructor() {
    super('You closed the password question, so nothing was changed. Start again when you are ready.')
  }
}

/**
 * The freshness gate's question (the sign-in is older than 10 minutes): `prompt` opens a modal
 * dialog and answers the password typed; Cancel or Escape stops the flow. Render `dialog`.
 */
export function usePasswordPrompt(): { prompt: PasswordPrompt; dialog: ReactNode } {
  const [asking, setAsking] = useState<{ resolve: (password: string) => void; reject: (error: Error) => void } | null>(null)
  const prompt: PasswordPrompt = () => new Promise((resolve, reject) => setAsking({ resolve, reject }))
  const dialog =
    asking === null ? null : (
      <PasswordDialog
        onPassword={(password) => {
          setAsking(null)
          asking.resolve(password)
        }}
        onCancel={() => {
          setAsking(null)
          asking.reject(new PasswordCancelled())
        }}
      />
    )
  return { prompt, dialog }
}

function PasswordDialog({ onPassword, onCancel }: { onPassword: (password: string) => void; onCancel: () => void }) {
  const [password, setPassword] = useState('')
  const submit = (event: FormEvent) => {
    event.preventDefault()
    onPassword(password)
  }
  return (
    <Modal title="Confirm your password" onCancel={onCancel}>
      <p>You signed in more than 10 minutes ago. For this step, enter your account's password again.</p>
      <form onSubmit={submit}>
        <label>
          Password
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <div className="actions">
          <button type="submit">Confirm</button>
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  )
}

/**
 * The short authentication string and the question, for the pairing flows: `confirmSas` shows
 * the code and answers Yes or No; no answer by `deadline` (the pairing's end) stops the exchange
 * as expired. Render `question` where the code belongs.
 */
export function useSasQuestion(other: string): { confirmSas: (deadline: number) => ConfirmSas; question: ReactNode } {
  const [asking, setAsking] = useState<{ sas: string; answer: (same: boolean) => void } | null>(null)
  const confirmSas =
    (deadline: number): ConfirmSas =>
    (sas) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => {
            setAsking(null)
            reject(new EnrollmentError('expired', 'the pairing code expired before the codes were confirmed'))
          },
          Math.max(0, deadline - Date.now()),
        )
        setAsking({
          sas,
          answer: (same) => {
            clearTimeout(timer)
            setAsking(null)
            resolve(same)
          },
        })
      })
  const question = asking === null ? null : <SasQuestion sas={asking.sas} other={other} answer={asking.answer} />
  return { confirmSas, question }
}

function SasQuestion({ sas, other, answer }: { sas: string; other: string; answer: (same: boolean) => void }) {
  const heading = useId()
  // The question takes the focus, not its Yes: a keyboard user reads before answering.
  const ref = useRef<HTMLHeadingElement>(null)
  useEffect(() => ref.current?.focus(), [])
  return (
    <section className="panel" aria-labelledby={heading}>
      <h2 id={heading} ref={ref} tabIndex={-1}>
        Compare the codes
      </h2>
      <p>This browser shows:</p>
      <p className="sas">{sas}</p>
      <p>Does {other} show the same code?</p>
      <div className="actions">
        <button type="button" onClick={() => answer(true)}>
          Yes, the same
        </button>
        <button type="button" className="secondary" onClick={() => answer(false)}>
          No, it is different
        </button>
      </div>
    </section>
  )
}

export function DeviceNameField({ value, onChange }: { value: string; onChange: (name: string) => void }) {
  return (
    <label>
      Name of this browser
      <input name="device-name" required maxLength={DEVICE_NAME_MAX} value={value} onChange={(e) => onChange(e.target.value)} />
      <span className="hint">How your other devices list it.</span>
    </label>
  )
}

/** Said while a pairing waits for the other device, with the way to stop it. */
export function Waiting({ text, onCancel }: { text: string; onCancel: () => void }) {
  return (
    <div>
      <p className="notice" role="status">
        {text}
      </p>
      <button type="button" className="secondary" onClick={onCancel}>
        Cancel
      </button>
    </div>
  )
}

/** Said while the escrow's argon2id runs in its worker. */
export function SlowNote({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children} This takes a few seconds.
    </p>
  )
}
