import { defineConfig } from 'vitest/config'

// `npm test` runs the unit and architecture tests once, and the HTTP, concurrency, end-to-end,
// client and browser suites on SQLite and, when TEST_DATABASE_URL is set, those whose outcome
// depends on the database engine again on PostgreSQL. The suites that touch blobs run a third
// time (on SQLite) with every server's blobs in an S3 bucket (s3rver). `npm run test:long`
// (COFFER_TEST_LONG=1) runs the long loops at their full sizes instead (docs/testing.md).
const postgres = process.env.TEST_DATABASE_URL
const long = process.env.COFFER_TEST_LONG === '1'
if (!postgres) {
  console.warn('\n*** TEST_DATABASE_URL is not set: the PostgreSQL half of the suite is SKIPPED (CI sets it). ***\n')
}

const engineSuites = [
  'test/http/**/*.test.ts',
  'test/concurrency/**/*.test.ts',
  'test/e2e/**/*.test.ts',
  'test/client/**/*.test.ts',
  'test/browser/**/*.test.ts',
]
// The HTTP suites that store, read, verify or collect blobs.
const blobSuites = [
  'test/http/download.test.ts',
  'test/http/blobs-batch.test.ts',
  'test/http/uploads.test.ts',
  'test/http/upload-parts.test.ts',
  'test/http/gc.test.ts',
  'test/http/backup.hold.test.ts',
  'test/http/verify-storage.test.ts',
  'test/http/moderation.test.ts',
  'test/http/asset-delete.test.ts',
  'test/http/lifecycle.test.ts',
  'test/http/client-library.test.ts',
]
// Tests that need no database engine run once: client tests without a server, the grid lab
// (its server only serves the web app's files), the web app's photo and date indexes and its upload rate and folder walk (pure, in Node).
const engineFree = [
  'test/client/media.test.ts',
  'test/browser/grid-lab.test.ts',
  'test/browser/photo-index.test.ts',
  'test/browser/date-index.test.ts',
  'test/browser/upload-rate.test.ts',
]
// Suites whose every assertion is about what sits above the database (the HTTP edge before an
// operation reads anything, the logs, the client library and coffer-photos, the web app in
// Chromium, the docs' programs, the SDK package) or beside it (the blob folder, a bucket): they
// start a server on the suite's database, but no outcome they check depends on which engine it
// is, so they run on SQLite only (docs/testing.md, "What runs where").
const engineNeutral = [
  'test/http/bearer.test.ts',
  'test/http/edge.test.ts',
  'test/http/errors.every-path.test.ts',
  'test/http/errors.pre-route.test.ts',
  'test/http/headers.security.test.ts',
  'test/http/logs.abort.test.ts',
  'test/http/logs.access.test.ts',
  'test/http/logs.secrets.test.ts',
  'test/http/numbers.bounds.test.ts',
  'test/http/openapi-client.test.ts',
  'test/http/receipts.bytes.test.ts',
  'test/http/statuses.test.ts',
  'test/http/web-app.test.ts',
  'test/http/blob-store.test.ts',
  'test/http/client-library.test.ts',
  'test/e2e/blobs-migrate.test.ts',
  'test/e2e/guide.test.ts',
  'test/e2e/readme.test.ts',
  'test/e2e/sdk.package.test.ts',
  'test/client/**/*.test.ts',
  'test/browser/**/*.test.ts',
]
// Test files that replace a module (vi.mock): the module graph they change must be theirs
// alone, so they run in a fresh one each; every other file shares its worker's (see `isolate`
// below). test/architecture/test-isolation.test.ts keeps this list complete.
export const mocksModules = ['test/client/photos-restore-messages.test.ts']
// The long loops: a quick size runs in `npm test` (soak, crash); the library run only in `npm run test:long`.
const longLoops = [
  'test/e2e/soak.test.ts',
  'test/e2e/crash.test.ts',
  'test/e2e/library.test.ts',
  'test/client/photos-import-mixed.test.ts',
  'test/client/photos.e2e.test.ts',
]

const onSqlite = { COFFER_TEST_ENGINE: 'sqlite' }
const onPostgres = postgres ? { COFFER_TEST_ENGINE: 'postgres', TEST_DATABASE_URL: postgres } : null

const projects = long
  ? [
      { extends: true as const, test: { name: 'long-sqlite', include: longLoops, env: onSqlite } },
      ...(onPostgres ? [{ extends: true as const, test: { name: 'long-postgres', include: longLoops, env: onPostgres } }] : []),
    ]
  : [
      {
        extends: true as const,
        test: { name: 'unit', include: ['src/**/*.test.ts', 'test/architecture/**/*.test.ts', 'test/vectors/**/*.test.ts', ...engineFree] },
      },
      {
        extends: true as const,
        test: { name: 'sqlite', include: engineSuites, exclude: [...engineFree, ...mocksModules, 'test/e2e/library.test.ts'], env: onSqlite },
      },
      { extends: true as const, test: { name: 'sqlite-isolated', include: mocksModules, env: onSqlite, isolate: true } },
      { extends: true as const, test: { name: 's3', include: blobSuites, env: { ...onSqlite, COFFER_TEST_BLOBS: 's3' } } },
      ...(onPostgres
        ? [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                include: engineSuites,
                exclude: [...engineFree, ...engineNeutral, ...mocksModules, 'test/e2e/library.test.ts'],
                env: onPostgres,
              },
            },
          ]
        : []),
    ]

export default defineConfig({
  test: {
    testTimeout: 30_000,
    // Two files at a time: most of the suite waits on servers, databases and Chromium rather
    // than computing, and vitest's default (cores - 1) runs one file at a time on a 2-core
    // machine. TEST_WORKERS overrides it.
    maxWorkers: Number(process.env.TEST_WORKERS ?? 2),
    // A worker runs its files one after another in one module graph instead of a fresh one per
    // file: the server, the SDK and the client library are imported once per worker, not once per
    // file (about a third of the suite's time went to imports: 244 of 1,028 s at 160c548). Every
    // file starts its own servers, databases and folders, so nothing of a test lives on in the
    // modules; the files that replace a module run isolated (mocksModules).
    isolate: false,
    hookTimeout: 30_000,
    // expect.poll waits up to 10 s, not vitest's 1 s: what a test waits for is real work (a
    // browser screen after argon2id in the page and on the server, a spawned CLI, a server's
    // background task) on CI's two shared cores. A poll that succeeds returns at once.
    expect: { poll: { timeout: 10_000 } },
    // The browser tests load web/dist: built from the sources at the start of every run.
    globalSetup: ['test/support/build-web.ts'],
    projects,
  },
})
