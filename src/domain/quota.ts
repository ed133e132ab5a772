// The storage quota of an account (docs/decisions/0008-storage-quota.md): an upload session may
// be opened while the account's open sessions stay within MAX_OPEN_UPLOADS and what it stores
// and has declared stays within ACCOUNT_QUOTA_BYTES. Bytes it already stores add nothing.

export interface QuotaLimits {
  /** ACCOUNT_QUOTA_BYTES; null: no byte quota. */
  readonly accountBytes: number | null
  readonly maxOpenUploads: number
}

/** The account's usage with the new session counted in it. */
export interface UsageWithUpload {
  readonly storedBytes: number
  readonly pendingBytes: number
  readonly openUploads: number
  /** What the new session adds to the pending bytes. */
  readonly addedBytes: number
}

export type UploadRefusal =
  | { readonly kind: 'too_many_uploads'; readonly maxOpenUploads: number }
  | { readonly kind: 'quota_exceeded'; readonly quotaBytes: number; readonly usedBytes: number; readonly requestedBytes: number }

/** Why the new session may not stay open, or null when it may. */
export function refuseUpload(usage: UsageWithUpload, limits: QuotaLimits): UploadRefusal | null {
  if (usage.openUploads > limits.maxOpenUploads) return { kind: 'too_many_uploads', maxOpenUploads: limits.maxOpenUploads }
  const total = usage.storedBytes + usage.pendingBytes
  // A session that adds nothing is let through even over the quota (a quota lowered since, or
  // lifecycle writes' manifests): it cannot take usage any higher.
  if (limits.accountBytes !== null && usage.addedBytes > 0 && total > limits.accountBytes) {
    return { kind: 'quota_exceeded', quotaBytes: limits.accountBytes, usedBytes: total - usage.addedBytes, requestedBytes: usage.addedBytes }
  }
  return null
}
