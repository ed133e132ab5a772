// Typed client for the Coffer API. It imports only the wire contract. It holds the token pair
// and refreshes it once when the access token has expired (or the server says so), with at
// most one refresh in flight however many calls are waiting.
import type { Static } from 'typebox'
import { BLOB_BATCH_MAX_HASHES } from '../contract/constants.ts'
import type {
  AlbumListResponse,
  AssetDeleteRequest,
  FeedResponse,
  ManifestEnvelope,
  OpenUploadRequest,
  OpRequest,
  OpResponse,
  ProvisionAlbumResponse,
  TrashedAsset,
  TrashPage,
  UpgradePhaseResponse,
  UploadSessionResponse,
} from '../contract/albums.ts'
import type {
  EnrollmentResponse,
  ReauthenticateResponse,
  RecoveryCodesResponse,
  SecondFactorChallenge,
  TokenResponse,
  TotpStatusResponse,
} from '../contract/auth.ts'
import type {
  ChannelResponse,
  DrainResponse,
  EnrollmentCodeResponse,
  PublishDirectoryResponse,
  RevokeAllResponse,
  RevokeChallengeResponse,
  StoreEscrowResponse,
} from '../contract/devices.ts'
import type {
  AssetReceiptsResponse,
  AttestationKeysDocument,
  ModerationRecordResponse,
  StorageVerifyRequest,
  StorageVerifyResponse,
} from '../contract/custody.ts'
import type { CodedProblem } from '../contract/errors.ts'
import type { AccountExport } from '../contract/export.ts'
import type { ProfileResponse } from '../contract/profile.ts'
import type { StorageUsageResponse } from '../contract/quota.ts'
import type {
  AcceptedResponse,
  InvitationsResponse,
  MemberRole,
  MembersResponse,
  MembershipResponse,
  MemberView,
  SharedAlbumsResponse,
  PartnersResponse,
  PartnerView as PartnerViewSchema,
} from '../contract/sharing.ts'
import type { DevicesResponse, SecurityEventsResponse } from '../contract/sessions.ts'
import type { CreateLinkRequest, LinkProbeResponse, LinksResponse, LinkView as LinkViewSchema, OpenLinkResponse } from '../contract/links.ts'
import { decodeStrict } from '../codec/cbor.ts'
import { sha256 } from '@noble/hashes/sha2.js'
import { sha256Hex, toBase64 } from './bytes.ts'
import type { IdentityKey } from './identity.ts'

export type Tokens = Static<typeof TokenResponse>
export type Profile = Static<typeof ProfileResponse>
export type Devices = Static<typeof DevicesResponse>
export type SecurityEvents = Static<typeof SecurityEventsResponse>
export type Problem = Static<typeof CodedProblem> & Record<string, unknown>
export type RevokeChallenge = Static<typeof RevokeChallengeResponse>
export type EnrollmentCode = Static<typeof EnrollmentCodeResponse>
export type Channel = Static<typeof ChannelResponse>
export type RelayDirection = 'to_initiator' | 'to_enrollee'
export type StoredEscrow = Static<typeof StoreEscrowResponse>
export type SecondFactorStatus = Static<typeof TotpStatusResponse>

export type Album = Static<typeof ProvisionAlbumResponse>
export type AlbumList = Static<typeof AlbumListResponse>
export type ManifestEnvelopeFields = Static<typeof ManifestEnvelope>
export type OpenUpload = Static<typeof OpenUploadRequest>
export type UploadSessionView = Static<typeof UploadSessionResponse>
export type LifecycleWrite = Static<typeof OpRequest>
export type AssetDeletion = Static<typeof AssetDeleteRequest>
export type OpResult = Static<typeof OpResponse>
export type Trashed = Static<typeof TrashedAsset>
export type Trash = Static<typeof TrashPage>
export type Feed = Static<typeof FeedResponse>
export type NewLink = Static<typeof CreateLinkRequest>
export type LinkView = Static<typeof LinkViewSchema>
export type LinkList = Static<typeof LinksResponse>
export type LinkProbe = Static<typeof LinkProbeResponse>
export type OpenedLink = Static<typeof OpenLinkResponse>
export type UpgradePhase = Static<typeof UpgradePhaseResponse>
export type StorageVerification = Static<typeof StorageVerifyRequest>
export type StorageVerdicts = Static<typeof StorageVerifyResponse>
export type AssetReceipts = Static<typeof AssetReceiptsResponse>
export type AttestationKeys = Static<typeof AttestationKeysDocument>
export type ModerationRecord = Static<typeof ModerationRecordResponse>
export type StorageUsage = Static<typeof StorageUsageResponse>
export type AlbumMemberRole = Static<typeof MemberRole>
export type AlbumMember = Static<typeof MemberView>
export type AlbumMembers = Static<typeof MembersResponse>
export type Invitations = Static<typeof InvitationsResponse>
export type AcceptedInvitation = Static<typeof AcceptedResponse>
export type SharedAlbums = Static<typeof SharedAlbumsResponse>
export type Partners = Static<typeof PartnersResponse>
export type PartnerView = Static<typeof PartnerViewSchema>
export type Membership = Static<typeof MembershipResponse>
/** The account export's document, once the whole body is read and parsed. */
export type AccountExportDocument = Static<typeof AccountExport>

/** An account export as it arrives (`exportAccount`). */
export interface AccountExportDownload {
  /** The name the server suggests for the saved file (`coffer-export-<user_id>.json`). */
  readonly fileName: string
  /**
   * The body, one JSON document (AccountExportDocument) of any size: stream it to a file
   * rather than hold it. A stream that fails or ends before the document does was cut short
   * and must be fetched again (the saved bytes then do not parse).
   */
  readonly body: ReadableStream<Uint8Array>
}

/** What `uploadAsset` knows once it has hashed the bytes: enough to build and sign the manifest. */
export interface BundleHashes {
  readonly ciphertextHash: string
  readonly derivativeHashes: readonly string[]
  readonly metadataBlobHash: string | null
}

