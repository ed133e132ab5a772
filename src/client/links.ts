// Public links (decision 0068; docs/client-library.md "Public links"; the format is
// format/link.ts): the owner's client makes a link to an album or to some of its photos, lists
// and revokes its links; anyone with the link's URL (and its password) opens it with no account
// and reads the photos, each checked as the owner's own devices check them. Browser-safe.
import { fromBase64, toBase64, toBase64Url, utf8 } from '../sdk/bytes.ts'
import { CofferClient, CofferProblem, type LinkView, type OpenedLink as OpenedLinkView } from '../sdk/client.ts'
import type { HybridVerifier } from '../sdk/hybrid.ts'
import type { AssetKeys } from './files.ts'
import { randomBytes } from './format/bytes.ts'
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
} from './format/link.ts'
import { ESCROW_KDF_DEFAULTS, portableArgon2id, type Argon2id, type EscrowKdfParams } from './format/recovery.ts'
import { linkContents, type SharingAccount } from './sharing.ts'

/** How a link's password is stretched: the escrow's argon2id costs (64 MiB, 3 passes, 1 lane), which a phone's browser manages in a few seconds. */
export const LINK_PASSWORD_KDF: EscrowKdfParams = ESCROW_KDF_DEFAULTS
const PASSWORD_SALT_BYTES = 16

export interface LinkOptions {
  /** A selection link: these photos of the album only. Absent: the whole album, as it grows. */
  readonly assetIds?: readonly string[]
  /** Whether the link's holder may save the originals; true unless false (docs/sharing.md, "View only"). */
  readonly downloads?: boolean
  /** A password the link asks for (stretched with argon2id on the device that opens it). */
  readonly password?: string
  /** Seconds from now until the link stops. */
  readonly expiresInS?: number
  /** How many times the link may be opened. */
  readonly maxOpens?: number
  /** argon2id for the password's stretch (a faster one in Node or a worker); @noble/hashes' unless given. */
  readonly argon2id?: Argon2id
}

/** A link as its owner lists it: the server's view, and its URL made again from the owner's copy of its secret. */
export interface OwnedLink {
  readonly link: LinkView
  readonly url: string
}

const passwordKey = (password: string, salt: Uint8Array, params: EscrowKdfParams, argon2id: Argon2id = portableArgon2id): Promise<Uint8Array> =>
  argon2id(utf8(password.normalize('NFC')), salt, params)

/**
 * Makes a public link to the owner's album (or to some of its photos): a new id and secret, the
 * album's keys and writers sealed for it (linkContents, the album's history checked first), the
 * owner's copy of the secret sealed under its master key. The URL is answered here and nowhere
 * else: the server never sees its fragment.
 */
export async function createLink(owner: SharingAccount, albumId: string, options: LinkOptions = {}): Promise<OwnedLink> {
  const { library } = owner
  const { linkId, secret } = newLinkSecrets()
  const password = options.password === undefined ? null : { salt: randomBytes(PASSWORD_SALT_BYTES), params: LINK_PASSWORD_KDF, password: options.password }
  const stretched = password === null ? null : await passwordKey(password.password, password.salt, password.params, options.argon2id)
  const keys = await linkKeys(linkId, secret, stretched)
  const envelope = await sealLinkEnvelope(keys.key, linkId, await linkContents(owner, albumId))
  const link = await library.client.createLink(albumId, {
    link_id: linkId,
    token_hash: await tokenHash(keys.token),
    envelope: toBase64(envelope),
    owner_copy: toBase64(await sealOwnerCopy(library.masterKey, linkId, secret, keys.key)),
    asset_ids: options.assetIds === undefined ? null : [...options.assetIds],
    downloads: options.downloads ?? true,
    password: password === null ? null : { salt: toBase64(password.salt), memory_kib: password.params.memoryKiB, iterations: password.params.passes },
    expires_in_s: options.expiresInS ?? null,
    max_opens: options.maxOpens ?? null,
  })
  return { link, url: linkUrl(library.client.baseUrl, linkId, secret) }
}

/** The owner's links (of one album), newest first, each with its URL again; a link whose copy does not open here (another account's bytes) is left out. */
export async function listOwnLinks(library: Pick<SharingAccount['library'], 'client' | 'masterKey'>, albumId?: string): Promise<OwnedLink[]> {
  const owned: OwnedLink[] = []
  for (const link of (await library.client.listLinks(albumId)).links) {
    const copy = await openOwnerCopy(library.masterKey, link.link_id, fromBase64(link.owner_copy)).catch(() => null)
    if (copy !== null) owned.push({ link, url: linkUrl(library.client.baseUrl, link.link_id, copy.secret) })
  }
  return owned
}

/** The link asks for a password, and none was given (or it was wrong: `wrong`). */
export class LinkPasswordError extends Error {
  readonly wrong: boolean

  constructor(wrong: boolean) {
    super(wrong ? 'the password is not this link’s' : 'this link asks for a password')
    this.name = 'LinkPasswordError'
    this.wrong = wrong
  }
}

