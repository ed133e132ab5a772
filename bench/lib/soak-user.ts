// One virtual user of the soak (bench/lib/soak.ts): an account with a published device
// directory, an album of its own and an enrollment channel, that does one operation after
// another through the SDK as a client would, each picked at random by weight among those whose
// precondition holds. Every answer is checked (the bytes downloaded hash to their address, the
// feed moves forward, verification says durable, receipts verify); an operation whose answer
// is not the one expected throws. Two operations expect a refusal and count it as such: a
// sign-in with an unknown email (401 error.auth.invalid_credentials) and a replace from a stale
// chain position (409 error.op.stale_revival with the asset's real chain head).
import { randomBytes, randomInt, randomUUID } from 'node:crypto'
import { encode } from 'cborg'
import { CofferClient, CofferProblem, sha256Hex, type BundleHashes, type LifecycleWrite, type RelayDirection } from '../../src/sdk/client.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { verifyReceipts, type KeysDocument } from '../../src/sdk/receipts.ts'
import { PASSWORD, signedManifest, type ChainPosition } from './albums.ts'

/** Live assets a user keeps at most: past this, its uploads stop and its writes are replaces (whose old blobs become garbage). */
export const MAX_LIVE_ASSETS = 24
/** An original is 4-64 KiB of random bytes; each bundle also has one derivative and a metadata blob. */
const ORIGINAL_BYTES = { min: 4 * 1024, max: 64 * 1024 }
const DERIVATIVE_BYTES = 4096
const METADATA_BYTES = 128
/** An enrollment message: 1 KiB of ciphertext in base64, as in the relay scenario. */
const RELAY_PAYLOAD_BYTES = 1024
/** A channel lives RELAY_CHANNEL_TTL_S (600 s by default): it is replaced well before. */
const CHANNEL_RENEW_MS = 240_000
/** Issuing an enrollment code needs a sign-in within FRESHNESS_WINDOW_S (600 s by default): sign in again well before. */
const SIGN_IN_RENEW_MS = 300_000
const VERIFY_ASSETS = 8

export type Outcome = 'ok' | 'refused'

/** What the soak is made of: the operations, their weights in the mix, and what each exercises. */
export const OPERATIONS = {
  'sign in': {
    weight: 2,
    what: `POST /v1/auth/login (argon2id at the server's parameters) with the right password on a new client, then POST /v1/auth/logout of the previous session (also forced every ${SIGN_IN_RENEW_MS / 1000} s, within the freshness window that issuing a code needs, and after any error)`,
  },
  'sign in, unknown email': {
    weight: 1,
    what: 'POST /v1/auth/login with an email no account has: expected refusal 401 error.auth.invalid_credentials (the dummy hash)',
  },
  refresh: { weight: 3, what: 'POST /v1/auth/refresh: the token pair rotates' },
  profile: { weight: 5, what: 'GET /v1/profile (a bearer read)' },
  albums: { weight: 4, what: "GET /v1/albums, which must list the user's album" },
  feed: { weight: 8, what: "GET /v1/albums/{id}/feed?after=<cursor>&limit=100, the cursor moving forward as a syncing client's does" },
  download: { weight: 14, what: 'GET /v1/blobs/{hash} of an original or derivative of a live asset; the bytes must hash to the address' },
  upload: {
    weight: 6,
    what: `a new asset: POST /v1/upload (a 4-64 KiB original and a ${DERIVATIVE_BYTES}-byte derivative), PUT of each blob, POST /v1/albums/{id}/ops create with a ${METADATA_BYTES}-byte metadata blob (while the user has fewer than ${MAX_LIVE_ASSETS} live assets)`,
  },
  replace: {
    weight: 5,
    what: 'the same bundle upload, then POST .../ops replace of a live asset from its chain head (its old blobs become garbage for the sweep)',
  },
  'replace, stale': {
    weight: 1,
    what: 'a bundle upload (original only), POST .../ops replace from an older chain position: expected refusal 409 error.op.stale_revival naming the real head; then DELETE /v1/upload/{id}',
  },
  replay: { weight: 1, what: 'the last applied write sent again: 200 with replayed: true, nothing written' },
  relay: { weight: 8, what: 'enrollment relay round trip: POST a 1 KiB payload to the channel, GET (drain) it at the other end, directions alternating' },
  'enroll channel': {
    weight: 1,
    what: `DELETE of the user's channel, POST /v1/auth/devices/enroll/code, POST .../redeem by the other device (also forced every ${CHANNEL_RENEW_MS / 1000} s, within the channel TTL)`,
  },
  verify: { weight: 3, what: `POST /v1/storage/verify over up to ${VERIFY_ASSETS} live assets (original and derivative each): every verdict durable` },
  'verify, deep': { weight: 1, what: 'POST /v1/storage/verify with deep: true over one live asset: every blob re-hashed intact' },
  receipts: {
    weight: 3,
    what: "GET /v1/assets/{id}/receipts of a live asset (every receipt of every bundle it had); the current bundle's receipts' hybrid signatures checked against the attestation keys",
  },
} as const satisfies Record<string, { weight: number; what: string }>

