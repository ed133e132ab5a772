// A burst of concurrent upload opens of one account, each on its own album (so that no album
// lock orders them), never takes the account past ACCOUNT_QUOTA_BYTES or MAX_OPEN_UPLOADS:
// exactly as many open as fit and every other one answers 507, on one instance and on two
// instances sharing one PostgreSQL database.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferClient, CofferProblem } from '../../src/sdk/client.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { readRows, testEngine } from '../support/database.ts'
import { startInstances, type Instances } from '../support/server.ts'

const QUOTA = 10_000
const MAX_OPEN = 6
const BURST = 20
const ROUNDS = 4

/** Fires `BURST` opens at once, spread over `urls`, each declaring one fresh blob of `size` bytes on an album of its own. */
async function burst(member: Uploader, urls: readonly string[], size: number): Promise<Array<{ status: number; code: string | null }>> {
  const albums = await Promise.all(Array.from({ length: BURST }, () => album(member)))
  const clients = urls.map((baseUrl) => new CofferClient({ baseUrl, tokens: member.client.tokens }))
  return Promise.all(
    albums.map(async (albumId, i) => {
      const hash = randomBytes(32).toString('hex')
      try {
        await clients[i % clients.length]!.openUploadSession({
          album_id: albumId,
          crypto_suite_id: 1,
          ciphertext_hash: hash,
          blobs: [{ role: 'original', hash, size }],
        })
        return { status: 201, code: null }
      } catch (error) {
        if (!(error instanceof CofferProblem)) throw error
        return { status: error.status, code: error.code }
      }
    }),
  )
}

async function openSessionRows(instances: Instances, member: Uploader): Promise<number> {
  const [row] = await readRows(instances.instances[0]!.database, `select count(*) as n from upload_sessions where owner_id = '${member.userId}'`)
  return Number(row?.n)
}

function racesOn(count: number) {
  let instances: Instances
  beforeAll(async () => {
    instances = await startInstances(count, { ACCOUNT_QUOTA_BYTES: String(QUOTA), MAX_OPEN_UPLOADS: String(MAX_OPEN) })
  })
  afterAll(() => instances.close())
  const urls = () => instances.instances.map((instance) => instance.url)

  it('of a burst declaring 2000 bytes each, opens exactly the 5 that fit the quota; the rest answer 507 error.quota.exceeded', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const member = await uploader(instances.instances[0]!, `quota-race-${round}`)
      const answers = await burst(member, urls(), 2000)
      expect(answers.filter((a) => a.status === 201)).toHaveLength(QUOTA / 2000)
      expect(answers.filter((a) => a.status !== 201)).toEqual(
        Array.from({ length: BURST - QUOTA / 2000 }, () => ({ status: 507, code: 'error.quota.exceeded' })),
      )
      expect(await member.client.storageUsage()).toMatchObject({ stored_bytes: 0, pending_bytes: QUOTA, open_uploads: QUOTA / 2000 })
      expect(await openSessionRows(instances, member)).toBe(QUOTA / 2000)
    }
  }, 120_000)

  it(`of a burst of small sessions, opens exactly MAX_OPEN_UPLOADS (${MAX_OPEN}); the rest answer 507 error.quota.too_many_uploads`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const member = await uploader(instances.instances[0]!, `cap-race-${round}`)
      const answers = await burst(member, urls(), 10)
      expect(answers.filter((a) => a.status === 201)).toHaveLength(MAX_OPEN)
      expect(answers.filter((a) => a.status !== 201)).toEqual(
        Array.from({ length: BURST - MAX_OPEN }, () => ({ status: 507, code: 'error.quota.too_many_uploads' })),
      )
      expect(await member.client.storageUsage()).toMatchObject({ pending_bytes: 10 * MAX_OPEN, open_uploads: MAX_OPEN })
      expect(await openSessionRows(instances, member)).toBe(MAX_OPEN)
    }
  }, 120_000)
}

describe('concurrent upload opens on one instance', () => {
  racesOn(1)
})

// SQLite is for one instance (README, "PostgreSQL and several instances").
if (testEngine === 'postgres')
  describe('concurrent upload opens on two instances sharing one database', () => {
    racesOn(2)
  })
