// upload: blob upload throughput. `PUT /v1/upload/{id}/blobs/{hash}` of 64 MiB blobs streamed
// through the SDK (putBlob with an async iterable of 64 KiB chunks, never held in memory), each
// declared in an upload session opened before the measurement; the server hashes while it
// streams to a temporary file, fsyncs, renames and fsyncs the directory. Ceiling: raw disk
// writes in a child process of the same bytes, in the same chunks, through an fs write stream,
// then fsync, into the same filesystem (beside the server's blob store), as many in flight.
// The bucket row: the same uploads to a server whose blobs go to an s3rver bucket (staged by a
// multipart upload, hashed on the way, copied to the content address); its ceiling is the same
// bytes uploaded straight to the same bucket by one process with the store's multipart settings.
import path from 'node:path'
import { album, BlobFactory, openOriginalSession, uploader, type Uploader } from '../lib/albums.ts'
import { startChild } from '../lib/child.ts'
import { startCoffer, startS3rver, type CofferChild } from '../lib/coffer.ts'
import { inParallel, preparedContender } from '../lib/loop.ts'
import { alternate, childLoop, type Contender } from '../lib/measure.ts'
import { POSTGRES_SKIPPED, row, type Scenario, type Target } from '../lib/scenario.ts'
import type { DiskRun } from '../servers/disk-raw.ts'
import type { BucketRun } from '../servers/s3-raw.ts'

const BLOB_MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 64)
/** Uploads (and raw file writes) in flight. */
const CONCURRENCY = 2
const CEILING = 'raw disk write + fsync'
const BUCKET_CEILING = 'raw multipart upload to the s3rver bucket'
const BUCKET_SUBJECT = 'upload, coffer sqlite, s3rver bucket'
const MIB = 1024 * 1024
/** Issue 16's target for the folder rows, on both engines; the bucket row has none yet. */
const FOLDER_TARGET: Target = { min: 0.7 }

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
      Promise.all(
        Array.from({ length: CONCURRENCY }, () =>
          inParallel(
            Array.from({ length: perWorker }, (_, i) => i),
            2,
            async () => {
              const blob = factory.next()
              return { uploadId: await openOriginalSession(member, albumId, blob.hash, factory.bytes), hash: blob.hash, stream: blob.stream }
            },
          ),
        ),
      ),
    // Through the SDK (fetch with a streamed body), as a client uploads.
    async run(item) {
      await member.client.putBlob(item.uploadId, item.hash, item.stream())
      return factory.mib
    },
  })
}

export const upload: Scenario = {
  name: 'upload',
  summary: `PUT of ${BLOB_MIB} MiB blobs streamed through the SDK, ${CONCURRENCY} in flight; ceiling: ${CEILING} of the same bytes in the same filesystem (to a bucket: ${BUCKET_CEILING})`,
  async run(context) {
    const factory = new BlobFactory(BLOB_MIB)
    const subjects: Array<[subject: string, ceiling: string, target: Target | null]> = []

    const sqlite = await startCoffer(context, { engine: 'sqlite', logLevel: 'info' })
    const raw = await startChild<unknown>('servers/disk-raw.ts')
    context.defer(() => raw.stop())
    const directory = path.join(path.dirname(sqlite.ready.blobDir), 'raw-disk')
    const contenders = [childLoop(CEILING, raw, (seconds): DiskRun => ({ seconds, concurrency: CONCURRENCY, bytesPerFile: BLOB_MIB * MIB, directory }), MIB)]
    const member = await uploader(sqlite)
    contenders.push(uploadLoad('upload, coffer sqlite', sqlite, member, await album(member), factory))
    subjects.push(['upload, coffer sqlite', CEILING, FOLDER_TARGET])

    const notes = [
      `${BLOB_MIB} MiB blobs (BENCH_UPLOAD_MIB), ${CONCURRENCY} in flight, 64 KiB chunks on both sides; rates in MiB/s. The raw files go beside the server's blob store, in the run's temporary directory: one filesystem.`,
    ]
    if (context.postgresUrl !== null) {
      const postgres = await startCoffer(context, { engine: 'postgres', logLevel: 'info' })
      const onPostgres = await uploader(postgres)
      contenders.push(uploadLoad('upload, coffer postgres', postgres, onPostgres, await album(onPostgres), factory))
      subjects.push(['upload, coffer postgres', CEILING, FOLDER_TARGET])
    } else {
      notes.push(POSTGRES_SKIPPED)
    }

    const bucket = await startS3rver(context)
    const rawUploads = await startChild<unknown>('servers/s3-raw.ts', { env: bucket.ready.env })
    context.defer(() => rawUploads.stop())
    // s3rver works for the raw uploads as for the server: its CPU counts as theirs, not as noise.
    const rawWithBucket = { ...rawUploads, cpuSeconds: () => rawUploads.cpuSeconds() + bucket.cpuSeconds() }
    contenders.push(
      childLoop(
        BUCKET_CEILING,
        rawWithBucket,
        (seconds): BucketRun => ({ seconds, concurrency: CONCURRENCY, bytesPerObject: BLOB_MIB * MIB, settings: bucket.ready.settings }),
        MIB,
      ),
    )
    const inBucket = await startCoffer(context, { engine: 'sqlite', logLevel: 'info', bucket })
    const bucketMember = await uploader(inBucket)
    contenders.push(uploadLoad(BUCKET_SUBJECT, inBucket, bucketMember, await album(bucketMember), factory))
    subjects.push([BUCKET_SUBJECT, BUCKET_CEILING, null])
    notes.push(
      `The bucket is s3rver (a Koa server writing files into a temporary folder, the same filesystem) in a child process on this machine; its CPU counts as the subject's in both bucket contenders. The raw uploads use lib-storage's Upload with the store's part size and parts in flight, ${CONCURRENCY} objects in flight.`,
    )

    const measured = await alternate(contenders, context.schedule, context.log)
    return {
      rows: subjects.map(([subject, ceiling, target]) => row('upload', measured, subject, ceiling, target, 'MiB')),
      measured: [...measured.values()],
      notes,
    }
  },
}