export type OperationName = keyof typeof OPERATIONS
export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[]

interface LiveAsset {
  readonly fileId: string
  /** The upload session of its current bundle (its receipts name it). */
  uploadId: string
  originalHash: string
  derivativeHash: string
  /** SHA-256 of the last manifest applied: the chain head. */
  head: string
  /** Heads it had before its last replace (a stale replace uses one). */
  readonly oldHeads: string[]
}

interface Bundle {
  readonly uploadId: string
  readonly hashes: BundleHashes
  readonly metadata: Buffer | null
}

interface Channel {
  readonly id: string
  readonly openedAt: number
  turns: number
}

function expect(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(what)
}

/** Runs `call`, which must be refused with `status` and `code`; answers the problem. */
async function refusal(call: () => Promise<unknown>, status: number, code: string): Promise<CofferProblem> {
  try {
    await call()
  } catch (error) {
    if (error instanceof CofferProblem && error.status === status && error.code === code) return error
    throw error
  }
  throw new Error(`expected ${status} ${code}, the call succeeded`)
}

export class VirtualUser {
  readonly #baseUrl: string
  readonly #email = `soak-${randomUUID()}@example.test`
  readonly #identity = IdentityKey.generate()
  readonly #deviceId = randomUUID()
  /** The other device of the enrollment channel (needs no session). */
  readonly #enrollee: CofferClient
  #client: CofferClient
  #userId = ''
  #albumId = ''
  #assets: LiveAsset[] = []
  #feedCursor = 0
  #channel: Channel | null = null
  #signedInAt = 0
  #lastWrite: LifecycleWrite | null = null
  #keys: KeysDocument | null = null
  /** Set after an operation failed in a way that may have cost the session. */
  #mustSignIn = false

  constructor(baseUrl: string) {
    this.#baseUrl = baseUrl
    this.#client = new CofferClient({ baseUrl })
    this.#enrollee = new CofferClient({ baseUrl })
  }

  /** Registers, publishes a directory, provisions an album, opens a channel, uploads 2 assets. */
  async setUp(): Promise<void> {
    await this.#client.register(this.#email, PASSWORD)
    this.#signedInAt = Date.now()
    await this.#client.publishDirectory(encode({ directory_version: 1 }), this.#identity)
    this.#userId = (await this.#client.getProfile()).user_id
    this.#albumId = randomUUID()
    await this.#client.provisionAlbum(this.#albumId)
    this.#keys = await this.#client.attestationKeys()
    await this.#openChannel()
    for (let i = 0; i < 2; i++) await this.#create()
  }

