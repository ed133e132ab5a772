// `coffer-photos status`: who is logged in where, and whether this device is set up, read from
// the config folder; and whether the server still takes this device's session (one request, a
// few seconds at most: a session revoked from another device, or expired, shows here as on any
// other command). Never a secret: no token, no key, only the identity key's fingerprint, which
// is public.
import { fromBase64 } from '../../sdk/bytes.ts'
import type { Tokens } from '../../sdk/client.ts'
import { IdentityKey } from '../../sdk/identity.ts'
import { photosClient } from './account.ts'
import { EXIT, type Command } from './command.ts'
import type { Home, SavedAccount } from './home.ts'
import { describeError, sessionEnded, signedOutSentence } from './output.ts'

/** How long status waits for the server before it reports the session unchecked: one try, no retry pauses. */
const CHECK_TIMEOUT_MS = 5000

/** What the server says of the session: it takes it, it ended it, or it could not be asked (why). */
type SessionCheck = { readonly state: 'active' } | { readonly state: 'ended' } | { readonly state: 'unchecked'; readonly reason: string }

async function checkSession(home: Home, account: SavedAccount, tokens: Tokens, signal: AbortSignal): Promise<SessionCheck> {
  const client = photosClient(account.server, tokens, home, {
    signal,
    requestSignal: AbortSignal.any([signal, AbortSignal.timeout(CHECK_TIMEOUT_MS)]),
    attempts: 1,
  })
  try {
    await client.listSessions()
    return { state: 'active' }
  } catch (error) {
    if (sessionEnded(error)) return { state: 'ended' }
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError'
    return {
      state: 'unchecked',
      reason: timedOut ? `the server did not answer within ${CHECK_TIMEOUT_MS / 1000} s` : describeError(error, account.server).message,
    }
  }
}

const SESSION_TEXT = { active: 'active (the server takes it)', ended: 'ended: revoked or expired' } as const

export const status: Command = {
  usage: [
    'usage: coffer-photos status [--offline] [--json]',
    '',
    'Shows the server, the account, this device and whether it is set up, from the config folder,',
    "and asks the server whether it still takes this device's session (a session revoked from",
    'another device, or expired, means signing in again). Exit status 0 when logged in and set up,',
    '3 otherwise (the session ended included); a server that cannot be asked is reported, not an error.',
    '',
    '  --offline   ask the server nothing: the config folder alone',
    '  --json      print it as one JSON line',
  ].join('\n'),
  options: { offline: { type: 'boolean' } },
  async run({ values, out, signal, home }) {
    const account = home.readAccount()
    const tokens = home.readTokens()
    const session: SessionCheck | null =
      account === null || tokens === null
        ? null
        : values.offline === true
          ? { state: 'unchecked', reason: '--offline' }
          : await checkSession(home, account, tokens, signal)
    const loggedIn = session !== null && session.state !== 'ended'
    const keys = home.readKeys()
    const setUp = keys === null ? 'no' : keys.state === 'complete' ? 'yes' : 'unfinished'
    const fingerprint = keys === null ? null : IdentityKey.fromSeeds(fromBase64(keys.identity_seeds)).fingerprint
    const next = !loggedIn ? `coffer-photos login ${account?.server ?? '<server-url>'}` : setUp !== 'yes' ? 'coffer-photos setup' : null
    const rows: [string, string][] = [
      ['config folder', home.path],
      ['server', account?.server ?? '-'],
      ['email', account?.email ?? '-'],
      ['user id', account?.user_id ?? '-'],
      ['device id', account?.device_id ?? '-'],
      ['logged in', loggedIn ? 'yes' : 'no'],
      ['session', session === null ? '-' : session.state === 'unchecked' ? `not checked (${session.reason})` : SESSION_TEXT[session.state]],
      ['set up', setUp === 'unfinished' ? 'no (setup did not finish; run it again)' : setUp],
      ['identity key', fingerprint ?? '-'],
    ]
    for (const [name, value] of rows) out.say(`${`${name}:`.padEnd(14)} ${value}`)
    if (session?.state === 'ended') out.say(`\nT${signedOutSentence(account?.server ?? null).slice(1)}.`)
    else if (next !== null) out.say(`\nNext: ${next}`)
    out.event('status', {
      home: home.path,
      server: account?.server ?? null,
      email: account?.email ?? null,
      user_id: account?.user_id ?? null,
      device_id: account?.device_id ?? null,
      logged_in: loggedIn,
      session: session?.state ?? null,
      set_up: setUp === 'yes',
      identity_fingerprint: fingerprint,
    })
    return next === null ? EXIT.ok : EXIT.setup
  },
}
