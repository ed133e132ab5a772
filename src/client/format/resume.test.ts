// A resume point opens only with the master key it was sealed under and for its own upload
// session, and gives back exactly what was sealed; its sealed bytes hold none of the secrets in clear.
import { describe, expect, it } from 'vitest'
import { ClientFormatError } from './errors.ts'
import { generateFileKey, generateMasterKey } from './keys.ts'
import { openResumePoint, sealResumePoint, type ResumePoint } from './resume.ts'

const master = generateMasterKey()
const point: ResumePoint = {
  contentHash: new Uint8Array(32).fill(1),
  ciphertextHash: 'ab'.repeat(32),
  ciphertextSize: 123_456_789,
  chunkSize: 65_536,
  fileKey: generateFileKey(),
  salt: new Uint8Array(16).fill(3),
  facts: { captured: 1_700_000_000_000, width: 4000, height: 3000, location: { latitude: 48.8584, longitude: 2.2945 } },
  derivatives: [{ kind: 'thumbnail', type: 'image/webp', size: 1234, hash: 'cd'.repeat(32), sealed: new Uint8Array(1290).fill(9) }],
  inFlight: { start: 8_388_636, digest: 'ef'.repeat(32) },
}

describe('resume points', () => {
  it('round-trip under the master key, for their upload session only', async () => {
    const sealed = await sealResumePoint(master, 'upload-1', point)
    expect(await openResumePoint(master, 'upload-1', sealed)).toEqual(point)
    await expect(openResumePoint(master, 'upload-2', sealed)).rejects.toBeInstanceOf(ClientFormatError)
    await expect(openResumePoint(generateMasterKey(), 'upload-1', sealed)).rejects.toBeInstanceOf(ClientFormatError)
    const altered = sealed.slice()
    altered[20]! ^= 1
    await expect(openResumePoint(master, 'upload-1', altered)).rejects.toBeInstanceOf(ClientFormatError)
    const text = Buffer.from(sealed).toString('latin1')
    expect(text).not.toContain('48.8584')
    expect(Buffer.from(sealed).includes(Buffer.from(point.fileKey))).toBe(false)
  })
})
