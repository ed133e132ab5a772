// Racing clients cannot duplicate or overfill the enrollment relay: concurrent drains hand each
// payload to exactly one caller in arrival order, concurrent redeems of one code (either
// spelling) open exactly one channel, and concurrent relays never push a mailbox past 64, also
// while drains race them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferProblem, type RelayDirection } from '../../src/sdk/client.ts'
import { registered } from '../support/actors.ts'
import { readRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  // The losing redeems of the races below are refusals; keep the throttle out of the way.
  server = await startServer({ REDEEM_MAX_FAILURES: '100000' })
})
afterAll(() => server.close())

type Settled<T> = { ok: true; value: T } | { ok: false; problem: CofferProblem }

async function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await promise }
  } catch (error) {
    if (!(error instanceof CofferProblem)) throw error
    return { ok: false, problem: error }
  }
}

async function openChannel(): Promise<string> {
  const member = await registered(server, 'race')
  const code = await member.client.issueEnrollmentCode()
  return (await server.client().redeemEnrollmentCode(code.code)).channel_id
}

async function post(channelId: string, direction: RelayDirection, payloads: readonly string[]): Promise<void> {
  const client = server.client()
  for (const payload of payloads) await client.relay(channelId, direction, payload)
}

/** Positions of `received` in `sent`; fails on anything not sent. */
function positions(sent: readonly string[], received: readonly string[]): number[] {
  return received.map((payload) => {
    const index = sent.indexOf(payload)
    expect(index, `unexpected payload ${payload}`).toBeGreaterThanOrEqual(0)
    return index
  })
}

function expectIncreasing(indexes: readonly number[]): void {
  for (let i = 1; i < indexes.length; i++) expect(indexes[i]!).toBeGreaterThan(indexes[i - 1]!)
}

describe('concurrent drains', () => {
  it('hand each of 40 payloads to exactly one of 4 drains, in arrival order, round after round', async () => {
    const channelId = await openChannel()
    for (let round = 0; round < 6; round++) {
      const sent = Array.from({ length: 40 }, (_, i) => `r${round}-p${String(i).padStart(2, '0')}`)
      await post(channelId, 'to_enrollee', sent)
      await post(channelId, 'to_initiator', [`other-${round}`])

      const drains = await Promise.all(Array.from({ length: 4 }, () => server.client().drain(channelId, 'to_enrollee')))
      for (const drained of drains) expectIncreasing(positions(sent, drained))
      const all = drains.flat()
      expect(all).toHaveLength(sent.length)
      expect(new Set(all).size).toBe(sent.length)
      expect([...all].sort()).toEqual(sent)
      expect(await server.client().drain(channelId, 'to_enrollee')).toEqual([])
      // The other mailbox was not touched by any of them.
      expect(await server.client().drain(channelId, 'to_initiator')).toEqual([`other-${round}`])
    }
  })

  it('hand each payload to exactly one drain while a sender is still posting', async () => {
    const channelId = await openChannel()
    const sent = Array.from({ length: 40 }, (_, i) => `live-${String(i).padStart(2, '0')}`)
    let sending = true
    const sender = post(channelId, 'to_enrollee', sent).finally(() => {
      sending = false
    })
    const receivers = Array.from({ length: 4 }, async () => {
      const client = server.client()
      const batches: string[][] = []
      while (sending) batches.push(await client.drain(channelId, 'to_enrollee'))
      batches.push(await client.drain(channelId, 'to_enrollee'))
      return batches
    })
    await sender
    const perReceiver = await Promise.all(receivers)
    // What one receiver took, batch after batch, is in arrival order.
    for (const batches of perReceiver) expectIncreasing(positions(sent, batches.flat()))
    const all = perReceiver.flat(2)
    expect(all).toHaveLength(sent.length)
    expect([...all].sort()).toEqual(sent)
    expect(await server.client().drain(channelId, 'to_enrollee')).toEqual([])
  })
})

