// `coffer-photos share`, `invites`, `members`, `leave` and `safety-number` (docs/photos.md,
// "Sharing an album"; decision 0067), in-process against a real server with two accounts, each
// set up on a device of its own: an album shared, the invitation listed and accepted with the
// keys opened on the member's device, the album listed and restored there by its name, both sides showing the same safety number, the member
// verified and then leaving. A server that serves the member another identity key stops the next
// share with exit 7 until the owner compares numbers and confirms.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deviceEntry, newXWingSeed } from '../../src/client/account.ts'
import { EXIT } from '../../src/cli/photos/command.ts'
import { signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { readRows, writeRows } from '../support/database.ts'
import { writePhoto } from '../support/photos.ts'
import { events, expectOk, photos, readJson } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string
const owner = { home: '', email: uniqueEmail('sharing-owner') }
const member = { home: '', email: uniqueEmail('sharing-member') }

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-sharing-'))
  for (const [person, name] of [
    [owner, 'Laptop'],
    [member, 'Phone'],
  ] as const) {
    person.home = path.join(work, name)
    expectOk(await photos(person.home, ['login', server.url, '--register', '--email', person.email, '--password-stdin'], { stdin: PASSWORD }))
    expectOk(await photos(person.home, ['setup', '--yes', '--device-name', name]))
  }
  const folder = path.join(work, 'pictures')
  await mkdir(folder)
  await writePhoto(path.join(folder, 'beach.jpg'), { format: 'jpeg', width: 48, height: 32, seed: 3 })
  expectOk(await photos(owner.home, ['backup', folder, '--album', 'Holidays']))
}, 120_000)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

const eventOf = (run: { stdout: string }, name: string) => events(run).find((e) => e.event === name)!

