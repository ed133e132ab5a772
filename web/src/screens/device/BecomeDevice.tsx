// Signed in, but this browser holds none of the account's keys: it becomes a device first. A
// setup that stopped half-way continues; otherwise the route picks the flow (#/device/setup,
// /join, /recover), and any other route shows the choice: the first device when the account has
// no device directory yet, else pairing with a device or the recovery phrase.
import { fetchedDirectory } from '#photos/account.ts'
import { linkTo } from '../../app/router.ts'
import { useSignedIn } from '../../app/session.tsx'
import { Heading, LoadStatus, useLoaded } from '../../app/ui.tsx'
import { readPendingKeys } from '../../lib/store.ts'
import { FirstDevice } from './FirstDevice.tsx'
import { JoinDevice } from './JoinDevice.tsx'
import { Recover } from './Recover.tsx'

export function BecomeDevice({ flow }: { flow: string | undefined }) {
  const { client, session } = useSignedIn()
  const loaded = useLoaded(async () => {
    const [pending, directory] = await Promise.all([readPendingKeys(), fetchedDirectory(client, session.userId)])
    return { pending: pending?.userId === session.userId ? pending : null, setUp: directory !== null }
  }, [client, session.userId, flow])
  if (loaded.value === undefined) {
    return (
      <main className="narrow">
        <LoadStatus loaded={loaded} what="your account" />
      </main>
    )
  }
  const { pending, setUp } = loaded.value
  if (pending !== null) return <FirstDevice resumed={pending} />
  if (flow === 'setup' && !setUp) return <FirstDevice resumed={null} />
  if (flow === 'join' && setUp) return <JoinDevice />
  if (flow === 'recover' && setUp) return <Recover />
  return <Choice setUp={setUp} />
}

function Choice({ setUp }: { setUp: boolean }) {
  return (
    <main className="narrow">
      <Heading>Make this browser one of your devices</Heading>
      <p>Your photos are encrypted with keys that only your devices hold. This browser needs them before it can show your photos.</p>
      {setUp ? (
        <ul className="cards">
          <li>
            <a href={linkTo('device', 'join')}>Add this browser with a code from another device</a>
            <p>When a phone, computer or browser of yours already opens your photos: it shows a code, you enter it here.</p>
          </li>
          <li>
            <a href={linkTo('device', 'recover')}>Recover with my recovery phrase</a>
            <p>When you have none of those devices at hand: the 24 words you wrote down when you set up your account.</p>
          </li>
        </ul>
      ) : (
        <ul className="cards">
          <li>
            <a href={linkTo('device', 'setup')}>Set up this browser as your first device</a>
            <p>Your account has no devices yet. This browser makes its keys, and you write down a recovery phrase.</p>
          </li>
        </ul>
      )}
    </main>
  )
}