describe('concurrent redeems of one code', () => {
  it('open exactly one channel whichever spelling wins', async () => {
    for (let round = 0; round < 8; round++) {
      const member = await registered(server, 'redeem-race')
      const code = await member.client.issueEnrollmentCode()
      const spellings = [code.code, code.text_fallback, code.code, `${code.text_fallback.slice(0, 5)}-${code.text_fallback.slice(5)}`]
      const answers = await Promise.all(spellings.map((spelling) => settle(server.client().redeemEnrollmentCode(spelling))))
      const opened = answers.filter((a) => a.ok)
      const refused = answers.filter((a) => !a.ok)
      expect(opened, `round ${round}`).toHaveLength(1)
      for (const answer of refused) {
        expect(answer.problem.status).toBe(404)
        expect(answer.problem.code).toBe('error.enroll.code_refused')
      }
      // The one channel is real and belongs to the issuer.
      const channelId = opened[0]!.ok ? opened[0]!.value.channel_id : ''
      await server.client().relay(channelId, 'to_initiator', 'hi')
      expect(await member.client.drain(channelId, 'to_initiator')).toEqual(['hi'])
      await member.client.closeChannel(channelId)
    }
  })

  it('of the two spellings alone, pairwise, give one 200 and one 404', async () => {
    for (let round = 0; round < 10; round++) {
      const member = await registered(server, 'pair-race')
      const code = await member.client.issueEnrollmentCode()
      const order = round % 2 === 0 ? [code.code, code.text_fallback] : [code.text_fallback, code.code]
      const answers = await Promise.all(order.map((spelling) => settle(server.client().redeemEnrollmentCode(spelling))))
      expect(answers.filter((a) => a.ok)).toHaveLength(1)
      expect(answers.filter((a) => !a.ok).map((a) => (a.ok ? 0 : a.problem.status))).toEqual([404])
    }
  })
})

describe('concurrent relays into a nearly full mailbox', () => {
  it('never store more than 64: with 60 held, exactly 4 of 10 posts succeed', async () => {
    for (let round = 0; round < 3; round++) {
      const channelId = await openChannel()
      const held = Array.from({ length: 60 }, (_, i) => `held-${String(i).padStart(2, '0')}`)
      await post(channelId, 'to_enrollee', held)
      const racing = Array.from({ length: 10 }, (_, i) => `racing-${i}`)
      const answers = await Promise.all(racing.map((payload) => settle(server.client().relay(channelId, 'to_enrollee', payload))))

      const accepted = racing.filter((_, i) => answers[i]!.ok)
      expect(accepted, `round ${round}`).toHaveLength(4)
      for (const answer of answers) {
        if (!answer.ok) {
          expect(answer.problem.status).toBe(422)
          expect(answer.problem.code).toBe('error.enroll.mailbox_full')
        }
      }
      const drained = await server.client().drain(channelId, 'to_enrollee')
      expect(drained).toHaveLength(64)
      expect(drained.slice(0, 60)).toEqual(held)
      expect([...drained.slice(60)].sort()).toEqual([...accepted].sort())
      // The other mailbox has its own bound.
      await post(channelId, 'to_initiator', ['unaffected'])
      expect(await server.client().drain(channelId, 'to_initiator')).toEqual(['unaffected'])
    }
  })

  it('fill an empty mailbox to exactly 64 from 80 concurrent posts', async () => {
    const channelId = await openChannel()
    const racing = Array.from({ length: 80 }, (_, i) => `burst-${i}`)
    const answers = await Promise.all(racing.map((payload) => settle(server.client().relay(channelId, 'to_initiator', payload))))
    const accepted = racing.filter((_, i) => answers[i]!.ok)
    expect(accepted).toHaveLength(64)
    expect(answers.filter((a) => !a.ok).every((a) => !a.ok && a.problem.code === 'error.enroll.mailbox_full')).toBe(true)
    const drained = await server.client().drain(channelId, 'to_initiator')
    expect([...drained].sort()).toEqual([...accepted].sort())
  })
})

