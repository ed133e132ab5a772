// `coffer-photos status`: who is logged in where, and whether this device is set up, read from
// the config folder alone (no request). Never a secret: no token, no key, only the identity
// key's fingerprint, which is public.
import { fromBase64 } from '../../sdk/bytes.ts'
import { IdentityKey } from '../../sdk/identity.ts'
import { EXIT, type Command } from './command.ts'
import { Home } from './home.ts'

export const status: Command = {
  name: 'status',
  summary: 'who is logged in where, and whether this device is set up',
  usage: [
    'usage: coffer-photos status [--json]',
    '',
    'Shows the server, the account, this device and whether it is set up, from the config folder',
    '(it asks the server nothing). Exit status 0 when logged in and set up, 3 otherwise.',
    '',
    '  --json   print it as one JSON line',
  ].join('\n'),
  options: {},
  async run({ out }) {
    const home = new Home()
    const account = home.readAccount()
    const loggedIn = account !== null && home.readTokens() !== null
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
      ['set up', setUp === 'unfinished' ? 'no (setup did not finish; run it again)' : setUp],
      ['identity key', fingerprint ?? '-'],
    ]
    for (const [name, value] of rows) out.say(`${`${name}:`.padEnd(14)} ${value}`)
    if (next !== null) out.say(`\nNext: ${next}`)
    out.event('status', {
      home: home.path,
      server: account?.server ?? null,
      email: account?.email ?? null,
      user_id: account?.user_id ?? null,
      device_id: account?.device_id ?? null,
      logged_in: loggedIn,
      set_up: setUp === 'yes',
      identity_fingerprint: fingerprint,
    })
    return next === null ? EXIT.ok : EXIT.setup
  },
}
