// THE error catalog: every `code` the service can answer, with its status and title.
// docs/errors.md lists exactly these (test/architecture/errors-doc.test.ts keeps them equal).
import Type, { type TSchema } from 'typebox'

export const errorCatalog = {
  'error.request.malformed': { status: 400, title: 'Malformed request' },
  'error.directory.malformed': { status: 400, title: 'Malformed device directory' },
  'error.escrow.malformed': { status: 400, title: 'Malformed escrow' },
  'error.auth.unauthenticated': { status: 401, title: 'Authentication required' },
  'error.auth.invalid_credentials': { status: 401, title: 'Invalid email or password' },
  'error.auth.session_expired': { status: 401, title: 'Session expired' },
  'error.auth.challenge_expired': { status: 401, title: 'Second-factor challenge expired' },
  'error.auth.invalid_code': { status: 401, title: 'Invalid second-factor code' },
  'error.auth.proof_required': { status: 401, title: 'Identity-key proof required' },
  'error.auth.reauthentication_required': { status: 403, title: 'Recent sign-in required' },
  'error.auth.second_factor_required': { status: 403, title: 'Second-factor code required' },
  'error.account.suspended': { status: 403, title: 'Account suspended' },
  'error.member.read_only': { status: 403, title: 'Viewer of the album' },
  'error.member.not_creator': { status: 403, title: 'Another member’s photo' },
  'error.link.denied': { status: 403, title: 'Wrong link or password' },
  'error.not_found': { status: 404, title: 'Not found' },
  'error.enroll.code_refused': { status: 404, title: 'Enrollment code refused' },
  'error.enroll.channel_not_found': { status: 404, title: 'Enrollment channel not found' },
  'error.request.method_not_allowed': { status: 405, title: 'Method not allowed' },
  'error.request.timeout': { status: 408, title: 'Request timeout' },
  'error.auth.account_exists': { status: 409, title: 'Account already exists' },
  'error.totp.already_active': { status: 409, title: 'Second factor already active' },
  'error.totp.nothing_pending': { status: 409, title: 'No second-factor enrollment pending' },
  'error.totp.not_enrolled': { status: 409, title: 'Second factor not enrolled' },
  'error.directory.version_conflict': { status: 409, title: 'Directory version conflict' },
  'error.directory.identity_key_mismatch': { status: 409, title: 'Identity key mismatch' },
  'error.directory.required': { status: 409, title: 'Device directory required' },
  'error.upgrade.in_flight': { status: 409, title: 'Upgrade in flight' },
  'error.upgrade.not_quiescent': { status: 409, title: 'Uploads still in flight' },
  'error.op.stale_revival': { status: 409, title: 'Stale chain position' },
  'error.asset.retained': { status: 409, title: 'Asset retained' },
  'error.asset.trashed': { status: 409, title: 'Asset in the trash' },
  'error.member.exists': { status: 409, title: 'Already invited or a member' },
  'error.member.too_many_invitations': { status: 409, title: 'Too many invitations outstanding' },
  'error.member.too_many_partners': { status: 409, title: 'Too many partners' },
  'error.link.exists': { status: 409, title: 'Link id taken' },
  'error.link.too_many': { status: 409, title: 'Too many links' },
  'error.moderation.state_conflict': { status: 409, title: 'Moderation state unchanged' },
  'error.upload.offset_mismatch': { status: 409, title: 'Part offset mismatch' },
  'error.link.expired': { status: 410, title: 'Link expired' },
  'error.link.revoked': { status: 410, title: 'Link revoked' },
  'error.link.disabled': { status: 410, title: 'Link disabled' },
  'error.link.used_up': { status: 410, title: 'Link opened as often as allowed' },
  'error.request.precondition_failed': { status: 412, title: 'Precondition failed' },
  'error.request.too_large': { status: 413, title: 'Request body too large' },
  'error.request.unsupported_media_type': { status: 415, title: 'Unsupported media type' },
  'error.request.range_not_satisfiable': { status: 416, title: 'Range not satisfiable' },
  'error.request.expectation_failed': { status: 417, title: 'Expectation failed' },
  'error.request.invalid': { status: 422, title: 'Invalid request' },
  'error.totp.invalid_code': { status: 422, title: 'Invalid authenticator code' },
  'error.directory.identity_key_invalid': { status: 422, title: 'Invalid identity key' },
  'error.enroll.mailbox_full': { status: 422, title: 'Mailbox full' },
  'error.album.id_unavailable': { status: 422, title: 'Album id unavailable' },
  'error.upload.hash_mismatch': { status: 422, title: 'Blob bytes do not match' },
  'error.op.bundle_incomplete': { status: 422, title: 'Bundle incomplete' },
  'error.auth.account_locked': { status: 423, title: 'Account locked' },
  'error.protocol.out_of_range': { status: 426, title: 'Protocol version out of range' },
  'error.rate_limited': { status: 429, title: 'Too many attempts' },
  'error.batch.too_many': { status: 429, title: 'Too many batch downloads at once' },
  'error.request.headers_too_large': { status: 431, title: 'Request headers too large' },
  'error.moderation.taken_down': { status: 451, title: 'Unavailable for legal reasons' },
  'error.internal': { status: 500, title: 'Internal server error' },
  'error.unavailable': { status: 503, title: 'Service unavailable' },
  'error.batch.server_busy': { status: 503, title: 'Server busy with batch downloads' },
  'error.quota.exceeded': { status: 507, title: 'Storage quota exceeded' },
  'error.quota.too_many_uploads': { status: 507, title: 'Too many open upload sessions' },
  'error.storage.full': { status: 507, title: 'Storage full' },
  'error.storage.failing': { status: 507, title: 'Storage failing' },
} as const satisfies Record<string, { status: number; title: string }>