describe('sharing an album with coffer-photos', { timeout: 180_000 }, () => {
  it('share, invites, accept, members, safety-number on both sides, leave', async () => {
    const shared = await photos(owner.home, ['share', 'Holidays', member.email, '--contributor', '--json'])
    expectOk(shared)
    const albumId = eventOf(shared, 'invited').album_id as string
    expect(eventOf(shared, 'invited')).toMatchObject({ email: member.email, role: 'contributor' })

    const listed = await photos(member.home, ['invites', '--json'])
    expectOk(listed)
    expect(events(listed).filter((e) => e.event === 'invitation')).toEqual([
      expect.objectContaining({ album_id: albumId, owner_email: owner.email, role: 'contributor' }),
    ])
    const human = await photos(member.home, ['invites'])
    expect(human.stdout).toContain(`${albumId}  from ${owner.email}  as a contributor`)

    const accepted = await photos(member.home, ['invites', 'accept', albumId, '--json'])
    expectOk(accepted)
    expect(eventOf(accepted, 'accepted')).toMatchObject({ album_id: albumId, role: 'contributor' })
    const [keyring] = await readRows(server.database, `SELECT keyring FROM album_members WHERE album_id = '${albumId}'`)
    expect(keyring?.keyring).toBeTruthy() // kept for the member's other devices

    // The member lists and restores the album by its name, with the keys it received, each entry checked under its writer's key.
    const listedFiles = await photos(member.home, ['ls', 'Holidays', '--json'])
    expectOk(listedFiles)
    expect(
      events(listedFiles)
        .filter((e) => e.event === 'file')
        .map((e) => e.name),
    ).toEqual(['beach.jpg'])
    const dest = path.join(work, 'restored-by-member')
    expectOk(await photos(member.home, ['restore', 'Holidays', dest]))
    expect(await readFile(path.join(dest, 'beach.jpg'))).toEqual(await readFile(path.join(work, 'pictures', 'beach.jpg')))
    const albums = await photos(member.home, ['albums', '--json'])
    expect(events(albums).filter((e) => e.event === 'album')).toEqual([
      expect.objectContaining({ name: 'Holidays', album_id: albumId, files: 1, shared_by: owner.email }),
    ])
    expect((await photos(member.home, ['albums'])).stdout).toContain(`Holidays (shared by ${owner.email})`)
    const unknown = await photos(member.home, ['ls', 'Nowhere'])
    expect(unknown.code).toBe(EXIT.usage)

    // The contributor backs a folder up into the shared album by its name; the owner lists both writers' photos.
    const theirs = path.join(work, 'member-pictures')
    await mkdir(theirs)
    await writePhoto(path.join(theirs, 'dunes.jpg'), { format: 'jpeg', width: 40, height: 30, seed: 5 })
    const contributed = await photos(member.home, ['backup', theirs, '--album', 'Holidays', '--json'])
    expectOk(contributed)
    expect(eventOf(contributed, 'start')).toMatchObject({ album_id: albumId })
    expect(eventOf(contributed, 'summary')).toMatchObject({ stored: 1 })
    const ownersList = await photos(owner.home, ['ls', 'Holidays', '--json'])
    expectOk(ownersList)
    expect(
      events(ownersList)
        .filter((e) => e.event === 'file')
        .map((e) => [e.name, e.added_by])
        .sort(),
    ).toEqual([
      ['beach.jpg', 'you'],
      ['dunes.jpg', member.email],
    ])
    expect((await photos(owner.home, ['ls', 'Holidays'])).stdout).toMatch(/ADDED BY[\s\S]*dunes\.jpg.*sharing-member/)
    const seenByMember = await photos(member.home, ['members', 'Holidays', '--json'])
    expectOk(seenByMember)
    expect(events(seenByMember).filter((e) => e.event === 'member')).toEqual([expect.objectContaining({ email: member.email, role: 'contributor' })])
    expect(eventOf(seenByMember, 'owner')).toMatchObject({ email: owner.email, verified: false })

    const membersBefore = await photos(owner.home, ['members', 'Holidays', '--json'])
    expect(events(membersBefore).filter((e) => e.event === 'member')).toEqual([
      expect.objectContaining({ email: member.email, role: 'contributor', state: 'active', verified: false }),
    ])

    const [fromOwner, fromMember] = await Promise.all([
      photos(owner.home, ['safety-number', member.email, '--json']),
      photos(member.home, ['safety-number', owner.email, '--json']),
    ])
    expectOk(fromOwner)
    expectOk(fromMember)
    const number = eventOf(fromOwner, 'safety_number').safety_number as string
    expect(number).toMatch(/^(\d{5} ){11}\d{5}$/)
    expect(eventOf(fromMember, 'safety_number').safety_number).toBe(number)
    expectOk(await photos(owner.home, ['safety-number', member.email, '--confirm']))
    const membersAfter = await photos(owner.home, ['members', 'Holidays'])
    expect(membersAfter.stdout).toContain(`${member.email}  contributor  member  verified`)

    expectOk(await photos(member.home, ['leave', albumId]))
    expect((await photos(owner.home, ['members', 'Holidays'])).stdout).toContain('"Holidays" is shared with nobody.')
    const again = await photos(member.home, ['leave', albumId])
    expect(again.code).toBe(EXIT.refused)
  })

  it('a server that serves the member another identity key: share exits 7 and sends nothing, and the safety numbers differ; served truthfully again, the share goes on', async () => {
    const { user_id: memberId } = await readJson<{ user_id: string }>(member.home, 'account.json')
    const [saved] = await readRows(server.database, `SELECT body FROM directories WHERE user_id = '${memberId}'`)
    const intruder = IdentityKey.generate()
    const forged = await signDirectory(intruder, { version: 1, devices: [deviceEntry(intruder, crypto.randomUUID(), newXWingSeed(), 'Intruder')] })
    await writeRows(server.database, 'UPDATE directories SET body = ? WHERE user_id = ?', [Buffer.from(forged), memberId])
    try {
      const refused = await photos(owner.home, ['share', 'Holidays', member.email])
      expect(refused.code).toBe(EXIT.untrusted)
      expect(refused.stderr).toContain('their identity key is not the one this device pinned')
      const pending = await readRows(server.database, `SELECT user_id FROM album_members WHERE user_id = '${memberId}'`)
      expect(pending).toEqual([])
      // The number shown now is the intruder's: not the one the member's device shows.
      const shown = await photos(owner.home, ['safety-number', member.email, '--json'])
      const theirs = await photos(member.home, ['safety-number', owner.email, '--json'])
      expect(eventOf(shown, 'safety_number').safety_number).not.toBe(eventOf(theirs, 'safety_number').safety_number)
    } finally {
      await writeRows(server.database, 'UPDATE directories SET body = ? WHERE user_id = ?', [saved!.body, memberId])
    }
    expectOk(await photos(owner.home, ['share', 'Holidays', member.email]))
  })

  it('unshare takes an invitation back, or removes a member: they read nothing more', async () => {
    // The invitation the previous test left is taken back.
    const taken = await photos(owner.home, ['unshare', 'Holidays', member.email, '--json'])
    expectOk(taken)
    expect((await photos(member.home, ['invites'])).stdout).toContain('No invitations are waiting.')
    const albumId = eventOf(taken, 'unshared').album_id as string
    expectOk(await photos(owner.home, ['share', 'Holidays', member.email]))
    expectOk(await photos(member.home, ['invites', 'accept', albumId]))
    // A viewer adds nothing.
    const viewing = await photos(member.home, ['backup', path.join(work, 'member-pictures'), '--album', 'Holidays'])
    expect(viewing.code).toBe(EXIT.usage)
    expect(viewing.stderr).toContain('"Holidays" was shared with you to view')
    expectOk(await photos(owner.home, ['unshare', 'Holidays', member.email.toUpperCase()]))
    expect((await photos(owner.home, ['members', 'Holidays'])).stdout).toContain('"Holidays" is shared with nobody.')
    const { user_id: memberId } = await readJson<{ user_id: string }>(member.home, 'account.json')
    expect(await readRows(server.database, `SELECT user_id FROM album_members WHERE user_id = '${memberId}'`)).toEqual([])
    const again = await photos(owner.home, ['unshare', 'Holidays', member.email])
    expect(again.code).toBe(EXIT.usage)
    expect(again.stderr).toContain(`"Holidays" is not shared with ${member.email}`)

    // A server that lets the removed member back in, as if the removal had not happened: the owner's next look at the album exits 7.
    const { user_id: ownerId } = await readJson<{ user_id: string }>(owner.home, 'account.json')
    await writeRows(
      server.database,
      "INSERT INTO album_members (album_id, user_id, role, state, invited_by, invitation, created_at, accepted_at) VALUES (?, ?, 'viewer', 'active', ?, ?, 1, 2)",
      [albumId, memberId, ownerId, Buffer.from([1])],
    )
    try {
      const caught = await photos(owner.home, ['restore', 'Holidays', path.join(work, 'not-restored')])
      expect(caught.code).toBe(EXIT.untrusted)
      expect(caught.stderr).toContain(`the server lists ${member.email} as a member the owner did not add (or removed)`)
    } finally {
      await writeRows(server.database, 'DELETE FROM album_members WHERE user_id = ?', [memberId])
    }
    expectOk(await photos(owner.home, ['restore', 'Holidays', path.join(work, 'restored-by-owner')]))
  })
  it('partner: every album shared with the partner now, and each new one backup makes; the partner accepts them all at once', async () => {
    const named = await photos(owner.home, ['partner', member.email, '--json'])
    expectOk(named)
    expect(eventOf(named, 'shared')).toMatchObject({ email: member.email, role: 'viewer', invitations: 1 })
    // A new album: shared as backup makes it.
    const garden = path.join(work, 'garden')
    await mkdir(garden)
    await writePhoto(path.join(garden, 'rose.jpg'), { format: 'jpeg', width: 40, height: 30, seed: 8 })
    expectOk(await photos(owner.home, ['backup', garden, '--album', 'Garden']))
    const listed = await photos(member.home, ['partner', '--json'])
    expect(events(listed).filter((e) => e.event === 'partner_of')).toEqual([expect.objectContaining({ email: owner.email, role: 'viewer' })])
    expect(events(await photos(member.home, ['invites', '--json'])).filter((e) => e.event === 'invitation')).toHaveLength(2)
    const accepted = await photos(member.home, ['invites', 'accept', '--partners', '--json'])
    expectOk(accepted)
    expect(events(accepted).filter((e) => e.event === 'accepted')).toHaveLength(2)
    const albums = await photos(member.home, ['albums', '--json'])
    expect(
      events(albums)
        .filter((e) => e.event === 'album')
        .map((e) => e.name)
        .sort(),
    ).toEqual(['Garden', 'Holidays'])
    expectOk(await photos(owner.home, ['partner', '--stop', member.email]))
    expect((await photos(owner.home, ['partner'])).stdout).toContain('You share everything with nobody')
  })
})
