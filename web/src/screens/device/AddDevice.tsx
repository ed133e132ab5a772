// #/devices/add: this browser, a device of the account, adds another one (src/client openPairing
// and addDeviceByPairing, as `coffer-photos device add`). The pairing code is shown as text and
// as a QR code; once the new device answers, both show a 6-digit code, and the keys are sent
// only when the person says they are the same.
import { useEffect, useRef, useState } from 'react'
import { addDeviceByPairing, openPairing, type DeviceAdded, type Pairing } from '#photos/pairing.ts'
import type { Hello } from '#photos/format/enrollment.ts'
import { linkTo } from '../../app/router.ts'
import { useSignedIn } from '../../app/session.tsx'
import { clockText } from '../../lib/format.ts'
import { ErrorLine, Heading, useAction } from '../../app/ui.tsx'
import { browserAlbumMemory } from '../../lib/album-history.ts'
import { QrCode } from '../security/QrCode.tsx'
import { explained } from './sentences.ts'
import { usePasswordPrompt, useSasQuestion, Waiting } from './parts.tsx'

export function AddDevice() {
  const { client, session, keys } = useSignedIn()
  const [pairing, setPairing] = useState<Pairing | null>(null)
  const [hello, setHello] = useState<Hello | null>(null)
  const [added, setAdded] = useState<DeviceAdded | null>(null)
  const [copied, setCopied] = useState<string | null>(null)
  const { busy, error, run } = useAction()
  const password = usePasswordPrompt()
  const sas = useSasQuestion('the new device')
  const stop = useRef<AbortController | null>(null)
  useEffect(() => () => stop.current?.abort(), [])

  if (keys === null) return null // App shows this screen only to a device

  const start = () => {
    setAdded(null)
    setHello(null)
    void run(async () => {
      const controller = new AbortController()
      stop.current = controller
      try {
        const opened = await openPairing(client, password.prompt)
        setPairing(opened)
        setAdded(
          await addDeviceByPairing({
            client,
            userId: session.userId,
            keys,
            pairing: opened,
            onHello: setHello,
            confirmSas: sas.confirmSas(Date.parse(opened.expiresAt)),
            history: () => browserAlbumMemory(keys.masterKey).handOver(),
            signal: controller.signal,
          }),
        )
      } catch (caught) {
        throw explained(caught)
      } finally {
        setPairing(null)
        stop.current = null
      }
    })
  }

  const copy = (code: string) => {
    navigator.clipboard.writeText(code).then(
      () => setCopied('Copied.'),
      () => setCopied('This browser did not allow copying: select the code and copy it.'),
    )
  }

  return (
    <main className="narrow">
      <Heading>Add a device</Heading>
      {added !== null && (
        <p className="notice" role="status">
          “{added.device.device_name}” is now a device of your account: your photos open there too.
          {added.history === 'kept' && ' It also has what this browser saw of each album, so a server that rewrites an album is caught there too.'}
        </p>
      )}
      {pairing === null && (
        <>
          <p>
            This browser shows a pairing code; the new device takes it. In a browser, sign in to your account there and choose{' '}
            <strong>Add this browser with a code from another device</strong>; on a computer, run <code>coffer-photos join</code> with the code.
          </p>
          <ErrorLine error={error} />
          <button type="button" onClick={start} disabled={busy}>
            {added === null ? 'Show a pairing code' : 'Add another device'}
          </button>
        </>
      )}
      {pairing !== null && sas.question === null && (
        <section aria-labelledby="pairing-title">
          <h2 id="pairing-title">Pairing code</h2>
          <p>Enter or scan this code on the new device. It works once, until {clockText(pairing.expiresAt)}.</p>
          <p className="code" data-testid="pairing-code">
            {pairing.pairingCode}
          </p>
          <button type="button" className="secondary" onClick={() => copy(pairing.pairingCode)}>
            Copy the code
          </button>
          {copied !== null && <span role="status">{copied}</span>}
          <QrCode text={pairing.pairingCode} label="The pairing code as a QR code" />
          <Waiting text="Waiting for the new device…" onCancel={() => stop.current?.abort()} />
        </section>
      )}
      {pairing !== null && hello !== null && <p role="status">“{hello.device_name}” answered.</p>}
      {sas.question}
      {password.dialog}
      <p>
        <a href={linkTo('photos')}>Back to your photos</a>
      </p>
    </main>
  )
}