export interface AssetUpload {
  readonly albumId: string
  readonly cryptoSuiteId: number
  /** The encrypted original (ciphertext). */
  readonly original: Uint8Array
  readonly derivatives?: readonly Uint8Array[]
  /** The encrypted metadata blob, when the manifest commits one. */
  readonly metadata?: Uint8Array
  /** Builds the envelope and the signed canonical CBOR manifest for these hashes. */
  sign(
    hashes: BundleHashes,
  ): Promise<{ envelope: ManifestEnvelopeFields; manifestCbor: Uint8Array }> | { envelope: ManifestEnvelopeFields; manifestCbor: Uint8Array }
}

export { sha256Hex }

/** A hash of a batch download answered without its bytes: 404 `error.not_found` or 451 `error.moderation.taken_down`. */
export interface BlobRefusal {
  readonly status: number
  readonly code: string
}

/** What `downloadBlobs` got: every hash asked for is in exactly one of the two maps. */
export interface DownloadedBlobs {
  /** The bytes of each blob served, exactly as uploaded. */
  readonly blobs: Map<string, Uint8Array>
  /** Each hash that was refused, with the status and code a single download would have answered. */
  readonly refused: Map<string, BlobRefusal>
}

/** The answers to a batch download that mean "the same request, a little later". */
const BATCH_BUSY_CODES: ReadonlySet<string> = new Set(['error.batch.too_many', 'error.batch.server_busy'])

/** Tries of one batch request while the server answers it busy, the first included. */
const BATCH_BUSY_TRIES = 10

/** Receipts `assetReceipts` asks for a page: the server's default page. */
export const RECEIPTS_PAGE_SIZE = 200

/** One item of a batch answer as the server encodes it (POST /v1/blobs/batch). */
type BatchItem =
  | { readonly hash: string; readonly status: 200; readonly bytes: Uint8Array }
  | { readonly hash: string; readonly status: 404 | 413 | 451; readonly code: string }

function isBatchItem(item: unknown): item is BatchItem {
  if (typeof item !== 'object' || item === null) return false
  const { hash, status, bytes, code } = item as Record<string, unknown>
  return (
    typeof hash === 'string' &&
    (status === 200 ? bytes instanceof Uint8Array : (status === 404 || status === 413 || status === 451) && typeof code === 'string')
  )
}

/** A fetched directory: the exact bytes and the tag to revalidate them with. */
export interface FetchedDirectory {
  readonly bytes: Uint8Array
  readonly etag: string
}

/** A non-2xx answer: the RFC 9457 problem, its status and headers. */
export class CofferProblem extends Error {
  readonly status: number
  readonly code: string
  readonly problem: Problem
  readonly headers: Headers
  /** Seconds to wait before retrying (429, 423), from Retry-After; null when absent. */
  readonly retryAfterS: number | null
  constructor(status: number, problem: Problem, headers: Headers) {
    super(`${status} ${problem.code}: ${problem.detail}`)
    this.name = 'CofferProblem'
    this.status = status
    this.code = problem.code
    this.problem = problem
    this.headers = headers
    const retryAfter = headers.get('retry-after')
    this.retryAfterS = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : null
  }
}

/** The file name of a `Content-Disposition: attachment; filename="..."` header, or null. */
function attachmentName(header: string | null): string | null {
  return /filename="([^"\\/]+)"/.exec(header ?? '')?.[1] ?? null
}

/** The problem a non-2xx response carries (a body that is not one still becomes a CofferProblem). */
export async function problemOf(response: Response): Promise<CofferProblem> {
  const text = await response.text()
  let problem: Problem
  try {
    problem = JSON.parse(text) as Problem
  } catch {
    problem = { type: 'about:blank', title: response.statusText, status: response.status, detail: text, instance: '', code: 'error.unknown' }
  }
  return new CofferProblem(response.status, problem, response.headers)
}

export interface Advisory {
  readonly cohort_hash?: string | null
  readonly device_id?: string | null
}

export type LoginResult =
  | { readonly kind: 'session'; readonly tokens: Tokens }
  | { readonly kind: 'second_factor'; readonly challenge: Static<typeof SecondFactorChallenge> }

export interface CofferClientOptions {
  readonly baseUrl: string
  readonly tokens?: Tokens | null
  /** Called whenever the client holds a new token pair (or none), e.g. to persist it. */
  readonly onTokens?: (tokens: Tokens | null) => void
  /** Unix milliseconds; the local expiry check uses it. */
  readonly now?: () => number
  readonly fetch?: typeof fetch
  readonly userAgent?: string
  /**
   * A public link's session (docs/sharing.md, "Public links"): the client then reads the linked
   * album through the link, `feed` and the blob downloads at the link's routes, with the session as
   * its bearer token; nothing else is open to it.
   */
  readonly link?: LinkSession
}

/** A link's id and the session `openLink` answered. */
export interface LinkSession {
  readonly linkId: string
  readonly session: string
}

interface Call {
  readonly method: string
  readonly path: string
  readonly json?: unknown
  readonly bytes?: Uint8Array | AsyncIterable<Uint8Array>
  readonly contentType?: string
  readonly headers?: Record<string, string>
  readonly bearer?: boolean
}

export class CofferClient {
  readonly baseUrl: string
  #tokens: Tokens | null
  #refreshing: Promise<void> | null = null
  readonly #onTokens: (tokens: Tokens | null) => void
  readonly #now: () => number
  readonly #fetch: typeof fetch
  readonly #userAgent: string | undefined
  readonly #link: LinkSession | undefined
  /** Where blobs are read: the account's, or the link's. */
  readonly #blobsPath: string

  constructor(options: CofferClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.#tokens = options.tokens ?? null
    this.#onTokens = options.onTokens ?? (() => {})
    this.#now = options.now ?? Date.now
    // Bound, as in CofferAdmin: a browser's fetch called as a method of this object throws.
    this.#fetch = options.fetch ?? fetch.bind(globalThis)
    this.#userAgent = options.userAgent
    this.#link = options.link
    this.#blobsPath = options.link === undefined ? '/v1/blobs' : `/v1/links/${options.link.linkId}/blobs`
  }

  get tokens(): Tokens | null {
    return this.#tokens
  }

  set tokens(tokens: Tokens | null) {
    this.#tokens = tokens
    this.#onTokens(tokens)
  }

