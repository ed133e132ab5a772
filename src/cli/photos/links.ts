// `coffer-photos link`, `links` and `unlink`: public links to an album of yours, or to some of
// its photos, for people with no account (docs/photos.md, "Public links"; decision 0068). The
// link's secret is made here and travels in the URL's fragment only (client/links.ts); the
// server sees neither it nor the password.
import { namedAlbums } from '../../client/albums.ts'
import { createLink, listOwnLinks, revokeLink, type LinkOptions, type OwnedLink } from '../../client/links.ts'
import { nativeArgon2id } from '../../client/node/crypto.ts'
import { IdentityKeyChangedError } from '../../client/sharing.ts'
import { LINK_EXPIRY_MAX_S, LINK_OPENS_MAX } from '../../contract/links.ts'
import { CofferProblem } from '../../sdk/client.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { columns } from './albums.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { minuteText } from './devices.ts'
import { listed, resolve } from './edit.ts'
import { albumByName, contactsOf, countOption, libraryOf, namedAlbum, outsideTrash } from './library.ts'
import { changedKey } from './sharing.ts'

const SECONDS_PER_UNIT: Readonly<Record<string, number>> = { m: 60, h: 3600, d: 86_400 }

/** --expires: minutes, hours or days ("30m", "12h", "7d") in seconds, up to the server's ten years. */
function expiresInS(given: string): number {
  const match = /^(\d+)([mhd])$/.exec(given.trim())
  const seconds = match === null ? Number.NaN : Number(match[1]) * SECONDS_PER_UNIT[match[2]!]!
  if (!Number.isSafeInteger(seconds) || seconds < 60 || seconds > LINK_EXPIRY_MAX_S)
    throw new UsageError(`--expires takes a duration in whole minutes, hours or days, such as 30m, 12h or 7d, up to ten years (not "${given}")`)
  return seconds
}

const LINK_ID = /^[A-Za-z0-9_-]{22}$/

/** The link id `unlink` is given, as it is or in a link's URL (its /s/<link id> path; the fragment is not needed). */
function linkIdOf(given: string): string {
  if (LINK_ID.test(given)) return given
  const id = URL.canParse(given) ? /^\/s\/([A-Za-z0-9_-]{22})\/?$/.exec(new URL(given).pathname)?.[1] : undefined
  if (id === undefined) throw new UsageError(`"${given}" is neither a link id nor a link's URL (\`coffer-photos links\` lists them)`)
  return id
}

const yesNo = (value: boolean): string => (value ? 'yes' : 'no')

/** A link as its --json event gives it: the server's view (less the owner's sealed copy of its secret, which the URL is), its album's name and its URL. */
function linkEvent({ link, url }: OwnedLink, album: string | null): Record<string, unknown> {
  const { owner_copy: _sealed, ...view } = link
  return { ...view, album, url }
}

export const link: Command = {
  usage: `usage: coffer-photos link <album> [--photo <name>]... [--view-only] [--password] [--password-stdin]
                          [--expires <duration>] [--max-opens <n>] [--json]

  Makes a public link to one of your albums, and prints its URL: anyone who has it sees the
  album's photos (the ones added later too) in a browser, with no account, until you stop it
  with \`coffer-photos unlink\`. The key is in the URL's fragment (after #), which browsers never
  send: the server cannot open the photos. With --photo, the link shows those photos only.

  --photo <name>          a photo of the album, as \`coffer-photos ls\` names it (or its asset
                          id); give it once per photo
  --view-only             the link's page offers no download, and the server withholds the
                          originals of photos that have a preview
  --password              the link asks for a password, typed here without echo; send it
                          another way than the URL
  --password-stdin        the same, the password read from stdin (all of it, less one final
                          line break)
  --expires <duration>    the link stops after this long: 30m, 12h, 7d (up to ten years)
  --max-opens <n>         the link opens at most n times (each visit opens it once)
  --json                  the link as one JSON line: link_created, with its url`,
  options: {
    photo: { type: 'string', multiple: true },
    'view-only': { type: 'boolean' },
    password: { type: 'boolean' },
    'password-stdin': { type: 'boolean' },
    expires: { type: 'string' },
    'max-opens': { type: 'string' },
  },
  async run({ positionals, values, out, signal, home, prompts }) {
    if (positionals.length !== 1) throw new UsageError('link takes one album name')
    // Checked before anything is asked or sent.
    const expires = typeof values.expires === 'string' ? { expiresInS: expiresInS(values.expires) } : {}
    const maxOpens = values['max-opens'] === undefined ? {} : { maxOpens: countOption(values['max-opens'], 'max-opens', 1, LINK_OPENS_MAX) }
    const account = await openAccount(home, commandClientOptions(out, signal))
    const { album, library } = await albumByName(account, positionals[0])
    if (library.ownerId !== account.userId) throw new UsageError(`"${album.name}" was shared with you: only its owner makes links to it`)
    const names = Array.isArray(values.photo) ? values.photo : []
    let selection: Pick<LinkOptions, 'assetIds'> = {}
    if (names.length > 0) {
      const files = await listed(library, album, await outsideTrash(library, out))
      selection = { assetIds: [...new Set(names.map((given) => resolve(files, album, given).assetId))] }
    }
    const fromStdin = values['password-stdin'] === true
    const password = values.password === true || fromStdin ? { password: await prompts.linkPassword(fromStdin, signal) } : {}
    let made: OwnedLink
    try {
      made = await createLink({ library, contacts: contactsOf(account) }, album.albumId, {
        ...selection,
        ...password,
        ...expires,
        ...maxOpens,
        downloads: values['view-only'] !== true,
        argon2id: nativeArgon2id,
      })
    } catch (error) {
      if (error instanceof IdentityKeyChangedError) return changedKey(out, error.userId, error)
      throw error
    }
    const { link: view, url } = made
    const shown = view.asset_ids === null ? `"${album.name}"` : `${view.asset_ids.length} photo${view.asset_ids.length === 1 ? '' : 's'} of "${album.name}"`
    const limits = [
      view.downloads ? 'downloads allowed' : 'view only',
      ...(view.password ? ['asks for a password'] : []),
      ...(view.expires_at === null ? [] : [`until ${minuteText(view.expires_at)}`]),
      ...(view.max_opens === null ? [] : [`at most ${view.max_opens} open${view.max_opens === 1 ? '' : 's'}`]),
    ]
    out.say(url)
    out.say(`A public link to ${shown} (${limits.join(', ')}): anyone with the URL sees it. \`coffer-photos unlink ${view.link_id}\` stops it.`)
    out.event('link_created', linkEvent(made, album.name))
    return EXIT.ok
  },
}

