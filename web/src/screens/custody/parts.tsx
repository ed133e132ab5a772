// What the album and photo custody screens share: the album's decrypted name, the verdict in
// words, the list of what failed, and the buttons that run the check again.
import { albumNameOf, type Library } from '#photos/albums.ts'
import type { AssetReport } from '#photos/verify.ts'
import { ErrorLine, useLoaded } from '../../app/ui.tsx'
import { countText } from '../../lib/format.ts'
import type { Verification } from './verification.ts'

/** The album's name, decrypted from its record; its id while that loads or when it has none. */
export function useAlbumName(library: Library, albumId: string): string {
  const name = useLoaded(() => albumNameOf(library, albumId), [library, albumId])
  return name.value ?? `album ${albumId.slice(0, 8)}`
}

/** The verdict's words, never colour alone. */
export function Verdict({ ok, pending }: { ok: boolean; pending?: boolean }) {
  if (pending === true) return <span className="state">Checking…</span>
  return ok ? <span className="state good">✓ Verified</span> : <span className="state bad">✗ Not verified</span>
}

export function ProblemList({ report }: { report: AssetReport }) {
  if (report.problems.length === 0 && report.deepPending === 0) return <p>Nothing failed.</p>
  return (
    <ul className="problems">
      {/* Each problem names what it is about: no two are the same sentence. */}
      {report.problems.map((problem) => (
        <li key={problem}>{problem}</li>
      ))}
      {report.deepPending > 0 && (
        <li>
          {countText(report.deepPending, 'part')} {report.deepPending === 1 ? 'was' : 'were'} not re-read by the server: its deep-check allowance for this hour
          is spent. Try the deep check again later.
        </li>
      )}
    </ul>
  )
}

/** The check's error, if it failed, and the buttons that run it again, plain or deep. */
export function CheckAgain({ check, deepLabel }: { check: Verification & { start: (deep: boolean) => void }; deepLabel: string }) {
  return (
    <>
      <ErrorLine error={check.error} />
      <button type="button" disabled={check.running} onClick={() => check.start(false)}>
        Check again
      </button>
      <button type="button" className="secondary" disabled={check.running} onClick={() => check.start(true)}>
        {deepLabel}
      </button>
    </>
  )
}
