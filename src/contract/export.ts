// The account export (issue 17): everything the server holds about an account, as one JSON
// document for the person's records. Each section is the wire shape of the route that shows it
// (docs/export.md, docs/decisions/0028-account-export.md).
import Type from 'typebox'
import { AlbumView, FeedEntry } from './albums.ts'
import { Timestamp, Uuid } from './common.ts'
import { AssetReceipt, ModerationRecordResponse, SecondFactorStatus } from './custody.ts'
import { ProfileResponse } from './profile.ts'
import { CohortView, SecurityEventView, SessionView } from './sessions.ts'

export const EXPORT_FORMAT = 'coffer-export/v1'

export const ReceiptsByAsset = Type.Record(Uuid, Type.Array(AssetReceipt), {
  description:
    'By asset id, in asset id order: the receipts of each asset of the album issued before the export began, as GET /v1/assets/{asset_id}/receipts shows them',
})

export const ExportedAlbum = Type.Object({
  ...AlbumView.properties,
  feed: Type.Array(FeedEntry, {
    description: 'Every entry of the album’s feed up to its position when the export began, oldest first, as GET /v1/albums/{album_id}/feed shows them',
  }),
  receipts: ReceiptsByAsset,
})

export const AccountExport = Type.Object({
  format: Type.Literal(EXPORT_FORMAT, { description: 'This layout; a later one has another name' }),
  exported_at: Timestamp,
  profile: ProfileResponse,
  second_factor: SecondFactorStatus,
  sessions: Type.Array(SessionView, {
    description: 'Every live session, oldest first, as GET /v1/auth/sessions shows them (`current`: the session that exported)',
  }),
  cohorts: Type.Array(CohortView, { description: 'Every cohort ever seen, as GET /v1/auth/sessions shows them' }),
  security_events: Type.Array(SecurityEventView, { description: 'As GET /v1/auth/security-events shows them' }),
  moderation: ModerationRecordResponse,
  albums: Type.Array(ExportedAlbum, { description: 'Every album of the account, oldest first' }),
})