/** A link opened: a client that reads its album through it, what its envelope holds, and the keys its photos open with. */
export interface OpenedPublicLink {
  readonly linkId: string
  /** The session the server opened (`Authorization: Bearer` of the link's reads), until it ends with the link or LINK_SESSION_TTL_S. */
  readonly session: string
  /** What to keep to read on after a reload without another open (resumePublicLink). */
  readonly kept: KeptLink
  readonly client: CofferClient
  readonly contents: LinkContents
  /** For files.ts openAsset: the album's keys of the envelope, each photo checked under its writer's key there. */
  readonly keys: AssetKeys
  readonly downloads: boolean
  readonly selection: boolean
  /** When the link stops (Unix ms), or null. */
  readonly expiresAt: number | null
}

export interface OpenLinkOptions {
  readonly password?: string
  readonly fetch?: typeof fetch
  readonly argon2id?: Argon2id
  readonly verify?: HybridVerifier
}

/** Whether opening the link at this URL takes a password (asked of the server: the URL's fragment is not sent). */
export async function linkAsksPassword(url: string, options: Pick<OpenLinkOptions, 'fetch'> = {}): Promise<boolean> {
  const { origin, linkId } = parseLinkUrl(url)
  return (await anonymous(origin, options.fetch).probeLink(linkId)).password !== null
}

const anonymous = (origin: string, fetchImpl: typeof fetch | undefined) =>
  new CofferClient({ baseUrl: origin, ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }) })

/**
 * Opens the link at `url`: its keys derived from the URL's secret (and the password, stretched
 * with the argon2id costs the server states, held to the escrow's limits), a session opened with
 * the access token, and the envelope opened, which also proves the server answered this link's
 * own (AES-GCM under the link's key, bound to its id). LinkPasswordError when a password is asked
 * and missing or wrong; a CofferProblem (410 and its code) when the link stopped.
 */
export async function openPublicLink(url: string, options: OpenLinkOptions = {}): Promise<OpenedPublicLink> {
  const { origin, linkId, secret } = parseLinkUrl(url)
  const server = anonymous(origin, options.fetch)
  const probe = await server.probeLink(linkId)
  let stretched: Uint8Array | null = null
  if (probe.password !== null) {
    if (options.password === undefined) throw new LinkPasswordError(false)
    const params = { memoryKiB: probe.password.memory_kib, passes: probe.password.iterations, lanes: 1 }
    if (params.memoryKiB > 4 * LINK_PASSWORD_KDF.memoryKiB || params.passes > 8)
      throw new Error('the server asks this link’s password for more work than a link ever takes')
    stretched = await passwordKey(options.password, fromBase64(probe.password.salt), params, options.argon2id)
  }
  const keys = await linkKeys(linkId, secret, stretched)
  let opened: OpenedLinkView
  try {
    opened = await server.openLink(linkId, toBase64Url(keys.token))
  } catch (error) {
    if (error instanceof CofferProblem && error.code === 'error.link.denied' && probe.password !== null) throw new LinkPasswordError(true)
    throw error
  }
  return resumePublicLink(url, { opened, key: toBase64(keys.key) }, options)
}

/**
 * What a page keeps to read on after a reload without opening the link again (which would spend
 * another of its opens): the server's answer to the open (its session, its envelope) and the
 * envelope's key. The link page keeps it for its tab only (sessionStorage).
 */
export interface KeptLink {
  readonly opened: OpenedLinkView
  /** The envelope key, standard base64. */
  readonly key: string
}

/**
 * The link opened before, from what was kept of it: the envelope opened again under its key
 * (so it is held to the link as at the first open), no request made. A session that ended since
 * answers 401 at the first read: open the link again then.
 */
export async function resumePublicLink(url: string, kept: KeptLink, options: Pick<OpenLinkOptions, 'fetch' | 'verify'> = {}): Promise<OpenedPublicLink> {
  const { origin, linkId } = parseLinkUrl(url)
  const { opened } = kept
  const contents = await openLinkEnvelope(fromBase64(kept.key), linkId, fromBase64(opened.envelope))
  if (contents.albumId !== opened.album_id) throw new Error('the server answered the link with another album than its envelope names')
  const client = new CofferClient({
    baseUrl: origin,
    link: { linkId, session: opened.session },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  })
  return {
    linkId,
    session: opened.session,
    kept,
    client,
    contents,
    keys: linkAssetKeys(contents, options.verify),
    downloads: opened.downloads,
    selection: opened.selection,
    expiresAt: opened.expires_at === null ? null : Date.parse(opened.expires_at),
  }
}

/** The keys a link's photos open with: the envelope's album keys, each photo's signature checked under its writer's key the envelope names. */
export function linkAssetKeys(contents: LinkContents, verify?: HybridVerifier): AssetKeys {
  const owner = contents.writers.get(contents.ownerId)
  if (owner === undefined) throw new Error('the link names no key of its owner')
  return {
    albumId: contents.albumId,
    identityPublicKey: owner,
    ...(verify === undefined ? {} : { verify }),
    writerKeys: (userId) => {
      const key = contents.writers.get(userId)
      if (key === undefined) throw new Error(`account ${userId} is not one the link’s owner named a writer of this album`)
      return key
    },
    albumKey: async (albumId, epoch) => {
      const key = albumId === contents.albumId ? contents.albumKeys.get(epoch) : undefined
      if (key === undefined) throw new Error(`the link holds no key of the album at epoch ${epoch}`)
      return key
    },
  }
}

/** Revokes the owner's link: it gives nothing more, at once. */
export function revokeLink(library: Pick<SharingAccount['library'], 'client'>, linkId: string): Promise<void> {
  return library.client.revokeLink(linkId)
}
