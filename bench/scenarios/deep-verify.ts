// deep-verify: deep storage verification throughput. `POST /v1/storage/verify` with
// `deep: true` over live assets whose originals total BENCH_DEEP_VERIFY_MIB (256 MiB by
// default, in 8 blobs): the server checks custody and ownership in the database, reserves
// each blob's bytes against the account's deep-scan budget (a write per blob), then re-reads
// and re-hashes every blob from the blob store. The budget is raised for the bench
// (DEEP_SCAN_BUDGET_BYTES) so that it never answers rate_limited. CONCURRENCY requests in
// flight, each over half the assets; every verdict must be durable and every blob intact.
// Ceiling: a child streaming the very same files through SHA-256 (bench/servers/hash-raw.ts),
// grouped the same way, as many in flight.
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { accessToken, album, BlobFactory, createAsset, openOriginalSession, uploader, type Uploader } from '../lib/albums.ts'
import { startChild } from '../lib/child.ts'
import { startCoffer, type CofferChild } from '../lib/coffer.ts'
import { closedLoop, expectStatus, HttpClient } from '../lib/loop.ts'
import { childLoop, type Contender } from '../lib/measure.ts'
import { measureAgainst, POSTGRES_SKIPPED, type Scenario, type Target } from '../lib/scenario.ts'
import type { HashRun } from '../servers/hash-raw.ts'

const TOTAL_MIB = Number(process.env.BENCH_DEEP_VERIFY_MIB ?? 256)
const BLOBS = 8
/** Verify requests (and raw hashing loops) in flight, each over BLOBS / CONCURRENCY assets. */
const CONCURRENCY = 2
const CEILING = 'raw read + SHA-256 of the same files'
const MIB = 1024 * 1024
/** Issue 16's target, on both engines. */
const TARGET: Target = { min: 0.8 }
/** A budget no run reaches (1 PiB per window): the budget is not what is measured. */
const SERVER_ENV = { DEEP_SCAN_BUDGET_BYTES: String(2 ** 50) }

interface Asset {
  readonly assetId: string
  readonly hash: string
}

/** BLOBS live assets, each a blob of TOTAL_MIB / BLOBS MiB uploaded through the SDK and made live by a create. */
async function assetsOn(member: Uploader, factory: BlobFactory): Promise<Asset[]> {
  const albumId = await album(member)
  const assets: Asset[] = []
  for (let i = 0; i < BLOBS; i++) {
    const blob = factory.next()
    await member.client.putBlob(await openOriginalSession(member, albumId, blob.hash, factory.bytes), blob.hash, blob.stream())
    assets.push({ assetId: await createAsset(member, albumId, blob.hash), hash: blob.hash })
  }
  return assets
}

/** The items in CONCURRENCY groups, one per worker (every CONCURRENCY-th item). */
function groupsOf<T>(items: readonly T[]): T[][] {
  return Array.from({ length: CONCURRENCY }, (_, g) => items.filter((_, i) => i % CONCURRENCY === g))
}

function verifyLoad(name: string, server: CofferChild, member: Uploader, assets: readonly Asset[], blobMib: number): Contender {
  const requests = groupsOf(assets).map((group) => ({
    body: JSON.stringify({ assets: group.map((a) => ({ asset_id: a.assetId, blob_hashes: [a.hash] })), deep: true }),
    mib: group.length * blobMib,
    blobs: group.length,
  }))
  return {
    name,
    async measure(seconds) {
      const http = new HttpClient(server.ready.url)
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${accessToken(member.client)}` }
      try {
        return await closedLoop({ concurrency: CONCURRENCY, seconds, subjectCpu: () => server.cpuSeconds() }, async (worker) => {
          const request = requests[worker]
          if (request === undefined) throw new Error(`no request for worker ${worker}`)
          const answer = await http.call('POST', '/v1/storage/verify', headers, request.body)
          expectStatus(answer, 200, 'deep verify')
          const { verdicts } = JSON.parse(answer.body.toString('utf8')) as { verdicts: Array<{ durable: boolean; blobs: Array<{ deep?: string }> }> }
          const intact = verdicts.flatMap((v) => v.blobs).filter((b) => b.deep === 'intact').length
          if (verdicts.some((v) => !v.durable) || intact !== request.blobs) throw new Error(`deep verify: ${answer.body.toString('utf8').slice(0, 200)}`)
          return request.mib
        })
      } finally {
        http.close()
      }
    },
  }
}

/** Where the server keeps a blob (bench/servers/coffer.ts blobDir, layout <2 hex>/<2 hex>/<hash>), checked. */
async function blobFile(server: CofferChild, hash: string, bytes: number): Promise<string> {
  const file = path.join(server.ready.blobDir, hash.slice(0, 2), hash.slice(2, 4), hash)
  const size = (await stat(file)).size
  if (size !== bytes) throw new Error(`${file}: ${size} bytes, expected ${bytes}`)
  return file
}

export const deepVerify: Scenario = {
  name: 'deep-verify',
  summary: `POST /v1/storage/verify with deep: true over ${BLOBS} assets of ${TOTAL_MIB / BLOBS} MiB, ${CONCURRENCY} in flight; ceiling: ${CEILING} in a child`,
  async run(context) {
    const blobMib = Math.max(1, Math.round(TOTAL_MIB / BLOBS))
    const factory = new BlobFactory(blobMib)
    const subjects: Array<[subject: string, target: Target | null]> = []

    const sqlite = await startCoffer(context, { engine: 'sqlite', logLevel: 'info', env: SERVER_ENV })
    const member = await uploader(sqlite)
    const assets = await assetsOn(member, factory)
    const files = await Promise.all(assets.map((a) => blobFile(sqlite, a.hash, factory.bytes)))
    const raw = await startChild<unknown>('servers/hash-raw.ts')
    context.defer(() => raw.stop())
    const groups = groupsOf(files)
    const contenders = [
      childLoop(CEILING, raw, (seconds): HashRun => ({ seconds, concurrency: CONCURRENCY, groups }), MIB),
      verifyLoad('deep-verify, coffer sqlite', sqlite, member, assets, blobMib),
    ]
    subjects.push(['deep-verify, coffer sqlite', TARGET])

    const notes = [
      `${BLOBS} live assets of ${blobMib} MiB (${BLOBS * blobMib} MiB, BENCH_DEEP_VERIFY_MIB), uploaded just before: on both sides the bytes come from the page cache, not the disk (the machine has far more memory than that), so this compares the read and hash paths, not disk reads. ${CONCURRENCY} in flight, each request (and raw loop) over ${BLOBS / CONCURRENCY} of them; rates in MiB/s. DEEP_SCAN_BUDGET_BYTES=2^50 so that the budget never limits.`,
    ]
    if (context.postgresUrl !== null) {
      const postgres = await startCoffer(context, { engine: 'postgres', logLevel: 'info', env: SERVER_ENV })
      const onPostgres = await uploader(postgres)
      contenders.push(verifyLoad('deep-verify, coffer postgres', postgres, onPostgres, await assetsOn(onPostgres, factory), blobMib))
      subjects.push(['deep-verify, coffer postgres', TARGET])
    } else {
      notes.push(POSTGRES_SKIPPED)
    }
    return measureAgainst(context, 'deep-verify', contenders, subjects, CEILING, 'MiB', notes)
  },
}
