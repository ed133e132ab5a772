// Running the photo library's verification (src/client/verify.ts) for a screen: the album a
// window of 64 photos at a time (the library's own windows; only the small reports are kept),
// progress as it goes, and stopped when the screen is left.
import { useCallback, useEffect, useRef, useState } from 'react'
import type { Library } from '#photos/albums.ts'
import { verifyAlbum, verifyAssets, type AssetReport, type VerifyOptions } from '#photos/verify.ts'

export interface Verification {
  /** A check is running. */
  readonly running: boolean
  /** The last check asked the server to re-hash the bytes. */
  readonly deep: boolean
  /** Reports so far (in the order they came) while running; every report, in album order, when done. */
  readonly reports: readonly AssetReport[]
  /** When the last check ended; null while the first runs. */
  readonly finishedAt: number | null
  readonly error: unknown
}

/** Reports are shown this often while a check runs (every report would render thousands of times for a big album). */
const SHOW_EVERY = 16

class Stopped extends Error {}

/**
 * Verifies one photo of the album (`assetId`), or all of it (null), when the screen opens, and
 * again, deep or not, on `start`. Deep asks the server to re-hash every blob; for one photo it
 * also downloads and decrypts the photo here (for a whole album that would download all of it).
 */
export function useVerification(library: Library, albumId: string, assetId: string | null): Verification & { start: (deep: boolean) => void } {
  const [state, setState] = useState<Verification>({ running: true, deep: false, reports: [], finishedAt: null, error: null })
  const run = useRef(0)
  const start = useCallback(
    (deep: boolean) => {
      const mine = ++run.current
      const seen: AssetReport[] = []
      setState({ running: true, deep, reports: [], finishedAt: null, error: null })
      const options: VerifyOptions = {
        deep,
        download: deep && assetId !== null,
        onAsset: (report) => {
          // Throwing here ends the library's run: the screen was left, or a new check started.
          if (run.current !== mine) throw new Stopped()
          seen.push(report)
          if (seen.length % SHOW_EVERY === 0) setState((now) => ({ ...now, reports: [...seen] }))
        },
      }
      const verifying = assetId === null ? verifyAlbum(library, albumId, options) : verifyAssets(library, albumId, [assetId], options)
      verifying.then(
        (reports) => run.current === mine && setState({ running: false, deep, reports, finishedAt: Date.now(), error: null }),
        (error: unknown) =>
          run.current === mine && !(error instanceof Stopped) && setState({ running: false, deep, reports: seen, finishedAt: Date.now(), error }),
      )
    },
    [library, albumId, assetId],
  )
  useEffect(() => {
    start(false)
    return () => {
      run.current++
    }
  }, [start])
  return { ...state, start }
}

/** The report says everything checked out. */
export const verified = (report: AssetReport): boolean => report.problems.length === 0
