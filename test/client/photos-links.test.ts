// `coffer-photos link`, `links` and `unlink` (docs/photos.md, "Public links"; decision 0068),
// in-process against a real server: the URL `link` prints opens with no account (the client
// library's openPublicLink, as the link's page opens it) and its photos decrypt byte for byte; a
// selection, view only, a password read from stdin, an expiry and a number of opens are each made
// as asked; `links` lists them with their opens; `unlink` by URL stops a link already open at its
// next read; an album, a photo or a link that is not there is a usage error (exit 2).
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openAsset, openDerivative, openOriginal } from '../../src/client/files.ts'
import { LinkPasswordError, openPublicLink, type OpenedPublicLink } from '../../src/client/links.ts'
import { nativeArgon2id } from '../../src/client/node/crypto.ts'
import { EXIT } from '../../src/cli/photos/command.ts'
import { CofferProblem } from '../../src/sdk/client.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writePhoto } from '../support/photos.ts'
import { errorLineOf, events, expectOk, onTerminal, photos } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string
let pictures: string
const owner = { home: '', email: uniqueEmail('links-owner') }
const member = { home: '', email: uniqueEmail('links-member') }
/** Each photo of the album by its name: its asset id (ls --json). */
const assetIds = new Map<string, string>()

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-links-'))
  for (const [person, name] of [
    [owner, 'Laptop'],
    [member, 'Phone'],
  ] as const) {
    person.home = path.join(work, name)
    expectOk(await photos(person.home, ['login', server.url, '--register', '--email', person.email, '--password-stdin'], { stdin: PASSWORD }))
    expectOk(await photos(person.home, ['setup', '--yes', '--device-name', name]))
  }
  pictures = path.join(work, 'pictures')
  await mkdir(pictures)
  await writePhoto(path.join(pictures, 'beach.jpg'), { format: 'jpeg', width: 48, height: 32, seed: 3 })
  await writePhoto(path.join(pictures, 'dunes.jpg'), { format: 'jpeg', width: 40, height: 30, seed: 5 })
  expectOk(await photos(owner.home, ['backup', pictures, '--album', 'Wedding']))
  for (const file of events(await photos(owner.home, ['ls', 'Wedding', '--json'])).filter((e) => e.event === 'file'))
    assetIds.set(file.name as string, file.asset_id as string)
}, 120_000)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

const eventOf = (run: { stdout: string }, name: string) => events(run).find((e) => e.event === name)!

/** `link <args> --json`, which must succeed: its link_created event. */
async function made(args: readonly string[], stdin?: string): Promise<Record<string, unknown> & { url: string; link_id: string }> {
  const run = await photos(owner.home, ['link', ...args, '--json'], stdin === undefined ? {} : { stdin })
  expectOk(run)
  const created = eventOf(run, 'link_created')
  return { ...created, url: created.url as string, link_id: created.link_id as string }
}

/** Every photo the opened link shows, by its name: its thumbnail and its original, each decrypted with the link's keys. */
async function photosThrough(opened: OpenedPublicLink): Promise<Map<string, { assetId: string; thumbnail: Uint8Array; original: Uint8Array }>> {
  const shown = new Map<string, { assetId: string; thumbnail: Uint8Array; original: Uint8Array }>()
  const entries = (await opened.client.feed(opened.contents.albumId, 0, 1000)).entries.filter((entry) => entry.action !== 'delete')
  const latest = new Map(entries.map((entry) => [entry.asset_id, entry]))
  const metadata = await opened.client.downloadBlobs([...latest.values()].map((entry) => entry.metadata_blob_hash!))
  for (const entry of latest.values()) {
    const asset = await openAsset(opened.keys, entry, metadata.blobs.get(entry.metadata_blob_hash!)!)
    if (asset.metadata.type === 'application/vnd.coffer.album') continue // the album's record, not a photo
    const thumbnailHash = asset.metadata.blobs.find((blob) => blob.kind === 'thumbnail')!.hash
    const thumbnail = await openDerivative(asset, 'thumbnail', await opened.client.downloadBlob(Buffer.from(thumbnailHash).toString('hex')))
    const original = await openOriginal(asset, await opened.client.downloadBlob(asset.envelope.ciphertext_hash))
    shown.set(asset.metadata.name, { assetId: entry.asset_id, thumbnail, original })
  }
  return shown
}

/** `links --json`: the link with this id. */
async function listedLink(linkId: string): Promise<Record<string, unknown>> {
  const run = await photos(owner.home, ['links', '--json'])
  expectOk(run)
  return events(run).find((e) => e.event === 'link' && e.link_id === linkId)!
}

