// #/custody/<album> and #/custody/<album>/<photo>: is the server really keeping these photos?
// Two checks, both run in this browser (src/client/verify.ts): the server's storage verification
// (every part of every photo stored, indexed and retrievable; on request, "deep": re-read and
// re-hashed by the server), and every custody receipt checked here against the server's
// attestation keys (signature, chain, and that it names the photo's parts by hash and size).
// Names come from the encrypted metadata, decrypted here.
import { useEffect, useState } from 'react'
import type { Library } from '#photos/albums.ts'
import { linkTo } from '../../app/router.ts'
import { useSignedIn } from '../../app/session.tsx'
import { ErrorLine, Heading, useAction } from '../../app/ui.tsx'
import { albumAccess } from '../../lib/sharing.ts'
import { countText, whenText } from '../../lib/format.ts'
import { CheckAgain, ProblemList, useAlbumName, Verdict } from './parts.tsx'
import { PhotoCustody } from './PhotoCustody.tsx'
import { useVerification, verified } from './verification.ts'

/** Photos listed per page of an album's results. */
const PAGE = 50

export function Custody({ albumId, assetId }: { albumId: string; assetId: string | null }) {
  const { client, keys } = useSignedIn()
  // The album as this account reads it: its own, or one shared with it (the keys it received).
  const [library, setLibrary] = useState<Library | null>(null)
  const load = useAction()
  const loadRun = load.run
  useEffect(() => {
    if (keys !== null) void loadRun(async () => setLibrary((await albumAccess(client, keys, albumId)).library))
  }, [client, keys, albumId, loadRun])
  if (keys === null) {
    return (
      <main>
        <Heading>Custody</Heading>
        <p>This browser is not a device of your account yet, so it cannot read your photos or check them. Add it as a device first.</p>
      </main>
    )
  }
  if (load.error !== null)
    return (
      <main>
        <Heading>Custody</Heading>
        <ErrorLine error={load.error} />
      </main>
    )
  if (library === null)
    return (
      <p className="loading" role="status">
        Opening the album…
      </p>
    )
  return assetId === null ? <AlbumCustody library={library} albumId={albumId} /> : <PhotoCustody library={library} albumId={albumId} assetId={assetId} />
}

function AlbumCustody({ library, albumId }: { library: Library; albumId: string }) {
  const name = useAlbumName(library, albumId)
  const check = useVerification(library, albumId, null)
  const [page, setPage] = useState(0)
  const photos = check.reports.filter((report) => !report.record)
  const failing = photos.filter((report) => !verified(report))
  const record = check.reports.find((report) => report.record)
  const pending = check.reports.reduce((sum, report) => sum + report.deepPending, 0)
  const pages = Math.max(1, Math.ceil(photos.length / PAGE))
  const shown = photos.slice(page * PAGE, page * PAGE + PAGE)

  return (
    <main className="sections">
      <Heading>Custody of {name}</Heading>
      <p>
        Checked in this browser: that the server stores every part of every photo, and that each custody receipt the server signed verifies against its
        published attestation keys. A deep check also has the server re-read every part and compare it with its hash.
      </p>
      <section aria-labelledby="summary-title" className="panel">
        <h2 id="summary-title">Album</h2>
        <div role="status">
          {check.running ? (
            <p>
              <Verdict ok pending /> {check.deep ? 'Deep check' : 'Check'} running: {countText(photos.length, 'photo')} checked so far
              {failing.length > 0 && `, ${failing.length} not verified`}.
            </p>
          ) : check.error !== null ? null : photos.length === 0 ? (
            <p>This album has no photos yet.</p>
          ) : (
            <p>
              <Verdict ok={failing.length === 0 && record !== undefined && verified(record)} />{' '}
              {failing.length === 0 ? `All ${photos.length} photos` : `${failing.length} of ${photos.length} photos not verified`}
              {record !== undefined && !verified(record) && '; the album\u2019s own record is not verified'}
              {check.deep ? ', deep check' : ''}
              {check.finishedAt !== null && ` (checked ${whenText(check.finishedAt)})`}.
              {pending > 0 && ` ${pending} parts were not re-read by the server: its deep-check allowance for this hour is spent.`}
            </p>
          )}
        </div>
        <CheckAgain check={check} deepLabel="Deep check (the server re-reads every photo)" />
      </section>
      {!check.running && photos.length > 0 && (
        <section aria-labelledby="photos-title">
          <h2 id="photos-title">Photos</h2>
          <ul className="cards">
            {shown.map((report) => (
              <li key={report.assetId}>
                <p className="title">
                  <a href={linkTo('custody', albumId, report.assetId)}>{report.name ?? `A photo whose name cannot be read (${report.assetId.slice(0, 8)})`}</a>{' '}
                  <Verdict ok={verified(report)} />
                </p>
                <details>
                  <summary>Details</summary>
                  <p className="muted">
                    Photo {report.assetId} · {report.blobs} parts · {report.receipts} receipts checked
                  </p>
                  <ProblemList report={report} />
                </details>
              </li>
            ))}
          </ul>
          {pages > 1 && (
            <nav aria-label="Pages of photos" className="pager">
              <button type="button" className="secondary" disabled={page === 0} onClick={() => setPage(page - 1)}>
                Previous
              </button>
              <span>
                Page {page + 1} of {pages}
              </span>
              <button type="button" className="secondary" disabled={page + 1 >= pages} onClick={() => setPage(page + 1)}>
                Next
              </button>
            </nav>
          )}
        </section>
      )}
      <p>
        <a href={linkTo('albums', albumId)}>Back to the album</a>
      </p>
    </main>
  )
}
