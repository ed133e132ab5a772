import { defineConfig } from 'vitest/config'

// `npm test` runs the unit and architecture tests once, and the HTTP and concurrency suites
// on SQLite and, when TEST_DATABASE_URL is set, again on PostgreSQL. The suites that touch
// blobs run a third time (on SQLite) with every server's blobs in an S3 bucket (s3rver).
const postgres = process.env.TEST_DATABASE_URL
if (!postgres) {
  console.warn('\n*** TEST_DATABASE_URL is not set: the PostgreSQL half of the suite is SKIPPED (CI sets it). ***\n')
}

const engineSuites = ['test/http/**/*.test.ts', 'test/concurrency/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/client/**/*.test.ts', 'test/browser/**/*.test.ts']
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
// Tests that need no database engine run once: client tests without a server, and the grid lab
// (its server only serves the web app's files).
const engineFree = ['test/client/media.test.ts', 'test/browser/grid-lab.test.ts']

export default defineConfig({
  test: {
    testTimeout: 30_000,
    // Two files at a time: most of the suite waits on servers, databases and Chromium rather
    // than computing, and vitest's default (cores - 1) runs one file at a time on a 2-core
    // machine. TEST_WORKERS overrides it.
    maxWorkers: Number(process.env.TEST_WORKERS ?? 2),
    hookTimeout: 30_000,
    // expect.poll waits up to 10 s, not vitest's 1 s: what a test waits for is real work (a
    // browser screen after argon2id in the page and on the server, a spawned CLI, a server's
    // background task) on CI's two shared cores. A poll that succeeds returns at once.
    expect: { poll: { timeout: 10_000 } },
    // The browser tests load web/dist: built from the sources at the start of every run.
    globalSetup: ['test/support/build-web.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts', 'test/architecture/**/*.test.ts', 'test/vectors/**/*.test.ts', ...engineFree] } },
      { extends: true, test: { name: 'sqlite', include: engineSuites, exclude: engineFree, env: { COFFER_TEST_ENGINE: 'sqlite' } } },
      { extends: true, test: { name: 's3', include: blobSuites, env: { COFFER_TEST_ENGINE: 'sqlite', COFFER_TEST_BLOBS: 's3' } } },
      ...(postgres ? [{ extends: true as const, test: { name: 'postgres', include: engineSuites, exclude: engineFree, env: { COFFER_TEST_ENGINE: 'postgres', TEST_DATABASE_URL: postgres } } }] : []),
    ],
  },
})
