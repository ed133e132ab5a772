// The names by which the web app reaches the libraries beside it (decision 0020, "The libraries by
// name"): `@coffer/photos/<module>.ts` is src/client/<module>.ts, the photo library (format, backup,
// albums, sync); `@coffer/sdk/<module>.ts` is src/sdk/<module>.ts, the SDK (CofferClient, the HTTP
// client, and the signed wire). The published package says the same (@coffer/sdk and
// @coffer/sdk/photos), so "client" only ever means CofferClient. Vite (web/vite.config.ts) and
// vitest (vitest.config.ts: tests load some web/src modules) take the aliases from here; both
// tsconfig files state them as `paths`, which test/architecture/web-imports.test.ts holds equal.
import path from 'node:path'

const root = path.join(import.meta.dirname, '..')

/** Each name's prefix and the folder of the repository it stands for. */
export const LIBRARY_NAMES = {
  '@coffer/photos': 'src/client',
  '@coffer/sdk': 'src/sdk',
} as const

/** The same, as Vite's resolve.alias: `@coffer/photos/files.ts` → <root>/src/client/files.ts. */
export const libraryAliases: Record<string, string> = Object.fromEntries(Object.entries(LIBRARY_NAMES).map(([name, folder]) => [name, path.join(root, folder)]))
