// The exact bytes that clients sign, shared by the server (to verify) and the SDK (to sign).
import { encodeCanonical } from '../codec/cbor.ts'

export const REVOKE_ALL_CONTEXT = 'coffer/revoke-all/v1'

/** Canonical CBOR (RFC 8949 4.2.1) of {"context": "coffer/revoke-all/v1", "user_id", "challenge"}. */
export function revokeAllSigningBytes(userId: string, challenge: string): Uint8Array {
  return encodeCanonical({ context: REVOKE_ALL_CONTEXT, user_id: userId, challenge })
}