export type ErrorCode = keyof typeof errorCatalog

export const errorCodes = Object.keys(errorCatalog) as ErrorCode[]

/** `type` of a problem: a URI reference naming the code (API.md section 1). */
export function problemType(code: ErrorCode): string {
  return `/problems/${code.slice('error.'.length)}`
}

const problemFields = {
  type: Type.String({ description: 'URI reference naming the code, e.g. /problems/auth.invalid_credentials' }),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String({ description: 'English explanation of this occurrence' }),
  instance: Type.String({ description: 'The request path this problem answers' }),
  code: Type.String({ description: 'Stable error.* catalog code, for clients to localize' }),
}

export const CodedProblem = Type.Object(problemFields, {
  description: 'RFC 9457 problem details (application/problem+json)',
})

export const DirectoryConflictProblem = Type.Object(
  {
    ...problemFields,
    submitted: Type.Integer({ description: 'The directory_version submitted' }),
    stored: Type.Integer({ description: 'The directory_version stored; re-sign above it' }),
  },
  { description: 'CodedProblem of error.directory.version_conflict' },
)

export const StaleRevivalProblem = Type.Object(
  {
    ...problemFields,
    chain_head: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'The manifest hash the asset’s chain is at; absent when this album holds no such asset' }),
    ),
  },
  { description: 'CodedProblem of error.op.stale_revival' },
)

export const AssetRetainedProblem = Type.Object(
  {
    ...problemFields,
    retained_until: Type.String({ format: 'date-time', description: 'The asset’s retention floor (RFC 3339, UTC): it cannot be deleted before then' }),
  },
  { description: 'CodedProblem of error.asset.retained' },
)

export const ProtocolRangeProblem = Type.Object(
  {
    ...problemFields,
    protocol_min: Type.String({ description: 'Oldest version accepted here (YYYY-MM-DD)' }),
    protocol_max: Type.String({ description: 'Newest version spoken (YYYY-MM-DD)' }),
  },
  { description: 'CodedProblem of error.protocol.out_of_range' },
)

export const QuotaExceededProblem = Type.Object(
  {
    ...problemFields,
    quota_bytes: Type.Integer({ description: 'ACCOUNT_QUOTA_BYTES: what the account may store and declare' }),
    used_bytes: Type.Integer({ description: 'What it stores and its open upload sessions declare, before this one' }),
    requested_bytes: Type.Integer({ description: 'What this session would add: its declared blobs the account neither stores nor declares already' }),
  },
  { description: 'CodedProblem of error.quota.exceeded' },
)

export const OffsetMismatchProblem = Type.Object(
  {
    ...problemFields,
    received: Type.Integer({ description: 'The bytes of the blob the server holds (also the Upload-Offset header): the next part starts there' }),
  },
  { description: 'CodedProblem of error.upload.offset_mismatch' },
)

/** Problems that carry members beyond CodedProblem, by code (for the OpenAPI document). */
export const extendedProblems: Partial<Record<ErrorCode, TSchema>> = {
  'error.directory.version_conflict': DirectoryConflictProblem,
  'error.op.stale_revival': StaleRevivalProblem,
  'error.asset.retained': AssetRetainedProblem,
  'error.protocol.out_of_range': ProtocolRangeProblem,
  'error.quota.exceeded': QuotaExceededProblem,
  'error.upload.offset_mismatch': OffsetMismatchProblem,
}