  // --- transport -----------------------------------------------------------------------

  async #send(call: Call): Promise<Response> {
    const headers: Record<string, string> = { ...call.headers }
    if (this.#userAgent) headers['user-agent'] = this.#userAgent
    let body: RequestInit['body']
    if (call.json !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(call.json)
    } else if (call.bytes !== undefined) {
      headers['content-type'] = call.contentType ?? 'application/octet-stream'
      body = call.bytes as Uint8Array<ArrayBuffer>
    }
    // A streamed body needs half-duplex fetch.
    const streamed = call.bytes !== undefined && !(call.bytes instanceof Uint8Array)
    if (call.bearer && this.#link !== undefined) headers.authorization = `Bearer ${this.#link.session}`
    else if (call.bearer) {
      if (this.#tokens === null) throw new Error('not signed in: register or log in first')
      headers.authorization = `Bearer ${this.#tokens.access_token}`
    }
    return this.#fetch(this.baseUrl + call.path, {
      method: call.method,
      headers,
      ...(body === undefined ? {} : { body }),
      ...(streamed ? { duplex: 'half' } : {}),
    } as RequestInit)
  }

  /**
   * Sends a call; a bearer call refreshes first when the token has expired, and once more on a
   * 401 that refuses the token itself (it carries a `WWW-Authenticate` challenge). Another 401,
   * such as a wrong password on reauthenticate or change password, is the answer: retrying it
   * would rotate the session and count the wrong password twice toward the lockout.
   */
  async #request(call: Call): Promise<Response> {
    if (call.bearer && this.#tokens !== null && this.#tokens.expires_by * 1000 <= this.#now()) await this.refresh()
    let response = await this.#send(call)
    if (call.bearer && response.status === 401 && response.headers.has('www-authenticate') && this.#tokens !== null) {
      const used = this.#tokens
      await response.body?.cancel()
      await this.#refreshOnce(used)
      response = await this.#send(call)
    }
    // 304 answers a conditional request: not an error.
    if (!response.ok && response.status !== 304) throw await problemOf(response)
    return response
  }

  async #json<T>(call: Call): Promise<T> {
    return (await (await this.#request(call)).json()) as T
  }

  async #empty(call: Call): Promise<void> {
    await (await this.#request(call)).body?.cancel()
  }

  /** Refreshes unless another caller already replaced `used` (one refresh in flight, never two). */
  async #refreshOnce(used: Tokens): Promise<void> {
    if (this.#tokens !== used) return
    await this.refresh()
  }

  // --- accounts and sessions -------------------------------------------------------------

  async register(email: string, password: string): Promise<Tokens> {
    this.tokens = await this.#json<Tokens>({ method: 'POST', path: '/v1/auth/register', json: { email, password } })
    return this.tokens
  }

  /** 200 opens a session (tokens kept); 202 asks for the second factor (finish with verifyLogin). */
  async login(email: string, password: string, advisory: Advisory = {}): Promise<LoginResult> {
    const response = await this.#request({ method: 'POST', path: '/v1/auth/login', json: { email, password, ...advisory } })
    if (response.status === 202) return { kind: 'second_factor', challenge: (await response.json()) as Static<typeof SecondFactorChallenge> }
    this.tokens = (await response.json()) as Tokens
    return { kind: 'session', tokens: this.tokens }
  }

  async verifyLogin(mfaToken: string, totpCode: string, advisory: Advisory = {}): Promise<Tokens> {
    this.tokens = await this.#json<Tokens>({ method: 'POST', path: '/v1/auth/login/verify', json: { mfa_token: mfaToken, totp_code: totpCode, ...advisory } })
    return this.tokens
  }

  /** Rotates the token pair. Concurrent callers share one request. */
  refresh(): Promise<void> {
    this.#refreshing ??= (async () => {
      try {
        if (this.#tokens === null) throw new Error('not signed in: register or log in first')
        const response = await this.#send({ method: 'POST', path: '/v1/auth/refresh', json: { refresh_token: this.#tokens.refresh_token } })
        if (!response.ok) {
          const problem = await problemOf(response)
          if (response.status === 401) this.tokens = null
          throw problem
        }
        this.tokens = (await response.json()) as Tokens
      } finally {
        this.#refreshing = null
      }
    })()
    return this.#refreshing
  }

  async logout(): Promise<void> {
    const response = await this.#send({ method: 'POST', path: '/v1/auth/logout', bearer: true })
    if (!response.ok) throw await problemOf(response)
    await response.body?.cancel()
    this.tokens = null
  }

