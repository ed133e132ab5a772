// The bucket of the upload and memory scenarios' bucket rows: s3rver started as the tests start it
// (test/support/bucket.ts: a free port, its objects in a temporary folder of its own), in a child
// of its own so that it shares no event loop with the load generator or the server under test.
// It announces the environment that points a process at the bucket (the store's variables and
// s3rver's credentials, for the AWS SDK's chain) and the settings of a client opened directly.
import type { BucketSettings } from '../../src/config.ts'
import { S3RVER_CREDENTIALS_ENV, startBucket } from '../../test/support/bucket.ts'
import { serveParent, startOrDie } from '../lib/child-side.ts'

export interface BucketReady {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string
  /** For a Coffer server (its blobs under coffer/) or any other process that talks to the bucket. */
  readonly env: Record<string, string>
  /** For a client opened directly (the raw ceiling's objects go under raw/). */
  readonly settings: BucketSettings
}

await startOrDie(async () => {
  const bucket = await startBucket()
  const ready: BucketReady = {
    endpoint: bucket.endpoint,
    env: { ...bucket.env('coffer/'), ...S3RVER_CREDENTIALS_ENV },
    settings: bucket.settings('raw/'),
  }
  serveParent(ready, { onStop: () => bucket.close() })
})
