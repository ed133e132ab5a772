// An upload session may be opened only while the account keeps within MAX_OPEN_UPLOADS open
// sessions and, when it adds bytes, within ACCOUNT_QUOTA_BYTES of stored plus declared bytes.
import { describe, expect, it } from 'vitest'
import { refuseUpload, type UploadRefusal, type UsageWithUpload } from './quota.ts'

const limits = { accountBytes: 1000, maxOpenUploads: 3 }

function usage(storedBytes: number, pendingBytes: number, addedBytes: number, openUploads = 1): UsageWithUpload {
  return { storedBytes, pendingBytes, openUploads, addedBytes }
}

const over = (usedBytes: number, requestedBytes: number): UploadRefusal => ({ kind: 'quota_exceeded', quotaBytes: 1000, usedBytes, requestedBytes })

describe('refuseUpload', () => {
  it.each<[string, UsageWithUpload, UploadRefusal | null]>([
    ['nothing stored, a small session', usage(0, 100, 100), null],
    ['exactly at the quota', usage(600, 400, 300), null],
    ['one byte over the quota', usage(600, 401, 301), over(700, 301)],
    ['over only because of what was stored', usage(1001, 1, 1), over(1001, 1)],
    ['a session of stored blobs only, at the quota', usage(1000, 0, 0), null],
    ['a session adding nothing, already over the quota', usage(1500, 200, 0), null],
    ['the last open session the cap allows', usage(0, 10, 10, 3), null],
    ['one open session over the cap', usage(0, 10, 10, 4), { kind: 'too_many_uploads', maxOpenUploads: 3 }],
    ['over the cap and over the quota: the cap is named', usage(900, 200, 200, 4), { kind: 'too_many_uploads', maxOpenUploads: 3 }],
    ['over the cap with a session adding nothing', usage(0, 0, 0, 4), { kind: 'too_many_uploads', maxOpenUploads: 3 }],
  ])('%s', (_case, measured, expected) => {
    expect(refuseUpload(measured, limits)).toEqual(expected)
  })

  it('refuses no size without a byte quota, and still counts sessions', () => {
    expect(refuseUpload(usage(Number.MAX_SAFE_INTEGER - 10, 10, 10), { accountBytes: null, maxOpenUploads: 3 })).toBeNull()
    expect(refuseUpload(usage(0, 10, 10, 4), { accountBytes: null, maxOpenUploads: 3 })).toEqual({ kind: 'too_many_uploads', maxOpenUploads: 3 })
  })
})
