// thumbnails: a screen of thumbnails fetched in batches against one request each (issue 18,
// docs/decisions/0029-blob-batches.md). BENCH_THUMBNAILS (100) live blobs of BENCH_THUMBNAIL_KIB
// (20 KiB, the size of a gallery thumbnail) of one account, on SQLite. One operation fetches all
// of them, checked (every blob served, every byte count right), the way a browser would, with
// up to BROWSER_PARALLEL requests in flight on keep-alive connections:
// - the ceiling, what the web app did before batches: one `GET /v1/blobs/{hash}` per thumbnail;
// - one `POST /v1/blobs/batch` of all of them (what the grid does for a screen);
// - batches of BENCH_THUMBNAIL_BATCH (10).
// Rates are thumbnails per second; p50 is the time to fetch all of them. Target: a batch is
// never slower than the single requests.
import { randomBytes } from 'node:crypto'
import { decodeStrict } from '../../src/codec/cbor.ts'
import { sha256Hex } from '../../src/sdk/client.ts'
import { accessToken, album, signedManifest, uploader, type Uploader } from '../lib/albums.ts'
import { startCoffer, type CofferChild } from '../lib/coffer.ts'
import { closedLoop, expectStatus, HttpClient, inParallel, type HttpAnswer } from '../lib/loop.ts'
import { alternate, type Contender } from '../lib/measure.ts'
import { row, type Scenario, type Target } from '../lib/scenario.ts'

const THUMBNAILS = Number(process.env.BENCH_THUMBNAILS ?? 100)
const THUMBNAIL_BYTES = Number(process.env.BENCH_THUMBNAIL_KIB ?? 20) * 1024
const SMALL_BATCH = Number(process.env.BENCH_THUMBNAIL_BATCH ?? 10)
/** Requests a browser keeps in flight to one origin over HTTP/1.1. */
const BROWSER_PARALLEL = 6
/** Blobs per upload bundle (an original and its derivatives): the preparation's pace, not measured. */
const BUNDLE_BLOBS = 10
const CEILING = `${THUMBNAILS} single GETs`
const ONE_BATCH = `one batch of ${THUMBNAILS}`
const SMALL_BATCHES = `batches of ${SMALL_BATCH}`
/** Issue 18: fetching in batches must not be slower than one request per thumbnail. */
const TARGET: Target = { min: 1 }

/** THUMBNAILS live blobs of THUMBNAIL_BYTES random bytes; their hashes. */
async function thumbnailsOf(member: Uploader): Promise<string[]> {
  const albumId = await album(member)
  const hashes: string[] = []
  for (let start = 0; start < THUMBNAILS; start += BUNDLE_BLOBS) {
    const [original, ...derivatives] = Array.from({ length: Math.min(BUNDLE_BLOBS, THUMBNAILS - start) }, () => randomBytes(THUMBNAIL_BYTES))
    await member.client.uploadAsset({ albumId, cryptoSuiteId: 1, original: original!, derivatives, sign: (bundle) => signedManifest(member, albumId, bundle) })
    hashes.push(...[original!, ...derivatives].map((bytes) => sha256Hex(bytes)))
  }
  return hashes
}

/** Every item of a batch answer served with THUMBNAIL_BYTES bytes, in the order asked. */
function checkBatch(answer: HttpAnswer, hashes: readonly string[]): void {
  expectStatus(answer, 200, 'batch')
  // Decoded as the SDK decodes it (downloadBlobs).
  const items = decodeStrict(answer.body) as Array<{ hash: string; status: number; bytes?: Uint8Array }>
  if (items.length !== hashes.length || items.some((item, i) => item.hash !== hashes[i] || item.status !== 200 || item.bytes?.length !== THUMBNAIL_BYTES)) {
    throw new Error(
      `batch: not every thumbnail served (${items
        .map((item) => item.status)
        .join(',')
        .slice(0, 120)})`,
    )
  }
}

/** A contender that fetches every thumbnail per operation, in requests of `perRequest` hashes (1: the single GET). */
function fetchAll(name: string, server: CofferChild, member: Uploader, hashes: readonly string[], perRequest: number): Contender {
  const groups = Array.from({ length: Math.ceil(hashes.length / perRequest) }, (_, i) => hashes.slice(i * perRequest, (i + 1) * perRequest))
  return {
    name,
    async measure(seconds) {
      const http = new HttpClient(server.ready.url)
      const authorization = `Bearer ${accessToken(member.client)}`
      try {
        return await closedLoop({ concurrency: 1, seconds, subjectCpu: () => server.cpuSeconds() }, async () => {
          await inParallel(groups, BROWSER_PARALLEL, async (group) => {
            if (perRequest === 1) {
              const answer = await http.call('GET', `/v1/blobs/${group[0]}`, { authorization })
              expectStatus(answer, 200, 'single GET')
              if (answer.body.length !== THUMBNAIL_BYTES) throw new Error(`single GET: ${answer.body.length} bytes`)
            } else {
              checkBatch(
                await http.call('POST', '/v1/blobs/batch', { authorization, 'content-type': 'application/json' }, JSON.stringify({ hashes: group })),
                group,
              )
            }
          })
          return hashes.length
        })
      } finally {
        http.close()
      }
    },
  }
}

export const thumbnails: Scenario = {
  name: 'thumbnails',
  summary: `${THUMBNAILS} thumbnails of ${THUMBNAIL_BYTES / 1024} KiB fetched in one batch and in batches of ${SMALL_BATCH}; ceiling: ${CEILING}, ${BROWSER_PARALLEL} in flight (coffer sqlite)`,
  async run(context) {
    // As many batches in flight as the browser sends (the per-account cap is 4 by default, decision 0045).
    const sqlite = await startCoffer(context, { engine: 'sqlite', logLevel: 'info', env: { BATCH_DOWNLOADS_PER_ACCOUNT: String(BROWSER_PARALLEL) } })
    const member = await uploader(sqlite)
    const hashes = await thumbnailsOf(member)
    const contenders = [
      fetchAll(CEILING, sqlite, member, hashes, 1),
      fetchAll(ONE_BATCH, sqlite, member, hashes, THUMBNAILS),
      fetchAll(SMALL_BATCHES, sqlite, member, hashes, SMALL_BATCH),
    ]
    const measured = await alternate(contenders, context.schedule, context.log)
    return {
      rows: [row('thumbnails', measured, ONE_BATCH, CEILING, TARGET, 'thumb'), row('thumbnails', measured, SMALL_BATCHES, CEILING, TARGET, 'thumb')],
      measured: [...measured.values()],
      notes: [
        `${THUMBNAILS} live blobs of ${THUMBNAIL_BYTES} random bytes (BENCH_THUMBNAILS, BENCH_THUMBNAIL_KIB) of one account, on SQLite, in the page cache. One operation fetches all of them with up to ${BROWSER_PARALLEL} requests in flight (a browser's HTTP/1.1 connections to one origin), every answer checked; rates in thumbnails/s, p50 the time for all ${THUMBNAILS}. The batch rows are batches over single GETs (higher is better).`,
      ],
    }
  },
}
