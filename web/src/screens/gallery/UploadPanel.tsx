// The uploads of the album page, and of a Google Takeout import (TakeoutImport.tsx): each file's
// stage and progress as the library tells them (src/client UploadProgress: uploadFraction of the
// bytes read and sent, against those its way of sending needs), and the total, with a way forward
// for the files that failed. A long queue is not a long list: the files that need the person or
// are moving are listed, the rest counted.
import { useEffect, useRef, useState } from 'react'
import { uploadFraction, type UploadStage } from '#photos/files.ts'
import { sentenceFor } from '../../lib/errors.ts'
import { countText, percentText, sizeText, speedText, timeLeftText } from '../../lib/format.ts'
import { UploadRate } from '../../lib/upload-rate.ts'
import type { UploadItem } from '../../lib/uploads.ts'

const STATE_TEXT: Record<Exclude<UploadItem['state'], 'sending'>, string> = {
  waiting: 'Waiting',
  stored: 'Stored',
  present: 'Already in the album',
  failed: 'Failed',
}

/** What a file being sent is doing, by the stage of its upload. */
const STAGE_TEXT: Record<UploadStage, string> = {
  plan: 'Starting',
  hash: 'Reading',
  describe: 'Making its thumbnail',
  session: 'Encrypting and sending',
  send: 'Encrypting and sending',
  commit: 'Saving',
  done: 'Saving',
}

/** The bytes of the file's size its upload has done so far: all of it once finished. */
function doneOf(item: UploadItem): number {
  if (item.state === 'stored' || item.state === 'present') return item.size
  return item.progress === null ? 0 : uploadFraction(item.progress) * item.size
}

/** Files waiting, and files done, listed at most: those past them are counted in a line. */
const LISTED_WAITING = 5
const LISTED_DONE = 5

/** Every failed file and every file being sent, the next waiting and the last done, in queue order; and how many of the others. */
function listedOf(items: readonly UploadItem[]): { listed: UploadItem[]; moreWaiting: number; moreDone: number } {
  const isDone = (item: UploadItem) => item.state === 'stored' || item.state === 'present'
  const waiting = items.filter((item) => item.state === 'waiting')
  const done = items.filter(isDone)
  const shownWaiting = new Set(waiting.slice(0, LISTED_WAITING))
  const shownDone = new Set(done.slice(-LISTED_DONE))
  const listed = items.filter((item) => item.state === 'failed' || item.state === 'sending' || shownWaiting.has(item) || shownDone.has(item))
  return { listed, moreWaiting: waiting.length - shownWaiting.size, moreDone: done.length - shownDone.size }
}

/** The bytes of the whole upload, and those done. */
function totalsOf(items: readonly UploadItem[]): { total: number; done: number } {
  return { total: items.reduce((sum, item) => sum + item.size, 0), done: items.reduce((sum, item) => sum + doneOf(item), 0) }
}

/** How often the whole upload's percentage, speed and time left are worked out and told (an aria-live line: at most once a second). */
const SUMMARY_MS = 1_000

/**
 * The whole upload's line: "37% · 2.4 MB/s · about 3 min left", once a second while files are
 * sent, from the bytes done over the last few seconds (lib/upload-rate.ts); null when idle.
 */
function useSummary(items: readonly UploadItem[], busy: boolean): string | null {
  const latest = useRef(items)
  latest.current = items
  const [summary, setSummary] = useState<string | null>(null)
  useEffect(() => {
    if (!busy) {
      setSummary(null)
      return
    }
    const rate = new UploadRate()
    const tell = () => {
      const { total, done } = totalsOf(latest.current)
      rate.sample(performance.now(), done)
      const speed = rate.speed
      setSummary(
        [
          percentText(total === 0 ? 0 : done / total),
          speed === null || speed <= 0 ? null : speedText(speed),
          timeLeftText(total === 0 ? null : rate.secondsLeft(total - done)),
        ]
          .filter((part) => part !== null)
          .join(' · '),
      )
    }
    tell()
    const timer = setInterval(tell, SUMMARY_MS)
    return () => clearInterval(timer)
  }, [busy])
  return summary
}

