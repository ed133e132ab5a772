// Racing publishes of one directory_version store exactly one of them (the others get 409
// version_conflict and the stored bytes are the winner's), and racing first publishes under
// different identity keys bind exactly one key.
import { encode } from 'cborg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CofferClient } from '../../src/sdk/client.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { raw, registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const ROUNDS = 5

function directory(version: number, writer: string): Buffer {
  return Buffer.from(encode({ directory_version: version, writer }))
}

function publishRaw(client: CofferClient, body: Uint8Array, identity: IdentityKey) {
  return raw(server, 'POST', '/v1/auth/devices/directory', {
    headers: { authorization: `Bearer ${client.tokens!.access_token}`, 'content-type': 'application/cbor', 'x-service-identity-key': identity.publicKeyBase64 },
    body,
  })
}

async function account(label: string) {
  const member = await registered(server, label)
  const { user_id: userId } = await member.client.getProfile()
  return { client: member.client, userId }
}

async function storedBytes(client: CofferClient, userId: string): Promise<Buffer> {
  const fetched = await client.fetchDirectory(userId)
  return Buffer.from(fetched!.bytes)
}

describe.each([[2], [8]])('%i racing publishes of one version', (width) => {
  it('as the first publish: exactly one 200, the rest 409 version_conflict, and the winner’s bytes stored', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { client, userId } = await account(`first-${width}`)
      const identity = IdentityKey.generate()
      const bodies = Array.from({ length: width }, (_, i) => directory(1, `writer ${i}`))
      const answers = await Promise.all(bodies.map((body) => publishRaw(client, body, identity)))

      const winners = answers.flatMap((answer, i) => (answer.status === 200 ? [i] : []))
      expect(winners, answers.map((a) => a.text).join('\n')).toHaveLength(1)
      for (const [i, answer] of answers.entries()) {
        if (i === winners[0]) {
          expect(answer.json).toEqual({ directory_version: 1 })
        } else {
          expect(answer.status).toBe(409)
          expect(answer.json).toMatchObject({ code: 'error.directory.version_conflict', submitted: 1, stored: 1 })
        }
      }
      expect((await storedBytes(client, userId)).equals(bodies[winners[0]!]!)).toBe(true)
    }
  })

  it('over a stored directory: exactly one 200, the rest 409 version_conflict, and the winner’s bytes stored', async () => {
    const { client, userId } = await account(`later-${width}`)
    const identity = IdentityKey.generate()
    await client.publishDirectory(directory(0, 'setup'), identity)
    for (let round = 1; round <= ROUNDS; round++) {
      const bodies = Array.from({ length: width }, (_, i) => directory(round, `round ${round} writer ${i}`))
      const answers = await Promise.all(bodies.map((body) => publishRaw(client, body, identity)))
      const winners = answers.flatMap((answer, i) => (answer.status === 200 ? [i] : []))
      expect(winners, answers.map((a) => a.text).join('\n')).toHaveLength(1)
      for (const [i, answer] of answers.entries()) {
        if (i !== winners[0]) expect(answer.json).toMatchObject({ code: 'error.directory.version_conflict', submitted: round, stored: round })
      }
      expect((await storedBytes(client, userId)).equals(bodies[winners[0]!]!)).toBe(true)
    }
  })

  it('on several accounts at once, each account gets exactly one winner', async () => {
    const accounts = await Promise.all(Array.from({ length: 4 }, (_, i) => account(`many-${width}-${i}`)))
    const identities = accounts.map(() => IdentityKey.generate())
    const bodies = accounts.map((_, a) => Array.from({ length: width }, (__, i) => directory(3, `account ${a} writer ${i}`)))
    const answers = await Promise.all(accounts.map((acc, a) => Promise.all(bodies[a]!.map((body) => publishRaw(acc.client, body, identities[a]!)))))
    for (const [a, perAccount] of answers.entries()) {
      const winners = perAccount.flatMap((answer, i) => (answer.status === 200 ? [i] : []))
      expect(winners).toHaveLength(1)
      expect(perAccount.filter((answer) => answer.status === 409)).toHaveLength(width - 1)
      expect((await storedBytes(accounts[a]!.client, accounts[a]!.userId)).equals(bodies[a]![winners[0]!]!)).toBe(true)
    }
  })
})

describe('racing first publishes under different identity keys', () => {
  it('bind exactly one key; the other gets 409 identity_key_mismatch and stores nothing', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { client, userId } = await account('keys')
      const keys = [IdentityKey.generate(), IdentityKey.generate()]
      // Different versions, so that a loser can only be refused for its key.
      const bodies = [directory(1, 'key 0'), directory(2, 'key 1')]
      const answers = await Promise.all(keys.map((key, i) => publishRaw(client, bodies[i]!, key)))

      const winner = answers.findIndex((answer) => answer.status === 200)
      expect(winner, answers.map((a) => a.text).join('\n')).not.toBe(-1)
      const loser = 1 - winner
      expect(answers[loser]!.status).toBe(409)
      expect(answers[loser]!.json?.code).toBe('error.directory.identity_key_mismatch')
      expect((await storedBytes(client, userId)).equals(bodies[winner]!)).toBe(true)

      // The winner's key is the bound one: it can publish again, the loser's still cannot.
      const next = directory(10, 'after')
      expect((await publishRaw(client, next, keys[loser]!)).json?.code).toBe('error.directory.identity_key_mismatch')
      expect((await publishRaw(client, next, keys[winner]!)).status).toBe(200)
      expect((await storedBytes(client, userId)).equals(next)).toBe(true)
    }
  })

  it('with several keys and several publishes per key: every success is under one key, every other key is refused', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { client, userId } = await account('many-keys')
      const keys = Array.from({ length: 4 }, () => IdentityKey.generate())
      const attempts = keys.flatMap((key, k) =>
        [0, 1].map((j) => ({ key: k, version: 1 + k * 2 + j, body: directory(1 + k * 2 + j, `key ${k} try ${j}`), identity: key })),
      )
      const answers = await Promise.all(attempts.map((a) => publishRaw(client, a.body, a.identity)))

      const succeeded = attempts.filter((_, i) => answers[i]!.status === 200)
      expect(succeeded.length).toBeGreaterThanOrEqual(1)
      const bound = succeeded[0]!.key
      for (const [i, attempt] of attempts.entries()) {
        const answer = answers[i]!
        if (attempt.key !== bound) {
          expect(answer.status).toBe(409)
          expect(answer.json?.code).toBe('error.directory.identity_key_mismatch')
        } else if (answer.status !== 200) {
          // The bound key's other publish lost the version race, never the key check.
          expect(answer.json?.code).toBe('error.directory.version_conflict')
        }
      }
      // The stored directory is one of the bound key's successful bodies: the highest version wins.
      const storedNow = await storedBytes(client, userId)
      const highest = succeeded.reduce((best, a) => (a.version > best.version ? a : best))
      expect(storedNow.equals(highest.body)).toBe(true)
    }
  })
})
