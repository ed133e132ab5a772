import { createHash, hkdfSync, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { IdentityKey } from '../../sdk/identity.ts'
import { ClientFormatError } from './errors.ts'
import {
  linkKeys,
  linkUrl,
  newLinkSecrets,
  openLinkEnvelope,
  openOwnerCopy,
  parseLinkUrl,
  sealLinkEnvelope,
  sealOwnerCopy,
  tokenHash,
  type LinkContents,
} from './link.ts'

const hkdf = (ikm: Uint8Array, salt: Uint8Array, info: string) => new Uint8Array(hkdfSync('sha256', ikm, salt, Buffer.from(info), 32))

describe('a public link’s format', () => {
  it('derives the token and the envelope key with HKDF-SHA256 over the secret (and the password key), salted by the link id', async () => {
    const { linkId, secret } = newLinkSecrets()
    const id = Buffer.from(linkId, 'base64url')
    expect(id.length).toBe(16)
    const plain = await linkKeys(linkId, secret, null)
    expect(plain.token).toEqual(hkdf(secret, id, 'coffer/v1/link/token'))
    expect(plain.key).toEqual(hkdf(secret, id, 'coffer/v1/link/key'))
    const passwordKey = randomBytes(32)
    const guarded = await linkKeys(linkId, secret, passwordKey)
    expect(guarded.token).toEqual(hkdf(Buffer.concat([secret, passwordKey]), id, 'coffer/v1/link/token'))
    expect(guarded.token).not.toEqual(plain.token)
    expect(await tokenHash(plain.token)).toBe(createHash('sha256').update(plain.token).digest('hex'))
  })

  it('seals the envelope for its link only: another key or another link id does not open it', async () => {
    const owner = IdentityKey.generate()
    const contents: LinkContents = {
      albumId: '0f4d5b1e-3c2a-4e9b-8a7d-1b2c3d4e5f60',
      name: 'Wedding',
      recordId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
      ownerId: 'user-a',
      writers: new Map([['user-a', owner.publicKey]]),
      albumKeys: new Map([
        [1, new Uint8Array(randomBytes(32))],
        [2, new Uint8Array(randomBytes(32))],
      ]),
    }
    const { linkId, secret } = newLinkSecrets()
    const { key } = await linkKeys(linkId, secret, null)
    const sealed = await sealLinkEnvelope(key, linkId, contents)
    expect(await openLinkEnvelope(key, linkId, sealed)).toEqual(contents)
    const other = newLinkSecrets()
    await expect(openLinkEnvelope(key, other.linkId, sealed)).rejects.toBeInstanceOf(ClientFormatError)
    await expect(openLinkEnvelope((await linkKeys(linkId, secret, randomBytes(32))).key, linkId, sealed)).rejects.toThrow(/does not open/)
    const flipped = Uint8Array.from(sealed)
    flipped[20]! ^= 1
    await expect(openLinkEnvelope(key, linkId, flipped)).rejects.toThrow(/does not open/)
  })

  it('keeps the owner’s copy of the secret and key under the master key, for that link', async () => {
    const masterKey = randomBytes(32)
    const { linkId, secret } = newLinkSecrets()
    const { key } = await linkKeys(linkId, secret, null)
    const copy = await sealOwnerCopy(masterKey, linkId, secret, key)
    expect(copy.length).toBe(93)
    expect(await openOwnerCopy(masterKey, linkId, copy)).toEqual({ secret: new Uint8Array(secret), key })
    await expect(openOwnerCopy(randomBytes(32), linkId, copy)).rejects.toThrow(/does not open/)
    await expect(openOwnerCopy(masterKey, newLinkSecrets().linkId, copy)).rejects.toThrow(/does not open/)
  })

  it('puts the secret in the URL’s fragment and reads it back; a URL cut short is named as such', () => {
    const { linkId, secret } = newLinkSecrets()
    const url = linkUrl('https://photos.example/', linkId, secret)
    expect(url).toMatch(new RegExp(`^https://photos\\.example/s/${linkId}#[A-Za-z0-9_-]{43}$`))
    expect(parseLinkUrl(url)).toEqual({ origin: 'https://photos.example', linkId, secret: new Uint8Array(secret) })
    expect(() => parseLinkUrl(url.slice(0, -5))).toThrow(/cut short/)
    expect(() => parseLinkUrl(`https://photos.example/a/${linkId}#x`)).toThrow(/not \/s\//)
  })
})
