// upload: blob upload throughput. `PUT /v1/upload/{id}/blobs/{hash}` of 64 MiB blobs streamed
// through the SDK (putBlob with an async iterable of 64 KiB chunks, never held in memory), each
// declared in an upload session opened before the measurement; the server hashes while it
// streams to a temporary file, fsyncs, renames and fsyncs the directory. Ceiling: raw disk
// writes in a child process of the same bytes, in the same chunks, through an fs write stream,
// then fsync, into the same filesystem (beside the server's blob store), as many in flight.
import path from 'node:path'
import { album, BlobFactory, openOriginalSession, uploader, type Uploader } from '../lib/albums.ts'
import { startChild } from '../lib/child.ts'
import { startCoffer, type CofferChild } from '../lib/coffer.ts'
import { inParallel, preparedContender } from '../lib/loop.ts'
import { childLoop, type Contender } from '../lib/measure.ts'
import { measureAgainst, POSTGRES_SKIPPED, type Scenario, type Target } from '../lib/scenario.ts'
import type { DiskRun } from '../servers/disk-raw.ts'

const BLOB_MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 64)
/** Uploads (and raw file writes) in flight. */
const CONCURRENCY = 2
const CEILING = 'raw disk write + fsync'
const MIB = 1024 * 1024

interface Upload {
  readonly uploadId: string
  readonly hash: string
  readonly stream: () => AsyncGenerator<Buffer>
}

function uploadLoad(name: string, server: CofferChild, member: Uploader, albumId: string, factory: BlobFactory): Contender {
  return preparedContender<Upload>({
    name,
    url: server.ready.url,
    concurrency: CONCURRENCY,
    subjectCpu: () => server.cpuSeconds(),
    initialRate: 200,
    // 48 blobs of 64 MiB: 3 GiB, more than a 5-second round at 500 MiB/s.
    maxBatch: Math.max(CONCURRENCY * 2, Math.ceil((3 * 1024) / factory.mib)),
    unitsPerItem: factory.mib,
    prepare: (perWorker) =>
      Promise.all(Array.from({ length: CONCURRENCY }, () =>
        inParallel(Array.from({ length: perWorker }, (_, i) => i), 2, async () => {
          const blob = factory.next()
          return { uploadId: await openOriginalSession(member, albumId, blob.hash, factory.bytes), hash: blob.hash, stream: blob.stream }
        }))),
    // Through the SDK (fetch with a streamed body), as a client uploads.
    async run(item) {
      await member.client.putBlob(item.uploadId, item.hash, item.stream())
      return factory.mib
    },
  })
}

export const upload: Scenario = {
  name: 'upload',
  summary: `PUT of ${BLOB_MIB} MiB blobs streamed through the SDK, ${CONCURRENCY} in flight; ceiling: ${CEILING} of the same bytes in the same filesystem`,
  async run(context) {
    const factory = new BlobFactory(BLOB_MIB)
    const subjects: Array<[subject: string, target: Target | null]> = []

    const sqlite = await startCoffer(context, { engine: 'sqlite', logLevel: 'info' })
    const raw = await startChild<unknown>('servers/disk-raw.ts')
    context.defer(() => raw.stop())
    const directory = path.join(path.dirname(sqlite.ready.blobDir), 'raw-disk')
    const contenders = [childLoop(CEILING, raw, (seconds): DiskRun => ({ seconds, concurrency: CONCURRENCY, bytesPerFile: BLOB_MIB * MIB, directory }), MIB)]
    const member = await uploader(sqlite)
    contenders.push(uploadLoad('upload, coffer sqlite', sqlite, member, await album(member), factory))
    subjects.push(['upload, coffer sqlite', null])

    const notes = [
      `${BLOB_MIB} MiB blobs (BENCH_UPLOAD_MIB), ${CONCURRENCY} in flight, 64 KiB chunks on both sides; rates in MiB/s. The raw files go beside the server's blob store, in the run's temporary directory: one filesystem.`,
    ]
    if (context.postgresUrl !== null) {
      const postgres = await startCoffer(context, { engine: 'postgres', logLevel: 'info' })
      const onPostgres = await uploader(postgres)
      contenders.push(uploadLoad('upload, coffer postgres', postgres, onPostgres, await album(onPostgres), factory))
      subjects.push(['upload, coffer postgres', null])
    } else {
      notes.push(POSTGRES_SKIPPED)
    }
    return measureAgainst(context, 'upload', contenders, subjects, CEILING, 'MiB', notes)
  },
}
