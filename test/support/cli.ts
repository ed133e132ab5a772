// The operator CLI as operators run it (`coffer ...` with the server's environment), in-process
// (runCoffer, the code src/cli/main.ts runs) on streams of the test's own, and members of a server
// started as a process, for the end-to-end tests.
import { encode } from 'cborg'
import { randomUUID } from 'node:crypto'
import { PassThrough } from 'node:stream'
import { runCoffer } from '../../src/cli/program.ts'
import { CofferClient, sha256Hex, type OpResult } from '../../src/sdk/client.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { PASSWORD, uniqueEmail } from './actors.ts'
import { ciphertext, signedManifest, type Uploader } from './albums.ts'
import { ROOT } from './process.ts'
import { collected } from './streams.ts'

export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `coffer <args>` with `env` as its whole environment, in the checkout's root. */
export async function coffer(env: Record<string, string>, ...args: string[]): Promise<Ran> {
  const stdout = collected()
  const stderr = collected()
  const code = await runCoffer(args, { stdin: new PassThrough().end(), stdout: stdout.stream, stderr: stderr.stream, env, cwd: ROOT })
  return { code, stdout: stdout.text(), stderr: stderr.text() }
}

export type Member = Uploader & { albumId: string }

/** A client with an account, a published directory and an album on the server at `url`. */
export async function member(url: string): Promise<Member> {
  const client = new CofferClient({ baseUrl: url })
  const email = uniqueEmail('ops')
  await client.register(email, PASSWORD)
  const identity = IdentityKey.generate()
  await client.publishDirectory(encode({ directory_version: 1 }), identity)
  const { user_id: userId } = await client.getProfile()
  const albumId = randomUUID()
  await client.provisionAlbum(albumId)
  return { email, password: PASSWORD, client, userId, identity, deviceId: randomUUID(), albumId }
}

export interface Uploaded {
  readonly result: OpResult & { readonly manifestHash: string }
  /** Every blob of the bundle by hash that is a file: original, derivative, metadata (the manifest, the provenance blob, is held in the database). */
  readonly blobs: ReadonlyMap<string, Buffer>
}

/** One create as an app makes it, with an original of `size` bytes. */
export async function upload(who: Member, size = 1500): Promise<Uploaded> {
  const blobs = [ciphertext(size), ciphertext(300), ciphertext(80)]
  const result = await who.client.uploadAsset({
    albumId: who.albumId,
    cryptoSuiteId: 1,
    original: blobs[0]!,
    derivatives: [blobs[1]!],
    metadata: blobs[2]!,
    sign: (hashes) => signedManifest(who, hashes, { albumId: who.albumId }),
  })
  return { result, blobs: new Map(blobs.map((bytes) => [sha256Hex(bytes), bytes])) }
}
