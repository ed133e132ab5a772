// Checks of a manifest envelope that the schema cannot make (API.md section 6, checks 2 and
// 4), shared by lifecycle writes (asset deletion included) and upload sessions that carry an envelope.
import type { Static } from 'typebox'
import type { DeleteManifestEnvelope, ManifestEnvelope } from '../../contract/albums.ts'
import type { Deps } from '../../deps.ts'
import { checkProtocol, isProtocolDate } from '../../domain/protocol.ts'
import { AppError } from '../../errors.ts'
import type { Album } from '../../storage/port/albums.ts'

type WireEnvelope = Static<typeof ManifestEnvelope> | Static<typeof DeleteManifestEnvelope>
type NullableField = 'album_id' | 'metadata_blob_hash' | 'original_blob_hash' | 'prior_provenance_hash' | 'retention_until'

/** An envelope as the checks read it: SPEC.md's "T | null" fields, absent ones included, as null. */
export type Envelope = Omit<WireEnvelope, NullableField> & { readonly [K in NullableField]-?: Exclude<WireEnvelope[K], undefined> }

export function readEnvelope(wire: WireEnvelope): Envelope {
  return {
    ...wire,
    album_id: wire.album_id ?? null,
    metadata_blob_hash: wire.metadata_blob_hash ?? null,
    original_blob_hash: wire.original_blob_hash ?? null,
    prior_provenance_hash: wire.prior_provenance_hash ?? null,
    retention_until: wire.retention_until ?? null,
  }
}

/** Shape beyond the schema: the album and the author are the operation's own. */
export function checkEnvelopeShape(envelope: Envelope, albumId: string, callerId: string): void {
  const refuse = (detail: string) => new AppError('error.request.invalid', detail)
  if (envelope.album_id !== albumId) throw refuse('manifest_envelope.album_id must equal the album of the operation')
  if (envelope.created_by_user !== callerId) throw refuse('manifest_envelope.created_by_user must be the caller’s user_id')
  if (!isProtocolDate(envelope.protocol_version)) throw refuse('manifest_envelope.protocol_version must be a date YYYY-MM-DD')
}

/** 426 ProtocolRangeProblem when the envelope speaks a version this album no longer (or not yet) accepts. */
export function checkEnvelopeProtocol(deps: Deps, envelope: Envelope, album: Album): void {
  const verdict = checkProtocol(envelope.protocol_version, deps.config.protocol, album.protocolVersion)
  if (!verdict.accepted) {
    throw new AppError(
      'error.protocol.out_of_range',
      `protocol_version ${envelope.protocol_version} is outside ${verdict.protocolMin}..${verdict.protocolMax} for this album`,
      {
        extensions: { protocol_min: verdict.protocolMin, protocol_max: verdict.protocolMax },
      },
    )
  }
}

/** Strict standard base64 (with padding); null when the text is not exactly that. */
export function strictBase64(text: string): Buffer | null {
  const bytes = Buffer.from(text, 'base64')
  return bytes.toString('base64') === text ? bytes : null
}

/** Sealed bytes a client sends (an invitation, a keyring, a link's envelope): strict standard base64 of 1 to `max` bytes, else 422 naming the field. */
export function sealedBytes(text: string, field: string, max: number): Buffer {
  const bytes = strictBase64(text)
  if (bytes === null || bytes.length === 0 || bytes.length > max) throw new AppError('error.request.invalid', `${field}: standard base64 of 1 to ${max} bytes`)
  return bytes
}
