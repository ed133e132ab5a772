// memory: a 1 GiB blob uploaded through the SDK (putBlob with an async iterable: streamed from
// a generator, never held in memory on either side) while the server child's resident memory
// (VmRSS in /proc/<pid>/status) is sampled every SAMPLE_MS; the growth over the resident memory
// before the upload must stay under 64 MiB. Then the blob is made live (a `create`) and ranges
// of it are downloaded: the server's `coffer_blob_bytes_read_total` must grow by exactly the
// range's length (only the range is read from the store). The same again with the server's blobs
// in an s3rver bucket (a child of its own): the upload is then staged by a multipart upload,
// hashed on the way, and copied to its content address.
import { album, BlobFactory, createAsset, openOriginalSession, uploader } from '../lib/albums.ts'
import { startCoffer, startS3rver, type BucketChild, type CofferChild } from '../lib/coffer.ts'
import { NOISY_CORES } from '../lib/measure.ts'
import { residentBytes, waitForQuiet } from '../lib/cpu.ts'
import { POSTGRES_SKIPPED, type BenchContext, type Check, type Scenario } from '../lib/scenario.ts'

const BLOB_MIB = Number(process.env.BENCH_MEMORY_MIB ?? 1024)
const TARGET_MIB = 64
const SAMPLE_MS = 50
const MIB = 1024 * 1024

/** Samples `pid`'s resident memory every SAMPLE_MS until stopped. */
function sampler(pid: number): { stop(): number[] } {
  const samples = [residentBytes(pid)]
  const timer = setInterval(() => samples.push(residentBytes(pid)), SAMPLE_MS)
  return {
    stop() {
      clearInterval(timer)
      samples.push(residentBytes(pid))
      return samples
    },
  }
}

async function bytesReadCounter(server: CofferChild): Promise<number> {
  const text = await (await fetch(`${server.ready.url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith('coffer_blob_bytes_read_total '))
  if (line === undefined) throw new Error('/metrics has no coffer_blob_bytes_read_total')
  return Number(line.split(' ')[1])
}

const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`

type MemoryUsage = ReturnType<typeof process.memoryUsage>
const FIELDS = ['heapTotal', 'heapUsed', 'external', 'arrayBuffers'] as const

/** The highest of each process.memoryUsage() field the server reports, asked every 200 ms over IPC. */
function breakdown(server: CofferChild): { stop(): Promise<Record<(typeof FIELDS)[number], number>> } {
  const highest = { heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }
  let running = true
  const loop = (async () => {
    while (running) {
      const usage = await server.request<MemoryUsage>({ kind: 'memory' })
      for (const field of FIELDS) highest[field] = Math.max(highest[field], usage[field])
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return highest
    },
  }
}

const describeUsage = (usage: Record<(typeof FIELDS)[number], number>) => FIELDS.map((field) => `${field} ${mib(usage[field])}`).join(', ')

async function measureOn(context: BenchContext, engine: 'sqlite' | 'postgres', factory: BlobFactory, bucket?: BucketChild): Promise<Check[]> {
  const label = bucket === undefined ? `coffer ${engine}` : `coffer ${engine}, s3rver bucket`
  const server = await startCoffer(context, { engine, logLevel: 'info', ...(bucket === undefined ? {} : { bucket }) })
  const member = await uploader(server)
  const albumId = await album(member)
  const blob = factory.next()
  const uploadId = await openOriginalSession(member, albumId, blob.hash, factory.bytes)

  // Before: the server after start-up and a few requests, idle, sampled for a second.
  const busy = await waitForQuiet(NOISY_CORES, context.schedule.quietTimeoutS)
  if (busy >= NOISY_CORES) context.log(`  (the machine is busy with other work: ${busy.toFixed(2)} cores; measuring anyway)`)
  const idle = sampler(server.pid)
  const idleHeap = breakdown(server)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const before = idle.stop()
  const heapBefore = await idleHeap.stop()
  const baseline = Math.max(...before)

  context.log(`  ${label}: uploading ${factory.mib} MiB, resident ${mib(baseline)} before`)
  const during = sampler(server.pid)
  const duringHeap = breakdown(server)
  const t0 = performance.now()
  await member.client.putBlob(uploadId, blob.hash, blob.stream())
  const seconds = (performance.now() - t0) / 1000
  const samples = during.stop()
  const heapDuring = await duringHeap.stop()
  const peak = Math.max(...samples)
  const growth = peak - baseline
  context.log(`  ${label}: ${seconds.toFixed(1)} s, ${samples.length} samples, peak resident ${mib(peak)} (+${mib(growth)})`)

  // Make the blob downloadable (a live asset references it), then read ranges of it.
  await createAsset(member, albumId, blob.hash)
  const ranges = [
    { start: Math.floor(factory.bytes / 2) + 12_345, length: MIB },
    { start: factory.bytes - 100, length: 100 },
  ]
  const checks: Check[] = [
    {
      scenario: 'memory',
      name: `${label}: resident growth during a ${factory.mib} MiB upload`,
      value: `+${mib(growth)} (${mib(baseline)} -> ${mib(peak)})`,
      target: `<= ${TARGET_MIB} MiB`,
      pass: growth <= TARGET_MIB * MIB,
    },
    {
      scenario: 'memory',
      name: `${label}: that upload's throughput`,
      value: `${(factory.mib / seconds).toFixed(0)} MiB/s (${seconds.toFixed(1)} s)`,
      target: '-',
      pass: null,
    },
  ]
  checks.push({
    scenario: 'memory',
    name: `${label}: process.memoryUsage() at its highest, before -> during`,
    value: FIELDS.map((f) => `${f} ${(heapBefore[f] / MIB).toFixed(0)} -> ${(heapDuring[f] / MIB).toFixed(0)} MiB`).join(', '),
    target: '-',
    pass: null,
  })
  context.log(`  ${label}: process.memoryUsage() highest before: ${describeUsage(heapBefore)}; during: ${describeUsage(heapDuring)}`)
  for (const { start, length } of ranges) {
    const end = start + length - 1
    const read0 = await bytesReadCounter(server)
    const bytes = await member.client.downloadBlob(blob.hash, { start, end })
    const read = (await bytesReadCounter(server)) - read0
    const right = Buffer.from(bytes).equals(factory.slice(blob.tail, start, end))
    checks.push({
      scenario: 'memory',
      name: `${label}: ranged download of ${length} bytes at ${start} (coffer_blob_bytes_read_total)`,
      value: `+${read} bytes read${right ? '' : ', WRONG BYTES'}`,
      target: `= ${length}`,
      pass: right && read === length,
    })
  }
  return checks
}

export const memory: Scenario = {
  name: 'memory',
  summary: `resident memory of the server during a ${BLOB_MIB} MiB streamed upload to its folder and to an s3rver bucket (target: +${TARGET_MIB} MiB at most), and ranged downloads reading only the range`,
  async run(context) {
    const factory = new BlobFactory(BLOB_MIB)
    const checks = await measureOn(context, 'sqlite', factory)
    const notes = [`VmRSS of the server child sampled every ${SAMPLE_MS} ms; growth = peak during the upload - highest in the idle second before it.`]
    if (context.postgresUrl !== null) checks.push(...(await measureOn(context, 'postgres', factory)))
    else notes.push(POSTGRES_SKIPPED)
    checks.push(...(await measureOn(context, 'sqlite', factory, await startS3rver(context))))
    notes.push(
      "The bucket is s3rver (a Koa server writing files) in a child process on this machine: the upload's time includes its multipart completion and the copy to the content address.",
    )
    return { rows: [], measured: [], notes, checks }
  },
}
