// The library run (`npm run bench -- library`, bench/scenarios/library.ts) at a quick size on the
// suite's engine: a generated library backed up by the real coffer-photos from device 1, verified
// deep, a second device joined through the relay, the album restored there and compared byte for
// byte, every blob's custody receipt verified on both devices. Its rates and memory are printed,
// not asserted (a quick run on a CI machine says little about them: the 10,000-photo figures are
// in docs/benchmarks.md); every check with a verdict must pass and no measurement may have a
// problem. It runs in `npm run test:long` (LIBRARY_PHOTOS photos, 1000 there; 40 when run alone),
// not in `npm test`: photos.e2e, photos-join and photos-verify-against test each of its steps.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { checksTable, resultsTable } from '../../bench/lib/report.ts'
import type { BenchContext } from '../../bench/lib/scenario.ts'
import { libraryScenario } from '../../bench/scenarios/library.ts'
import { testEngine } from '../support/database.ts'

const PHOTOS = Number(process.env.LIBRARY_PHOTOS || 40)

describe(`the library run on ${testEngine}`, () => {
  it(
    `${PHOTOS} photos: backed up, verified deep, restored byte for byte on a device joined through the relay, every receipt verified`,
    async () => {
      const workDir = await mkdtemp(path.join(tmpdir(), 'coffer-library-'))
      const scenarioEnd: Array<() => Promise<void>> = []
      const runEnd: Array<() => Promise<void>> = []
      const log: string[] = []
      const context: BenchContext = {
        schedule: { warmupS: 0, measureS: 1, rounds: 1, quietTimeoutS: 0, retries: 0 },
        postgresUrl: testEngine === 'postgres' ? (process.env.TEST_DATABASE_URL ?? null) : null,
        workDir,
        log: (line) => log.push(line),
        defer: (cleanup) => void scenarioEnd.push(cleanup),
        deferToRunEnd: (cleanup) => void runEnd.push(cleanup),
      }
      try {
        const result = await libraryScenario({ photos: PHOTOS, engines: [testEngine] }).run(context)
        const report = `${log.join('\n')}\n\n${resultsTable(result.rows)}\n\n${checksTable(result.checks ?? [])}`
        console.log(report)

        // Every contender measured the whole library without a problem (a failed file, a wrong count).
        expect(
          result.measured.flatMap((m) => m.pooled.problems),
          report,
        ).toEqual([])
        expect(result.measured.map((m) => m.pooled.completed)).toEqual(result.measured.map(() => PHOTOS))
        // Backup, deep verify and restore each against its ceiling.
        expect(result.rows.map((r) => r.subject.name.split(',')[0]).filter((name, i, all) => all.indexOf(name) === i)).toEqual([
          'library: backup on device 1',
          'library: restore on device 2',
          'library: verify --deep on device 1',
        ])
        const checks = result.checks ?? []
        const judged = checks.filter((c) => c.pass !== null)
        expect(
          judged.filter((c) => c.pass !== true).map((c) => `${c.name}: ${c.value}`),
          report,
        ).toEqual([])
        // Among them: the restored files, and the receipts on each device.
        expect(judged.filter((c) => c.name.includes('byte for byte')).map((c) => c.value)).toEqual([`all ${PHOTOS} files identical, no other file`])
        const receipts = judged.filter((c) => c.name.includes('custody receipt'))
        expect(receipts.map((c) => c.name.split(',')[0])).toEqual(['verify --deep on device 1', 'verify on device 2', 'verify on device 3 (new)'])
        // The album's history checked in each verify, a small part of a plain one's time (judged above).
        expect(checks.filter((c) => c.name.includes("the check of the album's history")).map((c) => c.name.split(',')[0])).toEqual([
          'verify --deep on device 1',
          'verify on device 2',
          'verify on device 3 (new)',
        ])
        expect(receipts[0]!.value).toMatch(
          new RegExp(`^\\d+ blobs of ${PHOTOS + 1} assets, \\d+ receipts; 0 assets not verified; 0 blobs not re-hashed by the server$`),
        )
        expect(checks.some((c) => c.name.startsWith('device 2 joins through the relay'))).toBe(true)
      } finally {
        for (const cleanups of [scenarioEnd, runEnd]) while (cleanups.length > 0) await cleanups.pop()!()
        await rm(workDir, { recursive: true, force: true })
      }
    },
    600_000 + PHOTOS * 2_000,
  )
})
