// upload: blob upload throughput. `PUT /v1/upload/{id}/blobs/{hash}` of 64 MiB blobs streamed
// through the SDK (putBlob with an async iterable of 64 KiB chunks, never held in memory), each
// declared in an upload session opened before the measurement; the server hashes while it
// streams to a temporary file, fsyncs, renames and fsyncs the directory. Ceiling: raw disk
// writes in a child process of the same bytes, in the same chunks, through an fs write stream,
// then fsync, into the same filesystem (beside the server's blob store), as many in flight.
import path from 'node:path'
import { album, BlobFactory, uploader, type Uploader } from '../lib/albums.ts'
import { startChild, type Child } from '../lib/child.ts'
import { cpuWindow } from '../lib/cpu.ts'
import { startCoffer, type CofferChild } from '../lib/coffer.ts'
import { inParallel, preparedContender } from '../lib/loop.ts'
import { alternate, type Contender } from '../lib/measure.ts'
import { row, type Row, type Scenario } from '../lib/scenario.ts'
import type { DiskRun, DiskRunResult } from '../servers/disk-raw.ts'

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
          const session = await member.client.openUploadSession({
            album_id: albumId,
            crypto_suite_id: 1,
            ciphertext_hash: blob.hash,
            blobs: [{ role: 'original', hash: blob.hash, size: factory.bytes }],
          })
          return { uploadId: session.upload_id, hash: blob.hash, stream: blob.stream }
        }))),
    // Through the SDK (fetch with a streamed body), as a client uploads.
    async run(item) {
      await member.client.putBlob(item.uploadId, item.hash, item.stream())
      return factory.mib
    },
  })
}

function diskLoad(raw: Child<unknown>, server: CofferChild): Contender {
  return {
    name: CEILING,
    async measure(seconds) {
      const cpu = cpuWindow(() => raw.cpuSeconds())
      const run: DiskRun = { seconds, concurrency: CONCURRENCY, bytesPerFile: BLOB_MIB * MIB, directory: path.join(path.dirname(server.ready.blobDir), 'raw-disk') }
      const result = await raw.request<DiskRunResult>(run)
      const { subjectCores, loadgenCores, otherCores } = cpu.end()
      return {
        rate: result.bytes / MIB / result.seconds,
        completed: result.bytes / MIB,
        seconds: result.seconds,
        p50Ms: result.p50Ms,
        p99Ms: result.p99Ms,
        subjectCores,
        loadgenCores,
        otherCores,
        problems: result.files === 0 ? ['no file written'] : [],
      }
    },
  }
}

export const upload: Scenario = {
  name: 'upload',
  summary: `PUT of ${BLOB_MIB} MiB blobs streamed through the SDK, ${CONCURRENCY} in flight; ceiling: ${CEILING} of the same bytes in the same filesystem`,
  async run(context) {
    const factory = new BlobFactory(BLOB_MIB)
    const contenders: Contender[] = []
    const rows: Array<[subject: string, target: Row['target']]> = []

    const sqlite = await startCoffer(context, { engine: 'sqlite', logLevel: 'info' })
    const raw = await startChild<unknown>('servers/disk-raw.ts')
    context.defer(() => raw.stop())
    contenders.push(diskLoad(raw, sqlite))
    const member = await uploader(sqlite)
    contenders.push(uploadLoad('upload, coffer sqlite', sqlite, member, await album(member), factory))
    rows.push(['upload, coffer sqlite', null])

    const notes = [
      `${BLOB_MIB} MiB blobs (BENCH_UPLOAD_MIB), ${CONCURRENCY} in flight, 64 KiB chunks on both sides; rates in MiB/s. The raw files go beside the server's blob store, in the run's temporary directory: one filesystem.`,
    ]
    if (context.postgresUrl !== null) {
      const postgres = await startCoffer(context, { engine: 'postgres', logLevel: 'info' })
      const onPostgres = await uploader(postgres)
      contenders.push(uploadLoad('upload, coffer postgres', postgres, onPostgres, await album(onPostgres), factory))
      rows.push(['upload, coffer postgres', null])
    } else {
      notes.push('PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL to measure it too.')
    }

    const measured = await alternate(contenders, context.schedule, context.log)
    return {
      rows: rows.map(([subject, target]) => row('upload', measured, subject, CEILING, target, 'MiB')),
      measured: [...measured.values()],
      notes,
    }
  },
}
