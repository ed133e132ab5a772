// `coffer-photos revoke-all`: ends every session of the account, on every device, this one
// included (SPEC: "revoke all sessions"). A session alone cannot do it: the server gives this
// session a single-use challenge, this device signs it with the account's identity key, and the
// signed challenge (not a token) is what ends them all, so a stolen token can end only itself.
import { revokeAllSigningBytes } from '../../contract/signing.ts'
import { fromBase64, toBase64 } from '../../sdk/bytes.ts'
import { nativeIdentity } from '../../client/node/crypto.ts'
import { commandClientOptions, photosClient, savedSession } from './account.ts'
import { EXIT, Interrupted, SetupNeeded, UsageError, type Command } from './command.ts'

export const revokeAll: Command = {
  usage: [
    'usage: coffer-photos revoke-all [--yes] [--json]',
    '',
    'Ends every session of the account, on every device, this one included: for a lost or stolen',
    "device, or a session you do not recognize. The server asks for proof of the account's",
    'identity key, which this device holds (it must be set up); a session alone cannot do it.',
    'Afterwards every device, this one too, says it was signed out; the keys stay on each, and',
    '`coffer-photos login` signs it in again.',
    '',
    '  --yes    do not ask first (needed without a terminal)',
    '  --json   print the result as one JSON line',
  ].join('\n'),
  options: { yes: { type: 'boolean' } },
  async run({ positionals, values, out, signal, home, prompts }) {
    if (positionals.length > 0) throw new UsageError('revoke-all takes no arguments')
    if (values.yes !== true && !prompts.interactive()) throw new UsageError('--yes is needed: there is no terminal to confirm on')
    const { account, tokens } = savedSession(home)
    const keys = home.readKeys()
    if (keys === null || keys.state !== 'complete') {
      throw new SetupNeeded(
        `revoke-all needs the account's identity key, and this device does not hold it (it is not set up): run it on a device that is, or \`coffer-photos logout\` to end only this device's session`,
      )
    }
    const client = photosClient(account.server, tokens, home, commandClientOptions(out, signal))
    const { sessions } = await client.listSessions()
    const question = `Sign out all ${sessions.length} session${sessions.length === 1 ? '' : 's'} of ${account.email}, on every device, this one included?`
    if (!(await prompts.confirmed(values.yes === true, { message: question, signal }))) throw new Interrupted('nothing was changed: every session stays')

    const { challenge } = await client.revokeAllChallenge()
    const proof = toBase64(await nativeIdentity(fromBase64(keys.identity_seeds)).sign(revokeAllSigningBytes(account.user_id, challenge)))
    const revoked = await client.revokeAll(challenge, proof)
    client.tokens = null // this session ended with the others: forgotten here, as logout does (the keys stay)

    out.say(`Signed out every session of ${account.email} on ${account.server}: ${revoked} ended, this device's included.`)
    out.say(`This device is signed out too: run \`coffer-photos login ${account.server}\` to sign in again. Each other device says`)
    out.say('it was signed out on its next command and signs in again the same way; the keys stay on every device.')
    out.event('revoked_all', { server: account.server, email: account.email, revoked, signed_out_here: true })
    return EXIT.ok
  },
}