export const links: Command = {
  usage: `usage: coffer-photos links [<album>] [--json]

  Your public links (of one album), newest first, in columns: the album, the link's id (what
  \`coffer-photos unlink\` takes), its state (active; expired, used_up, revoked, or disabled by
  the server's operator, with the reason below the table), how often it was opened (of at most
  how many), when it expires, whether it asks for a password, whether it allows downloads, its
  photos (all of the album, or how many), and its URL.

  --json   one JSON object per line on stdout: link (one per link, with album and url)`,
  options: {},
  async run({ positionals, out, signal, home }) {
    if (positionals.length > 1) throw new UsageError('links takes at most one album name')
    const library = libraryOf(await openAccount(home, commandClientOptions(out, signal)))
    const albumId = positionals[0] === undefined ? undefined : (await namedAlbum(library, positionals[0])).albumId
    const owned = await listOwnLinks(library, albumId)
    const albumNames = new Map((await namedAlbums(library)).map((album) => [album.albumId, album.name]))
    const albumOf = (id: string): string | null => albumNames.get(id) ?? null
    for (const listedLink of owned) out.event('link', linkEvent(listedLink, albumOf(listedLink.link.album_id)))
    if (owned.length === 0) {
      out.say('No links yet: `coffer-photos link <album>` makes one.')
      return EXIT.ok
    }
    const rows = owned.map(({ link: view, url }) => [
      albumOf(view.album_id) ?? `(album ${view.album_id})`,
      view.link_id,
      view.state,
      view.max_opens === null ? String(view.opens) : `${view.opens}/${view.max_opens}`,
      view.expires_at === null ? 'never' : minuteText(view.expires_at),
      yesNo(view.password),
      yesNo(view.downloads),
      view.asset_ids === null ? 'all' : String(view.asset_ids.length),
      url,
    ])
    for (const line of columns(['ALBUM', 'LINK', 'STATE', 'OPENS', 'EXPIRES', 'PASSWORD', 'DOWNLOADS', 'PHOTOS', 'URL'], rows, [3])) out.say(line)
    for (const { link: view } of owned)
      if (view.state === 'disabled') out.say(`Link ${view.link_id} was disabled by the server's operator: ${view.disabled_reason ?? 'no reason given'}.`)
    return EXIT.ok
  },
}

export const unlink: Command = {
  usage: `usage: coffer-photos unlink <link-id-or-url> [--json]

  Revokes one of your public links, named by its id (\`coffer-photos links\` lists them) or by
  its URL: it opens no more, and the pages already showing it stop at their next photo.

  --json   the result as one JSON line: link_revoked`,
  options: {},
  async run({ positionals, out, signal, home }) {
    if (positionals.length !== 1) throw new UsageError('unlink takes one link id or URL')
    const linkId = linkIdOf(positionals[0]!)
    const library = libraryOf(await openAccount(home, commandClientOptions(out, signal)))
    try {
      await revokeLink(library, linkId)
    } catch (error) {
      if (error instanceof CofferProblem && error.status === 404)
        throw new UsageError(`you have no link ${linkId} (\`coffer-photos links\` lists yours)`, { cause: error })
      throw error
    }
    out.say(`Revoked link ${linkId}: it shows nothing more, to anyone.`)
    out.event('link_revoked', { link_id: linkId })
    return EXIT.ok
  },
}
