// `coffer-photos verify [<album>] [--deep]`: the server's storage verification of every asset
// and every custody receipt checked here (src/client/verify.ts); exit 1 when anything is not
// durable or not verified.
import { namedAlbums } from '../../client/albums.ts'
import { verifyAlbum, type AssetReport } from '../../client/verify.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { countOption, libraryOf, namedAlbum } from './library.ts'

export const verify: Command = {
  name: 'verify',
  summary: 'check that the server holds every file, and every custody receipt',
  usage: `usage: coffer-photos verify [<album>] [--deep] [--concurrency N] [--json]

  For every file of the album (of every album when none is named): asks the server whether
  each of its blobs is stored, indexed and retrievable, and checks each custody receipt here
  against the server's attestation keys (signature, chain links, and that it names a blob of
  the file with its hash and size). Exit status 1 when anything is not durable or not verified.

  --deep             also have the server re-hash the bytes, and download and decrypt every
                     blob here (reads everything: slow for a large album)
  --concurrency N    files checked at once (1-64, default 4)`,
  options: { deep: { type: 'boolean' }, concurrency: { type: 'string' } },
  async run({ positionals, values, out, signal }) {
    if (positionals.length > 1) throw new UsageError('verify takes at most one album name')
    const concurrency = countOption(values.concurrency, 'concurrency', 4)
    const library = libraryOf(await openAccount(commandClientOptions(out, signal)))
    const albums = positionals.length === 1 ? [await namedAlbum(library, positionals[0])] : await namedAlbums(library)
    const deep = values.deep === true
    out.event('start', { albums: albums.length, deep })
    let files = 0
    let bad = 0
    let blobs = 0
    let receiptsChecked = 0
    let deepPending = 0
    for (const album of albums) {
      const label = album.name ?? album.albumId
      const reports = await verifyAlbum(library, album.albumId, {
        deep,
        concurrency,
        onAsset: (report: AssetReport) => {
          out.event('asset', { album: album.name, asset_id: report.assetId, name: report.name, record: report.record, blobs: report.blobs, receipts: report.receipts, ok: report.problems.length === 0, problems: report.problems, deep_pending: report.deepPending })
          for (const problem of report.problems) out.say(`NOT VERIFIED  ${label}/${report.record ? '(album record)' : (report.name ?? `asset ${report.assetId}`)}: ${problem}`)
        },
      })
      const failing = reports.filter((r) => r.problems.length > 0).length
      const receipts = reports.reduce((sum, r) => sum + r.receipts, 0)
      const photos = reports.filter((r) => !r.record)
      const recordOk = reports.some((r) => r.record && r.problems.length === 0)
      const pending = reports.reduce((sum, r) => sum + r.deepPending, 0)
      files += reports.length
      bad += failing
      blobs += reports.reduce((sum, r) => sum + r.blobs, 0)
      receiptsChecked += receipts
      deepPending += pending
      out.say(
        `${label}: ${photos.filter((r) => r.problems.length === 0).length} of ${photos.length} file${photos.length === 1 ? '' : 's'} verified${recordOk ? ' (and the album\'s record)' : ''}` +
          `${deep ? ', deep' : ''}; ${receipts} receipts checked${failing > 0 ? `; ${failing} NOT verified` : ''}`,
      )
      if (pending > 0) out.say(`${label}: ${pending} blob${pending === 1 ? '' : 's'} not re-hashed by the server yet (its deep-check budget is spent); each was downloaded and checked here`)
    }
    out.event('summary', { albums: albums.length, assets: files, failed: bad, deep, blobs, receipts: receiptsChecked, deep_pending: deepPending })
    if (bad > 0) out.warn(`coffer-photos: ${bad} of ${files} files not verified (listed above)`)
    return bad > 0 ? EXIT.failed : EXIT.ok
  },
}