  /** The next operation: one that must happen now (a sign-in or channel past its renewal), else one by weight. */
  next(): OperationName {
    const now = Date.now()
    if (this.#mustSignIn || now - this.#signedInAt > SIGN_IN_RENEW_MS || this.#client.tokens === null) return 'sign in'
    if (this.#channel === null || now - this.#channel.openedAt > CHANNEL_RENEW_MS) return 'enroll channel'
    const possible = OPERATION_NAMES.filter((name) => this.#possible(name))
    const total = possible.reduce((sum, name) => sum + OPERATIONS[name].weight, 0)
    let pick = Math.random() * total
    for (const name of possible) {
      pick -= OPERATIONS[name].weight
      if (pick < 0) return name
    }
    return possible[possible.length - 1] ?? 'profile'
  }

  #possible(name: OperationName): boolean {
    switch (name) {
      case 'upload':
        return this.#assets.length < MAX_LIVE_ASSETS
      case 'download':
      case 'replace':
      case 'replace, stale':
      case 'verify':
      case 'verify, deep':
      case 'receipts':
        return this.#assets.length > 0
      case 'replay':
        return this.#lastWrite !== null
      default:
        return true
    }
  }

  /** Runs `name`; throws on any answer but the expected one. */
  async run(name: OperationName): Promise<Outcome> {
    try {
      return await this.#run(name)
    } catch (error) {
      // Whatever failed, the next operation starts from a fresh session.
      this.#mustSignIn = true
      throw error
    }
  }

  async #run(name: OperationName): Promise<Outcome> {
    switch (name) {
      case 'sign in':
        return this.#signIn()
      case 'sign in, unknown email':
        await refusal(
          () => new CofferClient({ baseUrl: this.#baseUrl }).login(`nobody-${randomUUID()}@example.test`, PASSWORD),
          401,
          'error.auth.invalid_credentials',
        )
        return 'refused'
      case 'refresh':
        await this.#client.refresh()
        return 'ok'
      case 'profile':
        expect((await this.#client.getProfile()).user_id === this.#userId, 'profile: another user_id')
        return 'ok'
      case 'albums':
        expect(
          (await this.#client.listAlbums()).albums.some((a) => a.album_id === this.#albumId),
          'albums: the album is not listed',
        )
        return 'ok'
      case 'feed':
        return this.#feed()
      case 'download':
        return this.#download()
      case 'upload':
        await this.#create()
        return 'ok'
      case 'replace':
        return this.#replace()
      case 'replace, stale':
        return this.#staleReplace()
      case 'replay':
        return this.#replay()
      case 'relay':
        return this.#relay()
      case 'enroll channel':
        await this.#openChannel()
        return 'ok'
      case 'verify':
        return this.#verify(false)
      case 'verify, deep':
        return this.#verify(true)
      case 'receipts':
        return this.#receipts()
    }
  }

  /** Leaves the server as it found it: the channel closed, the session ended. */
  async tearDown(): Promise<void> {
    if (this.#channel !== null) await this.#client.closeChannel(this.#channel.id)
    await this.#client.logout()
  }

  #randomAsset(): LiveAsset {
    const asset = this.#assets[randomInt(this.#assets.length)]
    if (asset === undefined) throw new Error('no live asset')
    return asset
  }

  async #signIn(): Promise<Outcome> {
    const client = new CofferClient({ baseUrl: this.#baseUrl })
    const result = await client.login(this.#email, PASSWORD)
    expect(result.kind === 'session', 'sign in: a second factor was asked for')
    const previous = this.#client
    this.#client = client
    this.#signedInAt = Date.now()
    this.#mustSignIn = false
    // Any presented token gets 204, live or not: the previous session ends either way.
    if (previous.tokens !== null) await previous.logout()
    return 'ok'
  }

  async #feed(): Promise<Outcome> {
    const page = await this.#client.feed(this.#albumId, this.#feedCursor, 100)
    let last = this.#feedCursor
    for (const entry of page.entries) {
      expect(entry.sync_seq > last, `feed: sync_seq ${entry.sync_seq} after ${last}`)
      last = entry.sync_seq
    }
    expect(page.next_after === last, `feed: next_after ${page.next_after}, last entry ${last}`)
    this.#feedCursor = last
    return 'ok'
  }

  async #download(): Promise<Outcome> {
    const asset = this.#randomAsset()
    const hash = Math.random() < 0.5 ? asset.originalHash : asset.derivativeHash
    expect(sha256Hex(await this.#client.downloadBlob(hash)) === hash, `download: the bytes of ${hash} hash to something else`)
    return 'ok'
  }

  /** An upload session with fresh bytes, every blob sent (`derivative`: with one derivative; the metadata blob rides on the write). */
  async #upload(derivative: boolean): Promise<Bundle> {
    const original = randomBytes(randomInt(ORIGINAL_BYTES.min, ORIGINAL_BYTES.max + 1))
    const derivatives = derivative ? [randomBytes(DERIVATIVE_BYTES)] : []
    const metadata = derivative ? randomBytes(METADATA_BYTES) : null
    const hashes: BundleHashes = {
      ciphertextHash: sha256Hex(original),
      derivativeHashes: derivatives.map(sha256Hex),
      metadataBlobHash: metadata === null ? null : sha256Hex(metadata),
    }
    const bytesByHash = new Map<string, Buffer>([[hashes.ciphertextHash, original], ...derivatives.map((bytes) => [sha256Hex(bytes), bytes] as const)])
    const session = await this.#client.openUploadSession({
      album_id: this.#albumId,
      crypto_suite_id: 1,
      ciphertext_hash: hashes.ciphertextHash,
      blobs: [...bytesByHash].map(([hash, bytes]) => ({
        role: hash === hashes.ciphertextHash ? ('original' as const) : ('derivative' as const),
        hash,
        size: bytes.length,
      })),
    })
    for (const blob of session.blobs.filter((b) => !b.present))
      await this.#client.putBlob(session.upload_id, blob.hash, bytesByHash.get(blob.hash) ?? Buffer.alloc(0))
    return { uploadId: session.upload_id, hashes, metadata }
  }

  /** The write a client sends for `bundle` at `chain`, and the chain head it makes. */
  async #write(bundle: Bundle, chain: ChainPosition): Promise<{ request: LifecycleWrite; head: string; fileId: string }> {
    const signed = await signedManifest({ userId: this.#userId, identity: this.#identity, deviceId: this.#deviceId }, this.#albumId, bundle.hashes, chain)
    const request: LifecycleWrite = {
      manifest_envelope: signed.envelope,
      manifest_cbor: Buffer.from(signed.manifestCbor).toString('base64'),
      metadata_blob: bundle.metadata === null ? null : bundle.metadata.toString('base64'),
    }
    return { request, head: sha256Hex(signed.manifestCbor), fileId: signed.envelope.file_id }
  }

  async #apply(request: LifecycleWrite, action: 'create' | 'replace'): Promise<void> {
    const result = await this.#client.applyManifest(this.#albumId, request)
    expect(result.action === action && !result.replayed, `${action}: answered ${JSON.stringify(result)}`)
    this.#lastWrite = request
  }

  async #create(): Promise<void> {
    const bundle = await this.#upload(true)
    const { request, head, fileId } = await this.#write(bundle, {})
    await this.#apply(request, 'create')
    this.#assets.push({
      fileId,
      uploadId: bundle.uploadId,
      originalHash: bundle.hashes.ciphertextHash,
      derivativeHash: bundle.hashes.derivativeHashes[0] ?? '',
      head,
      oldHeads: [],
    })
  }

  async #replace(): Promise<Outcome> {
    const asset = this.#randomAsset()
    const bundle = await this.#upload(true)
    const { request, head } = await this.#write(bundle, { action: 'replace', fileId: asset.fileId, prior: asset.head, originalBlobHash: asset.originalHash })
    await this.#apply(request, 'replace')
    asset.oldHeads.push(asset.head)
    if (asset.oldHeads.length > 4) asset.oldHeads.shift()
    asset.head = head
    asset.uploadId = bundle.uploadId
    asset.originalHash = bundle.hashes.ciphertextHash
    asset.derivativeHash = bundle.hashes.derivativeHashes[0] ?? ''
    return 'ok'
  }

  async #staleReplace(): Promise<Outcome> {
    const asset = this.#randomAsset()
    // A head the asset had before (a client that missed a replace), or, before any replace, one it never had.
    const stale = asset.oldHeads[randomInt(Math.max(1, asset.oldHeads.length))] ?? sha256Hex(randomBytes(32))
    const bundle = await this.#upload(false)
    const { request } = await this.#write(bundle, { action: 'replace', fileId: asset.fileId, prior: stale, originalBlobHash: asset.originalHash })
    const problem = await refusal(() => this.#client.applyManifest(this.#albumId, request), 409, 'error.op.stale_revival')
    expect(problem.problem.chain_head === asset.head, `replace, stale: chain_head ${String(problem.problem.chain_head)}, expected ${asset.head}`)
    await this.#client.abortUploadSession(bundle.uploadId)
    return 'refused'
  }

  async #replay(): Promise<Outcome> {
    const write = this.#lastWrite
    if (write === null) throw new Error('replay: nothing written yet')
    const result = await this.#client.applyManifest(this.#albumId, write)
    expect(result.replayed, `replay: answered ${JSON.stringify(result)}`)
    return 'ok'
  }