/** What the panel's buttons act on: an album's uploads (lib/uploads.ts), or a Takeout import (lib/takeout-import.ts), which keeps every photo it lists. */
export interface UploadActions {
  retry(): void
  /** Drops a failed file from the queue. */
  remove?(id: string): Promise<void>
  /** Forgets the finished files of the list. */
  clearFinished?(): void
}

/** What the panel says while files go: where the files left go on when the page is left. */
const ALBUM_BUSY_HINT = 'You can leave or reload this page: the files left continue when the album is opened again in this browser.'

/**
 * `suspended`: the account is suspended, so trying again would be refused too; `adding`: files
 * are still being read into the queue; `stopped`: nothing more is started (a Takeout import
 * stopped), so no speed or time left is told; `busyHint`: what the panel says while files go.
 */
export function UploadPanel({
  uploads,
  items,
  suspended,
  adding = false,
  stopped = false,
  title = 'Uploads',
  busyHint = ALBUM_BUSY_HINT,
}: {
  uploads: UploadActions
  items: readonly UploadItem[]
  suspended: boolean
  adding?: boolean
  stopped?: boolean
  title?: string
  busyHint?: string | null
}) {
  const busy = !stopped && (adding || items.some((item) => item.state === 'waiting' || item.state === 'sending'))
  const summary = useSummary(items, busy)
  if (items.length === 0) return null
  const { total, done } = totalsOf(items)
  const finished = items.filter((item) => item.state === 'stored' || item.state === 'present').length
  const failed = items.filter((item) => item.state === 'failed').length
  const { listed, moreWaiting, moreDone } = listedOf(items)
  return (
    <section className="uploads" aria-labelledby="uploads-title">
      <h2 id="uploads-title">{title}</h2>
      <p className="upload-total">
        <label>
          {finished} of {countText(items.length, 'file')} done{failed > 0 ? `, ${failed} failed` : ''} ({sizeText(total)})
          <progress max={Math.max(1, total)} value={done} />
        </label>
      </p>
      <p className="upload-summary" aria-live="polite">
        {summary ?? ''}
        {adding ? `${summary === null ? '' : ' · '}finding more files…` : ''}
      </p>
      <ul aria-label="Files">
        {listed.map((item) => (
          <li key={item.id} data-state={item.state}>
            <label>
              <span className="upload-name">{item.name}</span>{' '}
              <span className="muted">
                {item.state === 'sending'
                  ? `${STAGE_TEXT[item.progress?.stage ?? 'plan']}: ${sizeText(doneOf(item))} of ${sizeText(item.size)}`
                  : STATE_TEXT[item.state]}
              </span>
              <progress max={Math.max(1, item.size)} value={doneOf(item)} />
            </label>
            {item.state === 'failed' && (
              <p className="error">
                {sentenceFor(item.error)}{' '}
                {uploads.remove !== undefined && (
                  <button type="button" className="link" onClick={() => void uploads.remove?.(item.id)}>
                    Remove {item.name} from the queue
                  </button>
                )}
              </p>
            )}
          </li>
        ))}
      </ul>
      {(moreWaiting > 0 || moreDone > 0) && (
        <p className="muted">
          {[moreWaiting > 0 ? `${countText(moreWaiting, 'more file')} waiting` : null, moreDone > 0 ? `${countText(moreDone, 'more file')} done` : null]
            .filter((part) => part !== null)
            .join(', ')}
        </p>
      )}
      {failed > 0 && (
        <button type="button" disabled={suspended} onClick={() => uploads.retry()}>
          Try the failed files again
        </button>
      )}
      {!busy && uploads.clearFinished !== undefined && (
        <button type="button" className="secondary" onClick={() => uploads.clearFinished?.()}>
          Clear the finished files
        </button>
      )}
      {busy && busyHint !== null && <p className="hint">{busyHint}</p>}
    </section>
  )
}
