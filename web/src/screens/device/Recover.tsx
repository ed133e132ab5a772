// #/device/recover: this browser becomes a device with the recovery phrase (src/client
// recoverWithPhrase, as `coffer-photos recover`). The escrow's argon2id runs in a worker. A
// phrase that does not open the escrow changes nothing.
import { useState, type FormEvent } from 'react'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { recoverWithPhrase } from '#photos/account.ts'
import { RECOVERY_PHRASE_WORDS } from '#photos/format/recovery.ts'
import { linkTo, navigate } from '../../app/router.ts'
import { useSession, useSignedIn } from '../../app/session.tsx'
import { ErrorLine, Heading, useAction } from '../../app/ui.tsx'
import { workerArgon2id } from '../../lib/argon2.ts'
import { defaultDeviceName } from '../../lib/user-agent.ts'
import { saveKeys } from '../../lib/store.ts'
import { explained } from './sentences.ts'
import { DeviceNameField, savedKeysOf, SlowNote } from './parts.tsx'

const WORDS = new Set(wordlist)

/** The phrase's words as typed (any case, spacing, line breaks), or a sentence on what is wrong with them before anything is tried. */
function phraseWords(text: string): string[] {
  const words = text
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== '')
  if (words.length !== RECOVERY_PHRASE_WORDS)
    throw new Error(`Your recovery phrase has ${RECOVERY_PHRASE_WORDS} words; this is ${words.length}. Check your written copy.`)
  const unknown = words.findIndex((word) => !WORDS.has(word))
  if (unknown >= 0) throw new Error(`Word ${unknown + 1}, “${words[unknown]}”, is not one of the recovery words. Check its spelling on your written copy.`)
  return words
}

export function Recover() {
  const { client, session } = useSignedIn()
  const { keysSaved } = useSession()
  const [phrase, setPhrase] = useState('')
  const [name, setName] = useState(defaultDeviceName)
  const { busy, error, run } = useAction()

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      const words = phraseWords(phrase)
      const deviceId = crypto.randomUUID()
      try {
        const recovered = await recoverWithPhrase({
          client,
          userId: session.userId,
          deviceId,
          deviceName: name.trim(),
          phrase: words.join(' '),
          argon2id: workerArgon2id,
        })
        const saved = savedKeysOf(session.userId, deviceId, recovered.keys)
        await saveKeys(saved)
        keysSaved(saved)
        navigate('photos')
      } catch (caught) {
        throw explained(caught)
      }
    })
  }

  return (
    <main className="narrow">
      <Heading>Recover with your recovery phrase</Heading>
      <p>Enter the {RECOVERY_PHRASE_WORDS} words you wrote down when your account was set up, in order. Spaces, line breaks and capitals do not matter.</p>
      <form onSubmit={submit}>
        <label>
          Recovery phrase
          <textarea
            name="phrase"
            rows={5}
            autoComplete="off"
            autoCapitalize="none"
            spellCheck={false}
            required
            value={phrase}
            onChange={(e) => setPhrase(e.target.value)}
          />
        </label>
        <DeviceNameField value={name} onChange={setName} />
        {busy && <SlowNote>Opening your keys with the phrase.</SlowNote>}
        <ErrorLine error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Recovering…' : 'Recover'}
        </button>
      </form>
      {!busy && (
        <p>
          <a href={linkTo('device')}>Back to the choices</a>
        </p>
      )}
    </main>
  )
}
