// relay: device-enrollment relay round trips on a real Coffer server. One end posts a payload
// into a mailbox (`POST /v1/auth/devices/enroll/channel/{id}`), the other end drains it
// (`GET ...?direction=`) and must get exactly that payload back; the directions alternate.
// Closed loop: CONCURRENCY workers, each on a channel of its own. Ceiling: the same round trip
// against a bare Fastify server with the two routes over an in-memory mailbox.
import { randomBytes, randomUUID } from 'node:crypto'
import { CofferClient, type RelayDirection } from '../../src/sdk/client.ts'
import { PASSWORD } from '../lib/albums.ts'
import { startChild, type Child } from '../lib/child.ts'
import { startCoffer, type CofferChild } from '../lib/coffer.ts'
import { closedLoop, expectStatus, HttpClient } from '../lib/loop.ts'
import type { Contender } from '../lib/measure.ts'
import { measureAgainst, POSTGRES_SKIPPED, type Scenario, type Target } from '../lib/scenario.ts'

/** Round trips in flight, one channel each. */
const CONCURRENCY = 8
/** An enrollment message: 1 KiB of ciphertext in base64. */
const PAYLOAD_BYTES = 1024
const CEILING = 'bare Fastify + in-memory mailbox'
// A run that waits for a quiet machine can outlast the default 10 minutes of a channel.
const SERVER_ENV = { RELAY_CHANNEL_TTL_S: '3600' }
/** Issue 16's target, on either engine. */
const TARGET: Target = { min: 0.1 }

/** Opens `count` channels the way two devices do: a fresh session issues a code, the new device redeems it. */
async function openChannels(server: CofferChild, count: number): Promise<string[]> {
  const initiator = new CofferClient({ baseUrl: server.ready.url })
  await initiator.register(`bench-${randomUUID()}@example.test`, PASSWORD)
  const enrollee = new CofferClient({ baseUrl: server.ready.url })
  const channels: string[] = []
  for (let i = 0; i < count; i++) {
    const { code } = await initiator.issueEnrollmentCode()
    channels.push((await enrollee.redeemEnrollmentCode(code)).channel_id)
  }
  return channels
}

function relayLoad(name: string, child: Child<{ readonly url: string }>, channels: readonly string[]): Contender {
  const payloads = channels.map(() => randomBytes(PAYLOAD_BYTES).toString('base64'))
  const directions: readonly RelayDirection[] = ['to_enrollee', 'to_initiator']
  return {
    name,
    async measure(seconds) {
      const http = new HttpClient(child.ready.url)
      const turns = channels.map(() => 0)
      try {
        return await closedLoop({ concurrency: CONCURRENCY, seconds, subjectCpu: () => child.cpuSeconds() }, async (worker) => {
          const channel = channels[worker]
          const payload = payloads[worker]
          const turn = (turns[worker] ?? 0) + 1
          turns[worker] = turn
          const direction = directions[turn % 2]
          if (channel === undefined || payload === undefined || direction === undefined) throw new Error(`no channel for worker ${worker}`)
          const path = `/v1/auth/devices/enroll/channel/${channel}`
          expectStatus(await http.call('POST', path, { 'content-type': 'application/json' }, JSON.stringify({ direction, payload })), 204, 'relay')
          const drained = await http.call('GET', `${path}?direction=${direction}`)
          expectStatus(drained, 200, 'drain')
          const got = (JSON.parse(drained.body.toString('utf8')) as { payloads: string[] }).payloads
          if (got.length !== 1 || got[0] !== payload) throw new Error(`drain: got ${got.length} payload(s), not the one posted`)
          return 1
        })
      } finally {
        http.close()
      }
    },
  }
}

export const relay: Scenario = {
  name: 'relay',
  summary: `enrollment relay round trips (post a ${PAYLOAD_BYTES}-byte payload, drain it at the other end), ${CONCURRENCY} in flight on ${CONCURRENCY} channels; ceiling: ${CEILING}`,
  async run(context) {
    const contenders: Contender[] = []
    const subjects: Array<[subject: string, target: Target | null]> = []

    const sqlite = await startCoffer(context, { engine: 'sqlite', logLevel: 'info', env: SERVER_ENV })
    const channels = await openChannels(sqlite, CONCURRENCY)
    // The ceiling knows the very channel ids Coffer opened: both see byte-identical requests.
    const ceiling = await startChild<{ url: string }>('servers/bare-relay.ts', { env: { BENCH_CHANNELS: channels.join(',') } })
    context.defer(() => ceiling.stop())
    contenders.push(relayLoad(CEILING, ceiling, channels))
    contenders.push(relayLoad('relay, coffer sqlite', sqlite, channels))
    subjects.push(['relay, coffer sqlite', TARGET])

    const notes = [
      `A round trip is two requests (a relay, 204, then a drain, 200, whose payload is checked); ${CONCURRENCY} in flight, each on its own channel, directions alternating. Both are writes on Coffer: on PostgreSQL one statement each whose commit does not wait for the disk (decisions 0025, 0036); on SQLite a durable transaction each, its fdatasync off the event loop (decision 0037).`,
    ]
    if (context.postgresUrl !== null) {
      const postgres = await startCoffer(context, { engine: 'postgres', logLevel: 'info', env: SERVER_ENV })
      contenders.push(relayLoad('relay, coffer postgres', postgres, await openChannels(postgres, CONCURRENCY)))
      subjects.push(['relay, coffer postgres', TARGET])
    } else {
      notes.push(POSTGRES_SKIPPED)
    }
    return measureAgainst(context, 'relay', contenders, subjects, CEILING, 'rt', notes)
  },
}
