// The uploads of the album page: each file's stage and progress as the library tells them
// (src/client UploadProgress: uploadFraction of the bytes read and sent, against those its way of
// sending needs), and the total, with a way forward for the files that failed.
import { uploadFraction, type UploadStage } from '@coffer/photos/files.ts'
import { sentenceFor } from '../../lib/errors.ts'
import { countText, sizeText } from '../../lib/format.ts'
import type { UploadItem, Uploads } from '../../lib/uploads.ts'

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

export function UploadPanel({ uploads, items }: { uploads: Uploads; items: readonly UploadItem[] }) {
  if (items.length === 0) return null
  const total = items.reduce((sum, item) => sum + item.size, 0)
  const done = items.reduce((sum, item) => sum + doneOf(item), 0)
  const finished = items.filter((item) => item.state === 'stored' || item.state === 'present').length
  const failed = items.filter((item) => item.state === 'failed').length
  const busy = items.some((item) => item.state === 'waiting' || item.state === 'sending')
  return (
    <section className="uploads" aria-labelledby="uploads-title">
      <h2 id="uploads-title">Uploads</h2>
      <p className="upload-total">
        <label>
          {finished} of {countText(items.length, 'file')} done{failed > 0 ? `, ${failed} failed` : ''} ({sizeText(total)})
          <progress max={Math.max(1, total)} value={done} />
        </label>
      </p>
      {/* It scrolls when long: focusable, so that a keyboard can scroll it. */}
      <ul tabIndex={0} aria-label="Files">
        {items.map((item) => (
          <li key={item.id} data-state={item.state}>
            <label>
              <span className="upload-name">{item.name}</span>{' '}
              <span className="muted">
                {item.state === 'sending' ? `${STAGE_TEXT[item.progress?.stage ?? 'plan']}: ${sizeText(doneOf(item))} of ${sizeText(item.size)}` : STATE_TEXT[item.state]}
              </span>
              <progress max={Math.max(1, item.size)} value={doneOf(item)} />
            </label>
            {item.state === 'failed' && (
              <p className="error">
                {sentenceFor(item.error)}{' '}
                <button type="button" className="link" onClick={() => void uploads.remove(item.id)}>
                  Remove {item.name} from the queue
                </button>
              </p>
            )}
          </li>
        ))}
      </ul>
      {failed > 0 && (
        <button type="button" onClick={() => uploads.retry()}>
          Try the failed files again
        </button>
      )}
      {!busy && (
        <button type="button" className="secondary" onClick={() => uploads.clearFinished()}>
          Clear the finished files
        </button>
      )}
      {busy && <p className="hint">You can leave or reload this page: the files left continue when the album is opened again in this browser.</p>}
    </section>
  )
}
