// revoke-all: `POST /v1/auth/sessions/revoke-all` on a real Coffer server, each with a fresh
// single-use challenge and its hybrid proof (Ed25519 + ML-DSA-65 over the canonical signing
// bytes). Challenges are issued (a bearer call each) and proofs signed before the measured
// window: only the revoke call is timed (read the challenge with the bound identity key, verify
// the proof, then burn the challenge and close every session in one transaction). Each worker
// has an account of its own, signed in once per batch, so an account has at most a couple of
// sessions to close (the first revoke of a batch closes them, the rest find none). Ceiling: raw
// hybridVerify in CONCURRENCY loops in one process, parsing the key every time as the server did
// until it kept the keys it parsed (cachingHybridVerifier in src/crypto/hybrid.ts).
import { uploader, PASSWORD, type Uploader } from '../lib/albums.ts'
import { startChild } from '../lib/child.ts'
import { startCoffer, type CofferChild } from '../lib/coffer.ts'
import { expectStatus, inParallel, preparedContender } from '../lib/loop.ts'
import { childLoop, type Contender } from '../lib/measure.ts'
import { measureAgainst, POSTGRES_SKIPPED, type Scenario, type Target } from '../lib/scenario.ts'
import type { HybridRun } from '../servers/hybrid-raw.ts'

/** Revoke-alls (and raw verifications) in flight: twice the default libuv pool, as in login. */
const CONCURRENCY = 8
/**
 * Proofs per measurement at most: each costs a challenge call and an ML-DSA-65 signature
 * (about 1 ms of CPU) beforehand, so a measurement ends when its batch is spent if that comes
 * before BENCH_SECONDS.
 */
const MAX_BATCH = Number(process.env.BENCH_REVOKE_BATCH ?? 2500)
const CEILING = 'raw hybridVerify'
const SERVER_ENV = { REVOKE_CHALLENGE_TTL_S: '3600' }
/** Issue 16's target, on either engine. */
const TARGET: Target = { min: 0.5 }

interface Proof {
  readonly body: string
}

function revokeLoad(name: string, server: CofferChild, accounts: readonly Uploader[]): Contender {
  return preparedContender<Proof>({
    name,
    url: server.ready.url,
    concurrency: CONCURRENCY,
    subjectCpu: () => server.cpuSeconds(),
    initialRate: 500,
    maxBatch: MAX_BATCH,
    async prepare(perWorker) {
      return Promise.all(
        accounts.map(async (account) => {
          // The last batch ended this account's sessions: sign in again to ask for challenges.
          const signedIn = await account.client.login(account.email, PASSWORD)
          if (signedIn.kind !== 'session') throw new Error('login asked for a second factor')
          const slots = Array.from({ length: perWorker }, (_, i) => i)
          return inParallel(slots, 4, async () => {
            const { challenge } = await account.client.revokeAllChallenge()
            return { body: JSON.stringify({ challenge, proof: await account.identity.proveRevokeAll(account.userId, challenge) }) }
          })
        }),
      )
    },
    async run(proof, http) {
      expectStatus(await http.call('POST', '/v1/auth/sessions/revoke-all', { 'content-type': 'application/json' }, proof.body), 200, 'revoke-all')
      return 1
    },
  })
}

async function accountsOn(server: CofferChild): Promise<Uploader[]> {
  return inParallel(
    Array.from({ length: CONCURRENCY }, (_, i) => i),
    4,
    () => uploader(server),
  )
}

export const revokeAll: Scenario = {
  name: 'revoke-all',
  summary: `POST /v1/auth/sessions/revoke-all with prepared challenges and hybrid proofs, ${CONCURRENCY} in flight; ceiling: ${CEILING} at the same concurrency`,
  async run(context) {
    const raw = await startChild<unknown>('servers/hybrid-raw.ts')
    context.defer(() => raw.stop())
    const ceiling = childLoop(CEILING, raw, (seconds): HybridRun => ({ operation: 'verify', seconds, concurrency: CONCURRENCY }))
    const contenders: Contender[] = [ceiling]
    const subjects: Array<[subject: string, target: Target | null]> = []

    const sqlite = await startCoffer(context, { engine: 'sqlite', logLevel: 'info', env: SERVER_ENV })
    contenders.push(revokeLoad('revoke-all, coffer sqlite', sqlite, await accountsOn(sqlite)))
    subjects.push(['revoke-all, coffer sqlite', TARGET])
    const notes = [
      `Only the revoke call is timed: challenges (a bearer call each) and proofs are made before each measurement, at most ${MAX_BATCH} (BENCH_REVOKE_BATCH), so a measurement may end before BENCH_SECONDS when its batch is spent.`,
    ]
    if (context.postgresUrl !== null) {
      const postgres = await startCoffer(context, { engine: 'postgres', logLevel: 'info', env: SERVER_ENV })
      contenders.push(revokeLoad('revoke-all, coffer postgres', postgres, await accountsOn(postgres)))
      subjects.push(['revoke-all, coffer postgres', TARGET])
    } else {
      notes.push(POSTGRES_SKIPPED)
    }
    return measureAgainst(context, 'revoke-all', contenders, subjects, CEILING, 'proof', notes)
  },
}
