// #/device/join: this browser becomes a device with a pairing code from a device that is set up
// (another browser's "Add a device", or `coffer-photos device add`): src/client joinByPairing.
// Both screens show a 6-digit code; only when the person says they are the same are the keys
// sent, checked against the account's directory and kept. A No, a Cancel or the code's expiry
// keeps nothing.
import { useEffect, useRef, useState, type FormEvent } from 'react'
import { isPairingCode, joinByPairing, pairingCodeLive, PAIRING_LIFETIME_MS } from '#photos/pairing.ts'
import { linkTo, navigate } from '../../app/router.ts'
import { useSession, useSignedIn } from '../../app/session.tsx'
import { ErrorLine, Heading, useAction } from '../../app/ui.tsx'
import { defaultDeviceName } from '../../lib/user-agent.ts'
import { browserAlbumMemory } from '../../lib/album-history.ts'
import { saveKeys, type SavedKeys } from '../../lib/store.ts'
import { explained } from './sentences.ts'
import { DeviceNameField, savedKeysOf, useSasQuestion, Waiting } from './parts.tsx'

export function JoinDevice() {
  const { client, session } = useSignedIn()
  const { keysSaved } = useSession()
  const [code, setCode] = useState('')
  const [name, setName] = useState(defaultDeviceName)
  const [waiting, setWaiting] = useState(false)
  const { busy, error, run } = useAction()
  const sas = useSasQuestion('the other device')
  const stop = useRef<AbortController | null>(null)
  useEffect(() => () => stop.current?.abort(), [])

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      const pairingCode = code.replace(/\s+/g, '')
      if (!isPairingCode(pairingCode)) throw new Error('A pairing code is 43 letters, digits, - and _. Copy it again from the other device.')
      const controller = new AbortController()
      stop.current = controller
      setWaiting(true)
      let saved: SavedKeys
      try {
        if (!(await pairingCodeLive(client, pairingCode)))
          throw new Error('That pairing code is not open (mistyped, already used, or expired). Check it, or ask the other device for a new one.')
        const deadline = Date.now() + PAIRING_LIFETIME_MS
        const deviceId = crypto.randomUUID()
        let masterKey: Uint8Array | null = null
        const joined = await joinByPairing({
          client,
          userId: session.userId,
          deviceId,
          deviceName: name.trim(),
          pairingCode,
          confirmSas: sas.confirmSas(deadline),
          keep: (keys) => {
            masterKey = keys.masterKey
            return saveKeys(savedKeysOf(session.userId, deviceId, keys))
          },
          // What the other device saw of each album: a server that shows this browser less of one is caught at its first opening.
          keepHistory: (albums) => browserAlbumMemory(masterKey!).adopt(albums),
          signal: controller.signal,
          deadline,
        })
        saved = savedKeysOf(session.userId, deviceId, joined.keys)
      } catch (caught) {
        throw explained(caught)
      } finally {
        setWaiting(false)
        stop.current = null
      }
      keysSaved(saved)
      navigate('photos')
    })
  }

  return (
    <main className="narrow">
      <Heading>Add this browser</Heading>
      <p>
        On a device where your photos already open, choose <strong>Add a device</strong> (in a browser, next to Security; on a computer,{' '}
        <code>coffer-photos device add</code>
        ). It shows a pairing code: enter it here.
      </p>
      <form onSubmit={submit}>
        <label>
          Pairing code
          <input
            name="pairing-code"
            autoComplete="off"
            autoCapitalize="none"
            spellCheck={false}
            required
            value={code}
            onChange={(e) => setCode(e.target.value)}
            disabled={busy}
          />
        </label>
        <DeviceNameField value={name} onChange={setName} />
        <ErrorLine error={error} />
        {!busy && <button type="submit">Connect</button>}
      </form>
      {sas.question}
      {waiting && sas.question === null && <Waiting text="Waiting for the other device…" onCancel={() => stop.current?.abort()} />}
      {!busy && (
        <p>
          <a href={linkTo('device')}>Back to the choices</a>
        </p>
      )}
    </main>
  )
}
