// #/device/setup: this browser becomes the account's first device (src/client setUpFirstDevice,
// as `coffer-photos setup` runs it). The new keys are kept as pending before anything is
// published; the recovery phrase is shown once, then three of its words are asked back; only
// then do the keys become this browser's device keys. A reload in between finds the pending
// keys and continues with them (a new phrase: the last one shown counts).
import { useState, type FormEvent } from 'react'
import { setUpFirstDevice } from '#photos/account.ts'
import { RECOVERY_PHRASE_WORDS } from '#photos/format/recovery.ts'
import { linkTo, navigate } from '../../app/router.ts'
import { useSession, useSignedIn } from '../../app/session.tsx'
import { ErrorLine, Heading, useAction } from '../../app/ui.tsx'
import { workerArgon2id } from '../../lib/argon2.ts'
import { defaultDeviceName } from '../../lib/user-agent.ts'
import { completePendingKeys, dropPendingKeys, savePendingKeys, type PendingKeys } from '../../lib/store.ts'
import { explained } from './sentences.ts'
import { DeviceNameField, savedKeysOf, SlowNote, usePasswordPrompt } from './parts.tsx'
import { numbered } from '../../lib/numbered.ts'

/** How many words of the phrase are asked back. */
const CHECKED_WORDS = 3

type Step =
  | { readonly kind: 'start' }
  | { readonly kind: 'phrase'; readonly words: string[] }
  | { readonly kind: 'check'; readonly words: string[]; readonly asked: number[] }

/** CHECKED_WORDS distinct word positions (0-based), in order. */
function pickWords(): number[] {
  const positions = new Set<number>()
  while (positions.size < CHECKED_WORDS) positions.add(Math.floor(Math.random() * RECOVERY_PHRASE_WORDS))
  return [...positions].sort((a, b) => a - b)
}

export function FirstDevice({ resumed }: { resumed: PendingKeys | null }) {
  const { client, session } = useSignedIn()
  const { keysSaved } = useSession()
  const [pending, setPending] = useState(resumed)
  const [name, setName] = useState(resumed?.deviceName ?? defaultDeviceName)
  const [step, setStep] = useState<Step>({ kind: 'start' })
  const { busy, error, run } = useAction()
  const password = usePasswordPrompt()

  const start = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      const deviceId = pending?.deviceId ?? crypto.randomUUID()
      const deviceName = pending?.deviceName ?? name.trim()
      try {
        const set = await setUpFirstDevice({
          client,
          userId: session.userId,
          deviceId,
          deviceName,
          pending,
          keep: async (keys) => {
            const kept = { ...savedKeysOf(session.userId, deviceId, keys), deviceName }
            await savePendingKeys(kept)
            setPending(kept) // a second try after a failure resumes with them too
          },
          forget: async () => {
            await dropPendingKeys()
            setPending(null)
          },
          password: password.prompt,
          argon2id: workerArgon2id,
        })
        setStep({ kind: 'phrase', words: set.phrase.split(' ') })
      } catch (caught) {
        throw explained(caught)
      }
    })
  }

  const finish = async () => {
    if (pending === null) return
    keysSaved(await completePendingKeys(pending))
    navigate('photos')
  }

  if (step.kind === 'phrase') return <PhraseShown words={step.words} onWritten={() => setStep({ kind: 'check', words: step.words, asked: pickWords() })} />
  if (step.kind === 'check')
    return <PhraseCheck words={step.words} asked={step.asked} onBack={() => setStep({ kind: 'phrase', words: step.words })} onChecked={finish} />

  return (
    <main className="narrow">
      <Heading>{resumed === null ? 'Set up this browser' : 'Finish setting up this browser'}</Heading>
      {resumed === null ? (
        <p>
          This browser makes your account's keys: the ones that encrypt your photos. They stay on your devices; the server never sees them. Then you get a
          recovery phrase to write down.
        </p>
      ) : (
        <p>
          Setting up stopped before your recovery phrase was checked. Continue with the same keys: you get a new recovery phrase, and any phrase shown before no
          longer counts.
        </p>
      )}
      <form onSubmit={start}>
        {pending === null ? <DeviceNameField value={name} onChange={setName} /> : <p>This browser is listed as “{pending.deviceName}”.</p>}
        {busy && <SlowNote>Setting up this browser and sealing your recovery phrase.</SlowNote>}
        <ErrorLine error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Setting up…' : resumed === null ? 'Set up this browser' : 'Continue setting up'}
        </button>
      </form>
      {resumed === null && !busy && (
        <p>
          <a href={linkTo('device')}>Back to the choices</a>
        </p>
      )}
      {password.dialog}
    </main>
  )
}

function PhraseShown({ words, onWritten }: { words: string[]; onWritten: () => void }) {
  return (
    <main className="narrow">
      <Heading>Your recovery phrase</Heading>
      <p>
        Write these {words.length} words down, in order, on paper, and keep them somewhere safe away from this device. With them and your password, your photos
        can be recovered if every device is lost. <strong>They are shown only now.</strong>
      </p>
      <ol className="phrase" aria-label="Recovery phrase">
        {numbered(words).map(({ entry: word, number }) => (
          <li key={number}>
            <span className="number" aria-hidden="true">
              {number}.
            </span>{' '}
            <span className="word">{word}</span>
          </li>
        ))}
      </ol>
      <button type="button" onClick={onWritten}>
        I have written it down
      </button>
    </main>
  )
}

function PhraseCheck({ words, asked, onBack, onChecked }: { words: string[]; asked: number[]; onBack: () => void; onChecked: () => Promise<void> }) {
  const [typed, setTyped] = useState<string[]>(() => asked.map(() => ''))
  const { busy, error, run } = useAction()
  const submit = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      const wrong = asked.filter((position, i) => typed[i]!.trim().toLowerCase() !== words[position])
      if (wrong.length > 0) {
        throw new Error(
          `${wrong.map((position) => `Word ${position + 1}`).join(' and ')} ${wrong.length === 1 ? 'is' : 'are'} not what the phrase says. Look at your written copy again, or go back to the phrase.`,
        )
      }
      await onChecked()
    })
  }
  return (
    <main className="narrow">
      <Heading>Check your recovery phrase</Heading>
      <p>To be sure it is written down correctly, type these words from your copy.</p>
      <form onSubmit={submit}>
        {asked.map((position, i) => (
          <label key={position}>
            Word {position + 1}
            <input
              autoComplete="off"
              autoCapitalize="none"
              spellCheck={false}
              required
              value={typed[i]}
              onChange={(e) => setTyped(typed.map((word, j) => (j === i ? e.target.value : word)))}
            />
          </label>
        ))}
        <ErrorLine error={error} />
        <button type="submit" disabled={busy}>
          Check and finish
        </button>
        <button type="button" className="secondary" onClick={onBack}>
          Show the phrase again
        </button>
      </form>
    </main>
  )
}
