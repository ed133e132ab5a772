// A moderation record in words: what was done, when, to what, and why.
import type { ModerationRecord } from '#sdk/client.ts'
import { whenText } from '../lib/format.ts'
import { numbered } from '../lib/numbered.ts'

type ModerationEvent = ModerationRecord['events'][number]

function whatHappened(event: ModerationEvent) {
  const asset = <code>{event.asset_id}</code>
  switch (event.action) {
    case 'suspended':
      return <>Account suspended</>
    case 'reinstated':
      return <>Account reinstated</>
    case 'second_factor_reset':
      return <>Second factor reset: every session ended</>
    case 'account_deleted':
      return <>Account deleted: everything it held is removed, except what a legal hold or a retention floor keeps</>
    case 'taken_down':
      return <>Asset {asset} taken down</>
    case 'restored':
      return <>Asset {asset} restored</>
    case 'legal_hold':
      return <>Asset {asset} put under legal hold</>
    case 'hold_lifted':
      return <>Legal hold on asset {asset} lifted</>
  }
}

export function RecordEvents({ record }: { record: ModerationRecord }) {
  if (record.events.length === 0) return <p className="muted">No moderation events: no operator has acted on this account.</p>
  return (
    <ol className="record">
      {numbered(record.events).map(({ entry: event, number }) => (
        <li key={number}>
          <time dateTime={event.at}>{whenText(event.at)}</time>: {whatHappened(event)}.{' '}
          {event.reason === undefined ? <span className="muted">No reason given.</span> : <>Reason: “{event.reason}”</>}
        </li>
      ))}
    </ol>
  )
}
