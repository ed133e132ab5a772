// The uploads of the album page: each file's progress (bytes read by backupFile's two passes:
// one to hash, one to send) and the total, with a way forward for the files that failed.
import { sentenceFor } from '../../lib/errors.ts'
import { countText, sizeText } from '../../lib/format.ts'
import type { UploadItem, Uploads } from '../../lib/uploads.ts'

const STATE_TEXT: Record<UploadItem['state'], string> = {
  waiting: 'Waiting',
  sending: 'Encrypting and sending',
  stored: 'Stored',
  present: 'Already in the album',
  failed: 'Failed',
}

export function UploadPanel({ uploads, items }: { uploads: Uploads; items: readonly UploadItem[] }) {
  if (items.length === 0) return null
  const total = items.reduce((sum, item) => sum + 2 * item.size, 0)
  const read = items.reduce((sum, item) => sum + Math.min(item.read, 2 * item.size), 0)
  const finished = items.filter((item) => item.state === 'stored' || item.state === 'present').length
  const failed = items.filter((item) => item.state === 'failed').length
  const busy = items.some((item) => item.state === 'waiting' || item.state === 'sending')
  return (
    <section className="uploads" aria-labelledby="uploads-title">
      <h2 id="uploads-title">Uploads</h2>
      <p className="upload-total">
        <label>
          {finished} of {countText(items.length, 'file')} done{failed > 0 ? `, ${failed} failed` : ''} ({sizeText(total / 2)})
          <progress max={Math.max(1, total)} value={read} />
        </label>
      </p>
      {/* It scrolls when long: focusable, so that a keyboard can scroll it. */}
      <ul tabIndex={0} aria-label="Files">
        {items.map((item) => (
          <li key={item.id} data-state={item.state}>
            <label>
              <span className="upload-name">{item.name}</span> <span className="muted">{STATE_TEXT[item.state]}</span>
              <progress max={Math.max(1, 2 * item.size)} value={Math.min(item.read, 2 * item.size)} />
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