  async #openChannel(): Promise<void> {
    if (this.#channel !== null) await this.#client.closeChannel(this.#channel.id)
    this.#channel = null
    const { code } = await this.#client.issueEnrollmentCode()
    const { channel_id: id } = await this.#enrollee.redeemEnrollmentCode(code)
    this.#channel = { id, openedAt: Date.now(), turns: 0 }
  }

  async #relay(): Promise<Outcome> {
    const channel = this.#channel
    if (channel === null) throw new Error('relay: no channel')
    const direction: RelayDirection = channel.turns++ % 2 === 0 ? 'to_enrollee' : 'to_initiator'
    const [sender, receiver] = direction === 'to_enrollee' ? [this.#client, this.#enrollee] : [this.#enrollee, this.#client]
    const payload = randomBytes(RELAY_PAYLOAD_BYTES).toString('base64')
    await sender.relay(channel.id, direction, payload)
    const drained = await receiver.drain(channel.id, direction)
    expect(drained.length === 1 && drained[0] === payload, `relay: drained ${drained.length} payload(s), not the one posted`)
    return 'ok'
  }

  async #verify(deep: boolean): Promise<Outcome> {
    const picked = deep ? [this.#randomAsset()] : [...this.#assets].sort(() => Math.random() - 0.5).slice(0, VERIFY_ASSETS)
    const { verdicts } = await this.#client.verifyStorage({
      assets: picked.map((a) => ({ asset_id: a.fileId, blob_hashes: [a.originalHash, a.derivativeHash] })),
      ...(deep ? { deep: true } : {}),
    })
    const what = deep ? 'verify, deep' : 'verify'
    expect(verdicts.length === picked.length && verdicts.every((v) => v.durable), `${what}: ${JSON.stringify(verdicts).slice(0, 300)}`)
    if (deep)
      expect(
        verdicts.every((v) => v.blobs.every((b) => b.deep === 'intact')),
        `${what}: ${JSON.stringify(verdicts).slice(0, 300)}`,
      )
    return 'ok'
  }

  async #receipts(): Promise<Outcome> {
    const asset = this.#randomAsset()
    // The list holds every bundle the asset ever had; a client checks the new ones, those of the current bundle.
    const receipts = (await this.#client.assetReceipts(asset.fileId)).receipts.filter((r) => r.upload_id === asset.uploadId)
    expect(receipts.length >= 2, `receipts: ${receipts.length} for the current bundle`)
    this.#keys ??= await this.#client.attestationKeys()
    let keys = this.#keys
    let check = await verifyReceipts(receipts, keys, asset.fileId)
    if (!check.valid && receipts.some((r) => !keys.keys.some((k) => k.key_id === r.server_key_id))) {
      keys = this.#keys = await this.#client.attestationKeys()
      check = await verifyReceipts(receipts, keys, asset.fileId)
    }
    expect(check.valid, `receipts: ${check.problems.slice(0, 3).join('; ')}`)
    return 'ok'
  }
}