describe('public links with coffer-photos', { timeout: 180_000 }, () => {
  it('link prints a URL that opens with no account, every photo of the album decrypting byte for byte', async () => {
    const human = await photos(owner.home, ['link', 'Wedding'])
    expectOk(human)
    const [url, sentence] = human.stdout.split('\n')
    expect(url).toMatch(new RegExp(`^${server.url}/s/[A-Za-z0-9_-]{22}#[A-Za-z0-9_-]{43}$`))
    expect(sentence).toContain('A public link to "Wedding" (downloads allowed)')

    const opened = await openPublicLink(url!)
    expect(opened.contents).toMatchObject({ name: 'Wedding' })
    expect(opened.selection).toBe(false)
    expect(opened.downloads).toBe(true)
    const shown = await photosThrough(opened)
    expect([...shown.keys()].sort()).toEqual(['beach.jpg', 'dunes.jpg'])
    for (const [name, photo] of shown) {
      expect(photo.assetId).toBe(assetIds.get(name))
      expect(Buffer.from(photo.original)).toEqual(await readFile(path.join(pictures, name)))
      expect(photo.thumbnail.length).toBeGreaterThan(0)
    }

    const json = await made(['Wedding'])
    expect(json).toMatchObject({ album: 'Wedding', asset_ids: null, downloads: true, password: false, expires_at: null, max_opens: null, state: 'active' })
    expect(json.owner_copy).toBeUndefined()
    expect(json.url).toContain(`/s/${json.link_id}#`)
  })

  it('--photo makes a link that shows that photo only; an unknown name is a usage error naming it', async () => {
    const link = await made(['Wedding', '--photo', 'beach.jpg'])
    expect(link.asset_ids).toEqual([assetIds.get('beach.jpg')])
    const opened = await openPublicLink(link.url)
    expect(opened.selection).toBe(true)
    const shown = await photosThrough(opened)
    expect([...shown.keys()]).toEqual(['beach.jpg'])

    const unknown = await photos(owner.home, ['link', 'Wedding', '--photo', 'beach.jpg', '--photo', 'nowhere.jpg'])
    expect(unknown.code).toBe(EXIT.usage)
    expect(errorLineOf(unknown)).toContain('album "Wedding" has no file "nowhere.jpg"')
  })

  it('--view-only makes a link without downloads', async () => {
    const link = await made(['Wedding', '--view-only'])
    expect(link.downloads).toBe(false)
    expect((await openPublicLink(link.url)).downloads).toBe(false)
  })

  it('--password with --password-stdin: the URL alone is refused, the password opens it; without stdin or a terminal, a usage error', async () => {
    const link = await made(['Wedding', '--password', '--password-stdin'], 'confetti\n')
    expect(link.password).toBe(true)
    await expect(openPublicLink(link.url)).rejects.toBeInstanceOf(LinkPasswordError)
    const wrong = await openPublicLink(link.url, { password: 'confetti\n', argon2id: nativeArgon2id }).catch((error: unknown) => error)
    expect(wrong).toMatchObject({ name: 'LinkPasswordError', wrong: true }) // the final line break is not the password's
    const opened = await openPublicLink(link.url, { password: 'confetti', argon2id: nativeArgon2id })
    expect((await photosThrough(opened)).size).toBe(2)

    const unasked = await photos(owner.home, ['link', 'Wedding', '--password'])
    expect(unasked.code).toBe(EXIT.usage)
    expect(errorLineOf(unasked)).toContain('pass --password-stdin')
  })

  it('--password on a terminal: asked without echo', async () => {
    const asking = onTerminal(owner.home, ['link', 'Wedding', '--password'])
    const asked = await asking.waitFor(/Password for the link/)
    asking.type('streamers\r')
    expect(await asking.done).toBe(0)
    expect(asking.text().slice(asked)).not.toContain('streamers')
    const url = /http\S+\/s\/\S+#\S+/.exec(asking.text())![0]
    await expect(openPublicLink(url)).rejects.toBeInstanceOf(LinkPasswordError)
    expect((await openPublicLink(url, { password: 'streamers', argon2id: nativeArgon2id })).contents.name).toBe('Wedding')
  })

  it('--expires and --max-opens show in links --json; links counts the opens; bad values are usage errors', async () => {
    const link = await made(['Wedding', '--expires', '7d', '--max-opens', '3'])
    const listed = await listedLink(link.link_id)
    expect(listed).toMatchObject({ album: 'Wedding', url: link.url, max_opens: 3, opens: 0, state: 'active' })
    expect(Date.parse(listed.expires_at as string) - Date.parse(listed.created_at as string)).toBe(7 * 86_400_000)
    expect((await listedLink((await made(['Wedding', '--expires', '90m'])).link_id)).expires_at).not.toBeNull()

    await openPublicLink(link.url)
    expect(await listedLink(link.link_id)).toMatchObject({ opens: 1 })
    const table = await photos(owner.home, ['links', 'Wedding'])
    expectOk(table)
    expect(table.stdout.split('\n')[0]).toMatch(/^ALBUM +LINK +STATE +OPENS +EXPIRES +PASSWORD +DOWNLOADS +PHOTOS +URL$/)
    const row = table.stdout.split('\n').find((line) => line.includes(link.link_id))!
    expect(row).toMatch(
      new RegExp(
        `^Wedding +${link.link_id} +active +1/3 +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC +no +yes +all +${link.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
      ),
    )
    const selection = table.stdout.split('\n').filter((line) => / no +yes +1 +http/.test(line))
    expect(selection).toHaveLength(1) // the --photo link of the test before

    for (const [option, value] of [
      ['--expires', '7w'],
      ['--expires', '0m'],
      ['--expires', '3651d'],
      ['--max-opens', '0'],
      ['--max-opens', 'many'],
    ]) {
      const refused = await photos(owner.home, ['link', 'Wedding', option!, value!])
      expect(refused.code, `${option} ${value}`).toBe(EXIT.usage)
      expect(errorLineOf(refused)).toContain(option)
    }
  })

  it('unlink by URL: a link already opened fails at its next read with 410 error.link.revoked; links shows it revoked', async () => {
    const link = await made(['Wedding'])
    const opened = await openPublicLink(link.url)
    expect((await opened.client.feed(opened.contents.albumId)).entries.length).toBeGreaterThan(0)

    const revoked = await photos(owner.home, ['unlink', link.url, '--json'])
    expectOk(revoked)
    expect(eventOf(revoked, 'link_revoked')).toEqual({ event: 'link_revoked', link_id: link.link_id })
    const read = await opened.client.feed(opened.contents.albumId).catch((error: unknown) => error)
    expect(read).toBeInstanceOf(CofferProblem)
    expect(read).toMatchObject({ status: 410, code: 'error.link.revoked' })
    expect(await listedLink(link.link_id)).toMatchObject({ state: 'revoked' })
    // By its id too; a second revoke changes nothing.
    expectOk(await photos(owner.home, ['unlink', link.link_id]))
  })

  it('an album, a link or a link id that is not there: exit 2, naming what lists them', async () => {
    const noAlbum = await photos(owner.home, ['link', 'Nowhere'])
    expect(noAlbum.code).toBe(EXIT.usage)
    expect(errorLineOf(noAlbum)).toContain('there is no album "Nowhere"')
    expect((await photos(owner.home, ['links', 'Nowhere'])).code).toBe(EXIT.usage)

    const unknownId = 'AAAAAAAAAAAAAAAAAAAAAA'
    const noLink = await photos(owner.home, ['unlink', unknownId])
    expect(noLink.code).toBe(EXIT.usage)
    expect(errorLineOf(noLink)).toBe(`coffer-photos: you have no link ${unknownId} (\`coffer-photos links\` lists yours)`)
    // Another account's link is not this one's to revoke.
    const theirs = await photos(member.home, ['unlink', (await made(['Wedding'])).url])
    expect(theirs.code).toBe(EXIT.usage)
    const notALink = await photos(owner.home, ['unlink', `${server.url}/albums/x`])
    expect(notALink.code).toBe(EXIT.usage)
    expect(errorLineOf(notALink)).toContain("is neither a link id nor a link's URL")
    expect(events(await photos(member.home, ['links', '--json']))).toEqual([])
    expect((await photos(member.home, ['links'])).stdout).toContain('No links yet')
  })

  it('an album shared with you: only its owner makes links to it', async () => {
    const shared = await photos(owner.home, ['share', 'Wedding', member.email, '--json'])
    expectOk(shared)
    expectOk(await photos(member.home, ['invites', 'accept', eventOf(shared, 'invited').album_id as string]))
    const refused = await photos(member.home, ['link', 'Wedding'])
    expect(refused.code).toBe(EXIT.usage)
    expect(errorLineOf(refused)).toContain('"Wedding" was shared with you: only its owner makes links to it')
  })
})