describe('drains racing relays into one mailbox', () => {
  it('lose and duplicate nothing, and leave the bound exact: an emptied mailbox then takes exactly 64', async () => {
    const channelId = await openChannel()
    let held = Array.from({ length: 40 }, (_, i) => `fill-${i}`)
    await post(channelId, 'to_enrollee', held)
    for (let round = 0; round < 6; round++) {
      // Posts land before, between and after the drains' own reads of the mailbox.
      const racing = Array.from({ length: 40 }, (_, i) => `r${round}-${i}`)
      const posts = racing.map((payload) => settle(server.client().relay(channelId, 'to_enrollee', payload)))
      const drains = [0, 1, 2].map(() => server.client().drain(channelId, 'to_enrollee'))
      const answers = await Promise.all(posts)
      expect(
        answers.filter((a) => !a.ok).every((a) => !a.ok && a.problem.code === 'error.enroll.mailbox_full'),
        `round ${round}`,
      ).toBe(true)
      const accepted = racing.filter((_, i) => answers[i]!.ok)
      const drained = [...(await Promise.all(drains)).flat(), ...(await server.client().drain(channelId, 'to_enrollee'))]
      expect([...drained].sort(), `round ${round}`).toEqual([...held, ...accepted].sort())
      // Emptied: 70 racing posts find room for exactly 64, whatever the drains and posts above counted.
      const topUp = Array.from({ length: 70 }, (_, i) => `top-${round}-${i}`)
      const topUpAnswers = await Promise.all(topUp.map((payload) => settle(server.client().relay(channelId, 'to_enrollee', payload))))
      expect(
        topUpAnswers.filter((a) => a.ok),
        `round ${round}`,
      ).toHaveLength(64)
      expect(await server.client().drain(channelId, 'to_enrollee')).toHaveLength(64)
      held = Array.from({ length: 40 }, (_, i) => `fill-${round}-${i}`)
      await post(channelId, 'to_enrollee', held)
    }
  })
})

describe('the count of held payloads on the channel row', () => {
  it('equals the payloads each mailbox holds after hundreds of appends and drains raced on the storage', async () => {
    const member = await registered(server, 'counted')
    const channelHash = `counted-${Date.now()}`
    const now = server.clock.now()
    const { user_id: initiatorId } = await member.client.getProfile()
    await server.deps.storage.openChannel({ channelHash, initiatorId, createdAt: now, expiresAt: now + 600_000 })
    const { storage } = server.deps
    for (let round = 0; round < 5; round++) {
      const work = Array.from({ length: 120 }, (_, i) =>
        i % 8 === 7
          ? storage.drainMailbox(channelHash, i % 16 === 7 ? 'to_enrollee' : 'to_initiator', now)
          : storage.appendToMailbox(channelHash, i % 2 === 0 ? 'to_enrollee' : 'to_initiator', `p${round}-${i}`, now, 10_000),
      )
      await Promise.all(work)
      const [channel] = await readRows(server.database, `select held_to_initiator, held_to_enrollee from relay_channels where channel_hash = '${channelHash}'`)
      const held = await readRows(
        server.database,
        `select direction, count(*) as n from relay_messages where channel_hash = '${channelHash}' group by direction`,
      )
      const count = (direction: string) => Number(held.find((row) => row.direction === direction)?.n ?? 0)
      expect([Number(channel?.held_to_initiator), Number(channel?.held_to_enrollee)], `round ${round}`).toEqual([count('to_initiator'), count('to_enrollee')])
    }
  })
})

describe('concurrent refused redeems from one address', () => {
  it('get exactly REDEEM_MAX_FAILURES codes looked at (404), every other one 429', async () => {
    const first = await startServer({ REDEEM_MAX_FAILURES: '3' })
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => settle(first.client().redeemEnrollmentCode(`not-a-code-${i}`))))
      const statuses = answers.map((answer) => (answer.ok ? 200 : answer.problem.status))
      expect(statuses.filter((status) => status === 404)).toHaveLength(3)
      expect(statuses.filter((status) => status === 429)).toHaveLength(37)
      // A code issued now is not looked at either: the address is blocked until the window passes.
      const member = await registered(first, 'throttled')
      const code = await member.client.issueEnrollmentCode()
      expect((await settle(first.client().redeemEnrollmentCode(code.code))).ok).toBe(false)
    } finally {
      await first.close()
    }
  })

  it('count a successful redemption as nothing: the limit is on refused ones', async () => {
    const spare = await startServer({ REDEEM_MAX_FAILURES: '2' })
    try {
      const member = await registered(spare, 'spare')
      for (let i = 0; i < 3; i++) {
        const code = await member.client.issueEnrollmentCode()
        expect((await spare.client().redeemEnrollmentCode(code.code)).channel_id).toBeTruthy()
      }
      const refused = await Promise.all([1, 2, 3].map((i) => settle(spare.client().redeemEnrollmentCode(`nothing-${i}`))))
      expect(refused.map((answer) => (answer.ok ? 200 : answer.problem.status)).sort()).toEqual([404, 404, 429])
    } finally {
      await spare.close()
    }
  })
})
