// #/custody/<album>/<photo>: one photo's verdict, and its custody receipts with the keys that
// signed them, for whoever wants to see what was checked.
import type { Library } from '#photos/albums.ts'
import { linkTo } from '../../app/router.ts'
import { Heading, LoadStatus, useLoaded } from '../../app/ui.tsx'
import { countText, whenText } from '../../lib/format.ts'
import { CheckAgain, ProblemList, useAlbumName, Verdict } from './parts.tsx'
import { useVerification, verified } from './verification.ts'

const PART: Readonly<Record<string, string>> = {
  original: 'the photo',
  derivative: 'a thumbnail or preview',
  metadata: 'its name and details (encrypted)',
  provenance: 'its signed manifest',
}

function Receipts({ library, assetId }: { library: Library; assetId: string }) {
  const loaded = useLoaded(() => Promise.all([library.client.assetReceipts(assetId), library.client.attestationKeys()]), [library, assetId])
  if (loaded.value === undefined) return <LoadStatus loaded={loaded} what="the receipts" />
  const [{ receipts }, keys] = loaded.value
  const keyStatus = new Map(keys.keys.map((key) => [key.key_id, key.status]))
  return (
    <>
      <p className="muted">Signed by the server {keys.server_id}. Times are when it received each part.</p>
      <ul className="cards receipts">
        {receipts.map((receipt) => (
          <li key={receipt.receipt_seq}>
            <p className="title">
              Receipt {receipt.receipt_seq}: {PART[receipt.blob_role] ?? receipt.blob_role}
            </p>
            <dl>
              <dt>Received</dt>
              <dd>{whenText(receipt.received_at)}</dd>
              <dt>Hash (SHA-256)</dt>
              <dd>
                <code>{receipt.ciphertext_hash}</code>
              </dd>
              <dt>Size</dt>
              <dd>{countText(receipt.size, 'byte')}</dd>
              <dt>Signing key</dt>
              <dd>
                <code>{receipt.server_key_id}</code> ({keyStatus.get(receipt.server_key_id) ?? 'not among the published keys'})
              </dd>
              <dt>Upload</dt>
              <dd>
                <code>{receipt.upload_id}</code>
              </dd>
            </dl>
          </li>
        ))}
      </ul>
    </>
  )
}

export function PhotoCustody({ library, albumId, assetId }: { library: Library; albumId: string; assetId: string }) {
  const album = useAlbumName(library, albumId)
  const check = useVerification(library, albumId, assetId)
  const report = check.reports[0]
  const missing = !check.running && check.error === null && report === undefined
  return (
    <main className="sections">
      <Heading>Custody of {report?.name ?? 'a photo'}</Heading>
      <p>
        In {album}. Checked in this browser: the server stores every part of this photo, and each custody receipt verifies against the server's attestation
        keys. A deep check has the server re-read every part, and downloads and decrypts the photo here.
      </p>
      <section aria-labelledby="verdict-title" className="panel">
        <h2 id="verdict-title">Verdict</h2>
        <div role="status">
          {check.running ? (
            <p>
              <Verdict ok pending /> {check.deep ? 'Deep check running.' : 'Checking.'}
            </p>
          ) : missing ? (
            <p>This photo is not in the album (it was deleted, or the link is wrong).</p>
          ) : report !== undefined ? (
            <p>
              <Verdict ok={verified(report)} /> {check.deep ? 'Deep check' : 'Check'}
              {check.finishedAt !== null && `, ${whenText(check.finishedAt)}`}: {report.blobs} parts, {report.receipts} receipts.
            </p>
          ) : null}
        </div>
        <CheckAgain check={check} deepLabel="Deep check" />
      </section>
      {report !== undefined && !check.running && (
        <details>
          <summary>Details: what was checked, and what failed</summary>
          <p className="muted">Photo {report.assetId}</p>
          <h3>What failed</h3>
          <ProblemList report={report} />
          {report.intact.length > 0 && <p>The server re-read {report.intact.length} parts and found each one intact.</p>}
          <h3>Custody receipts</h3>
          <Receipts library={library} assetId={assetId} />
        </details>
      )}
      <p>
        <a href={linkTo('custody', albumId)}>The whole album's custody</a> · <a href={linkTo('albums', albumId)}>Back to the album</a>
      </p>
    </main>
  )
}