  async reauthenticate(password: string): Promise<string> {
    const answer = await this.#json<Static<typeof ReauthenticateResponse>>({
      method: 'POST',
      path: '/v1/auth/reauthenticate',
      json: { password },
      bearer: true,
    })
    return answer.authenticated_at
  }

  changePassword(currentPassword: string, newPassword: string): Promise<void> {
    return this.#empty({ method: 'POST', path: '/v1/auth/password', json: { current_password: currentPassword, new_password: newPassword }, bearer: true })
  }

  listSessions(): Promise<Devices> {
    return this.#json({ method: 'GET', path: '/v1/auth/sessions', bearer: true })
  }

  /** Sign-in locks and code refusals the account has suffered, oldest first. */
  listSecurityEvents(): Promise<SecurityEvents> {
    return this.#json({ method: 'GET', path: '/v1/auth/security-events', bearer: true })
  }

  revokeSession(sessionId: string): Promise<void> {
    return this.#empty({ method: 'DELETE', path: `/v1/auth/sessions/${encodeURIComponent(sessionId)}`, bearer: true })
  }

  // --- profile -------------------------------------------------------------------------

  getProfile(): Promise<Profile> {
    return this.#json({ method: 'GET', path: '/v1/profile', bearer: true })
  }

  /** Absent leaves the name, null clears it, a string sets it. */
  updateProfile(update: { display_name?: string | null }): Promise<Profile> {
    return this.#json({ method: 'PATCH', path: '/v1/profile', json: update, bearer: true })
  }

  // --- second factor -------------------------------------------------------------------

  async startTotpEnrollment(): Promise<string> {
    const answer = await this.#json<Static<typeof EnrollmentResponse>>({ method: 'POST', path: '/v1/auth/totp/enroll', bearer: true })
    return answer.provisioning_uri
  }

  /**
   * Turns the pending factor on with a code from the authenticator app and answers its 10
   * recovery codes (asked for with `Prefer: return=representation`): show them this once, for
   * the person to keep; each signs in once in place of an authenticator code.
   */
  async confirmTotpEnrollment(totpCode: string): Promise<string[]> {
    const answer = await this.#json<Static<typeof RecoveryCodesResponse>>({
      method: 'POST',
      path: '/v1/auth/totp/confirm',
      json: { totp_code: totpCode },
      headers: { prefer: 'return=representation' },
      bearer: true,
    })
    return answer.recovery_codes
  }

  /** `totpCode`: a code from the authenticator app, or a recovery code. */
  disableTotp(totpCode: string): Promise<void> {
    return this.#empty({ method: 'POST', path: '/v1/auth/totp/disable', json: { totp_code: totpCode }, bearer: true })
  }

  /**
   * Deletes the account and everything it holds; the client forgets its tokens (they no longer
   * work), as after logout. Needs a recent sign-in or reauthenticate (403
   * error.auth.reauthentication_required otherwise) and, when the account has a second factor, a
   * code from it (403 error.auth.second_factor_required without one).
   */
  async deleteAccount(options: { readonly totpCode?: string } = {}): Promise<void> {
    await this.#empty({ method: 'POST', path: '/v1/account/delete', json: options.totpCode === undefined ? {} : { totp_code: options.totpCode }, bearer: true })
    this.tokens = null
  }

  /** Whether the account has a second factor (none, pending, active) and its unused recovery codes. */
  secondFactorStatus(): Promise<SecondFactorStatus> {
    return this.#json({ method: 'GET', path: '/v1/auth/totp', bearer: true })
  }

  /**
   * Replaces every recovery code with 10 new ones, answered once. Needs a recent password proof
   * (403 error.auth.reauthentication_required otherwise: reauthenticate, then retry) and
   * `totpCode`, a code from the authenticator app or a recovery code.
   */
  async regenerateRecoveryCodes(totpCode: string): Promise<string[]> {
    const answer = await this.#json<Static<typeof RecoveryCodesResponse>>({
      method: 'POST',
      path: '/v1/auth/totp/recovery-codes',
      json: { totp_code: totpCode },
      bearer: true,
    })
    return answer.recovery_codes
  }

  // --- identity key and device directory ------------------------------------------------

  /** Publishes the signed directory (CBOR bytes) under the account's identity key; answers the stored version. */
  async publishDirectory(directory: Uint8Array, identityKey: IdentityKey | string): Promise<number> {
    const header = typeof identityKey === 'string' ? identityKey : identityKey.publicKeyBase64
    const answer = await this.#json<Static<typeof PublishDirectoryResponse>>({
      method: 'POST',
      path: '/v1/auth/devices/directory',
      bytes: directory,
      contentType: 'application/cbor',
      headers: { 'x-service-identity-key': header },
      bearer: true,
    })
    return answer.directory_version
  }

  /** A user's directory, byte for byte; with `ifNoneMatch`, null when it has not changed. */
  async fetchDirectory(userId: string, ifNoneMatch?: string): Promise<FetchedDirectory | null> {
    const response = await this.#request({
      method: 'GET',
      path: `/v1/auth/devices/directory/${encodeURIComponent(userId)}`,
      bearer: true,
      ...(ifNoneMatch === undefined ? {} : { headers: { 'if-none-match': ifNoneMatch } }),
    })
    if (response.status === 304) return null
    return { bytes: new Uint8Array(await response.arrayBuffer()), etag: response.headers.get('etag') ?? '' }
  }

  // --- revoke-all --------------------------------------------------------------------------

  revokeAllChallenge(): Promise<RevokeChallenge> {
    return this.#json({ method: 'POST', path: '/v1/auth/sessions/revoke-all/challenge', bearer: true })
  }

  /** Submits a signed challenge; needs no session. Answers how many sessions ended. */
  async revokeAll(challenge: string, proof: string): Promise<number> {
    const answer = await this.#json<Static<typeof RevokeAllResponse>>({ method: 'POST', path: '/v1/auth/sessions/revoke-all', json: { challenge, proof } })
    return answer.revoked
  }

  /**
   * The whole ceremony: a challenge on this session, signed with the identity key, submitted.
   * Every session ends, this one included, so the client forgets its tokens.
   */
  async revokeAllSessions(identityKey: IdentityKey): Promise<number> {
    const { user_id: userId } = await this.getProfile()
    const { challenge } = await this.revokeAllChallenge()
    const revoked = await this.revokeAll(challenge, await identityKey.proveRevokeAll(userId, challenge))
    this.tokens = null
    return revoked
  }

  // --- device enrollment -------------------------------------------------------------------

  /** Needs a recent sign-in or reauthenticate (403 error.auth.reauthentication_required otherwise). */
  issueEnrollmentCode(): Promise<EnrollmentCode> {
    return this.#json({ method: 'POST', path: '/v1/auth/devices/enroll/code', bearer: true })
  }

  /** Needs no session: the code (either spelling) is the credential. */
  redeemEnrollmentCode(code: string): Promise<Channel> {
    return this.#json({ method: 'POST', path: '/v1/auth/devices/enroll/redeem', json: { code } })
  }

  relay(channelId: string, direction: RelayDirection, payload: string): Promise<void> {
    return this.#empty({ method: 'POST', path: `/v1/auth/devices/enroll/channel/${encodeURIComponent(channelId)}`, json: { direction, payload } })
  }

  async drain(channelId: string, direction: RelayDirection): Promise<string[]> {
    const answer = await this.#json<Static<typeof DrainResponse>>({
      method: 'GET',
      path: `/v1/auth/devices/enroll/channel/${encodeURIComponent(channelId)}?direction=${direction}`,
    })
    return answer.payloads
  }

  /** The initiator (the account that issued the code) closes the channel. */
  closeChannel(channelId: string): Promise<void> {
    return this.#empty({ method: 'DELETE', path: `/v1/auth/devices/enroll/channel/${encodeURIComponent(channelId)}`, bearer: true })
  }

  /** One end of an enrollment channel: the initiator (existing device) or the enrollee (new device). */
  enrollmentChannel(channelId: string, role: 'initiator' | 'enrollee'): EnrollmentChannelEnd {
    const outbound: RelayDirection = role === 'initiator' ? 'to_enrollee' : 'to_initiator'
    const inbound: RelayDirection = role === 'initiator' ? 'to_initiator' : 'to_enrollee'
    return {
      channelId,
      role,
      send: (payload) => this.relay(channelId, outbound, payload),
      receive: () => this.drain(channelId, inbound),
      close: () => this.closeChannel(channelId),
    }
  }

  // --- escrow ------------------------------------------------------------------------------

  storeEscrow(wrappedMasterKey: Uint8Array): Promise<StoredEscrow> {
    return this.#json({ method: 'PUT', path: '/v1/escrow', bytes: wrappedMasterKey, contentType: 'application/octet-stream', bearer: true })
  }

  async fetchEscrow(): Promise<Uint8Array> {
    return new Uint8Array(await (await this.#request({ method: 'GET', path: '/v1/escrow', bearer: true })).arrayBuffer())
  }

  // --- albums ------------------------------------------------------------------------------

  /** `created` is true on the first provision (201), false when this account already held it (200). */
  provisionAlbum(albumId: string): Promise<Album> {
    return this.#json({ method: 'POST', path: '/v1/albums', json: { album_id: albumId }, bearer: true })
  }

  listAlbums(): Promise<AlbumList> {
    return this.#json({ method: 'GET', path: '/v1/albums', bearer: true })
  }

  /** The album's feed; a link's client reads its linked album's (whatever `albumId` says). */
  feed(albumId: string, after = 0, limit = 100): Promise<Feed> {
    const base = this.#link === undefined ? `/v1/albums/${encodeURIComponent(albumId)}` : `/v1/links/${this.#link.linkId}`
    return this.#json({ method: 'GET', path: `${base}/feed?after=${after}&limit=${limit}`, bearer: true })
  }

  applyManifest(albumId: string, write: LifecycleWrite): Promise<OpResult> {
    return this.#json({ method: 'POST', path: `/v1/albums/${encodeURIComponent(albumId)}/ops`, json: write, bearer: true })
  }

  /**
   * Deletes an asset with a signed `delete` manifest (`buildAssetDeletion` makes one): the feed
   * gains the delete, the asset's blobs stop downloading and become garbage unless a legal hold
   * keeps them. 409 `error.asset.retained` while its retention floor is ahead; sending the same
   * request again after a lost answer gives `replayed: true`.
   */
  deleteAsset(albumId: string, fileId: string, deletion: AssetDeletion): Promise<OpResult> {
    return this.#json({
      method: 'POST',
      path: `/v1/albums/${encodeURIComponent(albumId)}/assets/${encodeURIComponent(fileId)}/delete`,
      json: deletion,
      bearer: true,
    })
  }

  /**
   * Puts an asset in the trash with the same signed `delete` request `deleteAsset` takes: the
   * server holds it until `purge_at` and then applies it; the asset stays live meanwhile. The
   * same request again answers the same entry (decision 0059).
   */
  trashAsset(albumId: string, fileId: string, deletion: AssetDeletion): Promise<Trashed> {
    return this.#json({
      method: 'POST',
      path: `/v1/albums/${encodeURIComponent(albumId)}/assets/${encodeURIComponent(fileId)}/trash`,
      json: deletion,
      bearer: true,
    })
  }

  /** Takes an asset out of the trash (404 when it is not there). */
  restoreAsset(albumId: string, fileId: string): Promise<void> {
    return this.#empty({
      method: 'DELETE',
      path: `/v1/albums/${encodeURIComponent(albumId)}/assets/${encodeURIComponent(fileId)}/trash`,
      bearer: true,
    })
  }

  /** One page of the caller's trash after `after` (a trash_seq; 0 for the first page), at most `limit` (the server's 200 unless given). */
  trashPage(after = 0, limit?: number): Promise<Trash> {
    return this.#json({ method: 'GET', path: `/v1/trash?after=${after}${limit === undefined ? '' : `&limit=${limit}`}`, bearer: true })
  }

  // --- sharing (decision 0067; docs/sharing.md) ---------------------------------------------

  /** The user id of the account with this email (404 when none; 429 past the lookups' budget). */
  async lookupAccount(email: string): Promise<string> {
    return (await this.#json<{ user_id: string }>({ method: 'POST', path: '/v1/accounts/lookup', json: { email }, bearer: true })).user_id
  }

  /** Invites an account into the caller's album with what the caller's client sealed for it (`invitation`, handed to it byte for byte). */
  inviteMember(albumId: string, userId: string, role: AlbumMemberRole, invitation: Uint8Array): Promise<AlbumMember> {
    return this.#json({
      method: 'POST',
      path: `/v1/albums/${encodeURIComponent(albumId)}/members`,
      json: { user_id: userId, role, invitation: toBase64(invitation) },
      bearer: true,
    })
  }

  /** The album's owner and members (invitees to the owner only). */
  listMembers(albumId: string): Promise<AlbumMembers> {
    return this.#json({ method: 'GET', path: `/v1/albums/${encodeURIComponent(albumId)}/members`, bearer: true })
  }

  /** The owner removes a member or takes an invitation back; a member passes its own user id to leave. */
  removeMember(albumId: string, userId: string): Promise<void> {
    return this.#empty({ method: 'DELETE', path: `/v1/albums/${encodeURIComponent(albumId)}/members/${encodeURIComponent(userId)}`, bearer: true })
  }

  /** The invitations waiting for this account's answer. */
  listInvitations(): Promise<Invitations> {
    return this.#json({ method: 'GET', path: '/v1/invitations', bearer: true })
  }

  acceptInvitation(albumId: string): Promise<AcceptedInvitation> {
    return this.#json({ method: 'POST', path: `/v1/invitations/${encodeURIComponent(albumId)}/accept`, bearer: true })
  }

  declineInvitation(albumId: string): Promise<void> {
    return this.#empty({ method: 'POST', path: `/v1/invitations/${encodeURIComponent(albumId)}/decline`, bearer: true })
  }

  /** The owner replaces what its client sealed for a member or invitee (a new epoch, new devices). */
  replaceInvitation(albumId: string, userId: string, invitation: Uint8Array): Promise<void> {
    return this.#empty({
      method: 'PUT',
      path: `/v1/albums/${encodeURIComponent(albumId)}/members/${encodeURIComponent(userId)}/invitation`,
      json: { invitation: toBase64(invitation) },
      bearer: true,
    })
  }

  /** What this account, a member, holds of a shared album: its role, the owner's latest sealing, its own keyring. */
  readMembership(albumId: string): Promise<Membership> {
    return this.#json({ method: 'GET', path: `/v1/albums/${encodeURIComponent(albumId)}/membership`, bearer: true })
  }

  /** Stores this member's keyring of the album (its own sealing of the keys it received). */
  storeKeyring(albumId: string, keyring: Uint8Array): Promise<void> {
    return this.#empty({ method: 'PUT', path: `/v1/albums/${encodeURIComponent(albumId)}/keyring`, json: { keyring: toBase64(keyring) }, bearer: true })
  }

  /** The albums shared with this account, with its role in each (`listAlbums` stays the ones it owns). */
  listSharedAlbums(): Promise<SharedAlbums> {
    return this.#json({ method: 'GET', path: '/v1/shared-albums', bearer: true })
  }

  /** The accounts this account shares every album with (`partners`), and those sharing every album with it (`partner_of`). */
  listPartners(): Promise<Partners> {
    return this.#json({ method: 'GET', path: '/v1/partners', bearer: true })
  }

  /** Names an account a partner: this account's clients share every album with it, the new ones too. */
  setPartner(userId: string, role: AlbumMemberRole): Promise<PartnerView> {
    return this.#json({ method: 'PUT', path: `/v1/partners/${encodeURIComponent(userId)}`, json: { role }, bearer: true })
  }

  removePartner(userId: string): Promise<void> {
    return this.#empty({ method: 'DELETE', path: `/v1/partners/${encodeURIComponent(userId)}`, bearer: true })
  }

  // --- public links (decision 0068; docs/sharing.md "Public links") --------------------------

  /** Makes a link to an album of this account (or to some of its photos): the client made its id, secret and envelope. */
  createLink(albumId: string, link: NewLink): Promise<LinkView> {
    return this.#json({ method: 'POST', path: `/v1/albums/${encodeURIComponent(albumId)}/links`, json: link, bearer: true })
  }

  /** This account's links (of one album), newest first, with how often each was opened. */
  listLinks(albumId?: string): Promise<LinkList> {
    const query = albumId === undefined ? '' : `?album_id=${encodeURIComponent(albumId)}`
    return this.#json({ method: 'GET', path: `/v1/links${query}`, bearer: true })
  }

  revokeLink(linkId: string): Promise<void> {
    return this.#empty({ method: 'POST', path: `/v1/links/${encodeURIComponent(linkId)}/revoke`, bearer: true })
  }

  replaceLinkEnvelope(linkId: string, envelope: string): Promise<void> {
    return this.#empty({ method: 'PUT', path: `/v1/links/${encodeURIComponent(linkId)}/envelope`, json: { envelope }, bearer: true })
  }

  /** What opening a link takes (no account needed): whether it asks a password, and its argon2id parameters. */
  probeLink(linkId: string): Promise<LinkProbe> {
    return this.#json({ method: 'GET', path: `/v1/links/${encodeURIComponent(linkId)}` })
  }

  /** Opens a link with the access token its secret (and password) derive: a session for `new CofferClient({link})`. */
  openLink(linkId: string, token: string): Promise<OpenedLink> {
    return this.#json({ method: 'POST', path: `/v1/links/${encodeURIComponent(linkId)}/open`, json: { token } })
  }

  // --- uploads -----------------------------------------------------------------------------

  openUploadSession(declaration: OpenUpload): Promise<UploadSessionView> {
    return this.#json({ method: 'POST', path: '/v1/upload', json: declaration, bearer: true })
  }

  uploadSessionStatus(uploadId: string): Promise<UploadSessionView> {
    return this.#json({ method: 'GET', path: `/v1/upload/${encodeURIComponent(uploadId)}`, bearer: true })
  }

  abortUploadSession(uploadId: string): Promise<void> {
    return this.#empty({ method: 'DELETE', path: `/v1/upload/${encodeURIComponent(uploadId)}`, bearer: true })
  }

  /** What the account stores and has declared, against the storage quota and the cap on open upload sessions. */
  storageUsage(): Promise<StorageUsage> {
    return this.#json({ method: 'GET', path: '/v1/storage/usage', bearer: true })
  }

  /** Sends one declared blob: bytes in memory, or any async iterable of chunks (streamed, e.g. a file). */
  putBlob(uploadId: string, hash: string, bytes: Uint8Array | AsyncIterable<Uint8Array>): Promise<void> {
    return this.#empty({
      method: 'PUT',
      path: `/v1/upload/${encodeURIComponent(uploadId)}/blobs/${hash}`,
      bytes,
      contentType: 'application/octet-stream',
      bearer: true,
    })
  }

  /**
   * Sends one part of a declared blob (a large one, so that an interrupted upload continues
   * where it stopped): bytes `start` to `start + bytes.length - 1` of the blob's `total`, with
   * Content-Range and the part's Content-Digest. Parts go in order from what the server holds
   * (`received` in the session's status), each but the last at least 1 MiB; the part that ends
   * the blob makes the server check the whole against its hash and store it. Answers the bytes
   * the server now holds (Upload-Offset). A part that does not start there is refused with 409
   * `error.upload.offset_mismatch`, whose `received` says where the server is. `digest` is the
   * part's SHA-256 when the caller has it (a native hash is many times faster than this one).
   * `blobDigest`, on the part that ends the blob, is the whole blob's SHA-256 (Repr-Digest): when
   * it is not `hash`, `hash` was a provisional name (the blob was declared before its bytes were
   * known, to be sent as they are read) and the server stores the blob under its real hash,
   * which the session then declares instead.
   */
  async putBlobPart(
    uploadId: string,
    hash: string,
    start: number,
    total: number,
    bytes: Uint8Array,
    options: { readonly digest?: Uint8Array; readonly blobDigest?: Uint8Array } = {},
  ): Promise<number> {
    const response = await this.#request({
      method: 'PUT',
      path: `/v1/upload/${encodeURIComponent(uploadId)}/blobs/${hash}`,
      bytes,
      contentType: 'application/octet-stream',
      bearer: true,
      headers: {
        'content-range': `bytes ${start}-${start + bytes.length - 1}/${total}`,
        'content-digest': `sha-256=:${toBase64(options.digest ?? sha256(bytes))}:`,
        ...(options.blobDigest === undefined ? {} : { 'repr-digest': `sha-256=:${toBase64(options.blobDigest)}:` }),
      },
    })
    await response.body?.cancel()
    return Number(response.headers.get('upload-offset') ?? start + bytes.length)
  }

  /**
   * Uploads one asset end to end: hashes the bytes, opens a session, sends only the blobs the
   * server does not already hold for this account, then applies the `create` manifest that
   * `sign` builds for those hashes (`manifestSigner` makes one). `manifestHash` is the asset's
   * chain head, which a later `replace` names as its `prior_provenance_hash`.
   */
  async uploadAsset(asset: AssetUpload): Promise<OpResult & { uploadId: string; sent: number; manifestHash: string }> {
    const derivatives = asset.derivatives ?? []
    const hashes: BundleHashes = {
      ciphertextHash: sha256Hex(asset.original),
      derivativeHashes: derivatives.map(sha256Hex),
      metadataBlobHash: asset.metadata === undefined ? null : sha256Hex(asset.metadata),
    }
    const bytesByHash = new Map<string, Uint8Array>([
      [hashes.ciphertextHash, asset.original],
      ...derivatives.map((bytes, i) => [hashes.derivativeHashes[i] ?? '', bytes] as const),
    ])
    const session = await this.openUploadSession({
      album_id: asset.albumId,
      crypto_suite_id: asset.cryptoSuiteId,
      ciphertext_hash: hashes.ciphertextHash,
      blobs: [...bytesByHash].map(([hash, bytes]) => ({
        role: hash === hashes.ciphertextHash ? ('original' as const) : ('derivative' as const),
        hash,
        size: bytes.length,
      })),
    })
    const missing = session.blobs.filter((blob) => !blob.present)
    for (const blob of missing) await this.putBlob(session.upload_id, blob.hash, bytesByHash.get(blob.hash) ?? new Uint8Array())
    const { envelope, manifestCbor } = await asset.sign(hashes)
    const result = await this.applyManifest(asset.albumId, {
      manifest_envelope: envelope,
      manifest_cbor: toBase64(manifestCbor),
      metadata_blob: asset.metadata === undefined ? null : toBase64(asset.metadata),
    })
    return { ...result, uploadId: session.upload_id, sent: missing.length, manifestHash: sha256Hex(manifestCbor) }
  }

  /** A blob's bytes; `range` asks for bytes start..end inclusive (206). */
  async downloadBlob(hash: string, range?: { start: number; end: number }): Promise<Uint8Array> {
    const response = await this.#request({
      method: 'GET',
      path: `${this.#blobsPath}/${hash}`,
      bearer: true,
      ...(range ? { headers: { range: `bytes=${range.start}-${range.end}` } } : {}),
    })
    return new Uint8Array(await response.arrayBuffer())
  }

  /**
   * Many blobs in few requests (POST /v1/blobs/batch): at most BLOB_BATCH_MAX_HASHES (100) hashes
   * a request, one request after another. A hash the server leaves out of a batch for its byte
   * budget (413) is asked for again in a next batch; one larger than the whole budget (413
   * before anything of its batch was served) is fetched alone with `downloadBlob`. Refusals (404,
   * 451) are answers, not errors; anything else (401 past a refresh, 503, a network failure)
   * throws as the other calls do.
   */
  async downloadBlobs(hashes: Iterable<string>): Promise<DownloadedBlobs> {
    const result: DownloadedBlobs = { blobs: new Map(), refused: new Map() }
    const queue = [...new Set(hashes)]
    while (queue.length > 0) {
      const batch = queue.splice(0, BLOB_BATCH_MAX_HASHES)
      const later: string[] = []
      let served = false
      for (const item of await this.#blobBatch(batch)) {
        if (item.status === 200) {
          served = true
          result.blobs.set(item.hash, item.bytes)
        } else if (item.status === 413 && served) later.push(item.hash)
        else if (item.status === 413) await this.#downloadAlone(item.hash, result)
        else result.refused.set(item.hash, { status: item.status, code: item.code })
      }
      // Those the budget left out go first in the next batch: they were asked for first.
      queue.unshift(...later)
    }
    return result
  }

  /**
   * One batch request, its answer checked to be one item per hash in the order asked. While the
   * account or the server has as many batches in flight as it allows (429 `error.batch.too_many`,
   * 503 `error.batch.server_busy`), it is asked again after Retry-After, up to BATCH_BUSY_TRIES
   * times in all: a batch is a read, and the wait is the server's own estimate.
   */
  async #blobBatch(hashes: readonly string[]): Promise<BatchItem[]> {
    const response = await this.#batchRequest(hashes)
    const items = decodeStrict(new Uint8Array(await response.arrayBuffer()))
    if (!Array.isArray(items) || items.length !== hashes.length || !items.every((item, i) => isBatchItem(item) && item.hash === hashes[i])) {
      throw new Error('the batch answer does not match the hashes asked for')
    }
    return items as BatchItem[]
  }

  async #batchRequest(hashes: readonly string[]): Promise<Response> {
    for (let tried = 1; ; tried++) {
      try {
        return await this.#request({ method: 'POST', path: `${this.#blobsPath}/batch`, json: { hashes }, bearer: true })
      } catch (error) {
        const busy = error instanceof CofferProblem && BATCH_BUSY_CODES.has(error.code) && error.retryAfterS !== null
        if (!busy || tried >= BATCH_BUSY_TRIES) throw error
        await new Promise((resolve) => setTimeout(resolve, (error.retryAfterS ?? 0) * 1000))
      }
    }
  }

  /** A blob larger than a batch's whole budget, by the single download; its refusal is recorded as a batch's would be. */
  async #downloadAlone(hash: string, result: DownloadedBlobs): Promise<void> {
    try {
      result.blobs.set(hash, await this.downloadBlob(hash))
    } catch (error) {
      if (!(error instanceof CofferProblem) || (error.status !== 404 && error.status !== 451)) throw error
      result.refused.set(hash, { status: error.status, code: error.code })
    }
  }

  /**
   * A blob's bytes as they arrive, without holding the whole blob: an async iterable of chunks
   * (read through the body's reader, so it works where ReadableStream is not async iterable).
   * The request is made (and a problem thrown) before the iterable is returned.
   */
  async downloadBlobStream(hash: string): Promise<AsyncIterable<Uint8Array>> {
    const response = await this.#request({ method: 'GET', path: `${this.#blobsPath}/${hash}`, bearer: true })
    const body = response.body
    return (async function* () {
      if (body === null) return
      const reader = body.getReader()
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return
          yield value
        }
      } finally {
        await reader.cancel().catch(() => {})
        reader.releaseLock()
      }
    })()
  }

  // --- account export ----------------------------------------------------------------------

  /**
   * Everything the server holds about the account (profile, second factor status, sessions,
   * cohorts, security events, moderation record, every album's feed and receipts) as one JSON
   * document, streamed: see AccountExportDownload. The request is made (and a problem thrown,
   * e.g. 429 error.rate_limited past the account's export budget) before it returns.
   */
  async exportAccount(): Promise<AccountExportDownload> {
    const response = await this.#request({ method: 'GET', path: '/v1/account/export', bearer: true })
    if (response.body === null) throw new Error('the export answer has no body')
    return { fileName: attachmentName(response.headers.get('content-disposition')) ?? 'coffer-export.json', body: response.body }
  }

  // --- upgrade ceremony --------------------------------------------------------------------

  readUpgrade(albumId: string): Promise<UpgradePhase> {
    return this.#json({ method: 'GET', path: `/v1/albums/${encodeURIComponent(albumId)}/upgrade`, bearer: true })
  }

  /** `intent` is the CBOR intent (a map with intent_id and to_protocol_version). */
  startUpgrade(albumId: string, intent: Uint8Array): Promise<UpgradePhase> {
    return this.#json({
      method: 'POST',
      path: `/v1/albums/${encodeURIComponent(albumId)}/upgrade`,
      bytes: intent,
      contentType: 'application/cbor',
      bearer: true,
    })
  }

  abortUpgrade(albumId: string, intentId: string): Promise<UpgradePhase> {
    return this.#json({ method: 'DELETE', path: `/v1/albums/${encodeURIComponent(albumId)}/upgrade?intent_id=${encodeURIComponent(intentId)}`, bearer: true })
  }

  // --- custody and moderation ------------------------------------------------------------

  /** Structural verdicts (and, with `deep`, re-hashed bytes) for blobs the client may stop holding. */
  verifyStorage(request: StorageVerification): Promise<StorageVerdicts> {
    return this.#json({ method: 'POST', path: '/v1/storage/verify', json: request, bearer: true })
  }

  /**
   * One page of an asset's receipts: those numbered after `after` (a receipt_seq, 0 for the
   * first page), at most `limit` (1-1000; the server's 200 unless given). A shorter page is the last.
   */
  assetReceiptsPage(assetId: string, after = 0, limit?: number): Promise<AssetReceipts> {
    const query = `after=${after}${limit === undefined ? '' : `&limit=${limit}`}`
    return this.#json({ method: 'GET', path: `/v1/assets/${encodeURIComponent(assetId)}/receipts?${query}`, bearer: true })
  }

  /**
   * Every receipt of an asset, replaced bundles included, in receipt_seq order: page after page
   * of `pageSize` (RECEIPTS_PAGE_SIZE unless given) until a shorter one, each asked for after the
   * last receipt received (not after what the server says is next, so it cannot skip any). The
   * whole list is what `verifyReceipts` checks as one chain.
   */
  async assetReceipts(assetId: string, options: { readonly pageSize?: number } = {}): Promise<AssetReceipts> {
    const pageSize = options.pageSize ?? RECEIPTS_PAGE_SIZE
    const receipts: AssetReceipts['receipts'] = []
    for (let after = 0; ; ) {
      const page = await this.assetReceiptsPage(assetId, after, pageSize)
      receipts.push(...page.receipts)
      const last = page.receipts.at(-1)
      if (last === undefined || page.receipts.length < pageSize) return { asset_id: page.asset_id, receipts, next_after: last?.receipt_seq ?? after }
      after = last.receipt_seq
    }
  }

  /** The keys that sign receipts (no credential needed). Check receipts with `verifyReceipts` (sdk/receipts.ts). */
  attestationKeys(): Promise<AttestationKeys> {
    return this.#json({ method: 'GET', path: '/.well-known/service/attestation-keys' })
  }

  moderationRecord(): Promise<ModerationRecord> {
    return this.#json({ method: 'GET', path: '/v1/moderation/record', bearer: true })
  }

  commitUpgrade(albumId: string, intentId: string, tombstone: Uint8Array): Promise<UpgradePhase> {
    return this.#json({
      method: 'POST',
      path: `/v1/albums/${encodeURIComponent(albumId)}/upgrade/commit?intent_id=${encodeURIComponent(intentId)}`,
      bytes: tombstone,
      contentType: 'application/cbor',
      bearer: true,
    })
  }
}

export interface EnrollmentChannelEnd {
  readonly channelId: string
  readonly role: 'initiator' | 'enrollee'
  /** Posts to the other end's mailbox. */
  send(payload: string): Promise<void>
  /** Takes everything the other end has sent since the last receive, in order. */
  receive(): Promise<string[]>
  /** Initiator only (needs its session). */
  close(): Promise<void>
}
