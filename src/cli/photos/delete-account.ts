// `coffer-photos delete-account`: deletes the account on the server, with every album and photo
// in it (docs/decisions/0026), then forgets it on this device: its session, keys and local state.
// The server wants the password proved recently and, when the account has a second factor, a
// code; both are asked for as the other commands ask (--password-stdin, --totp-code, a terminal).
import { rmSync } from 'node:fs'
import path from 'node:path'
import { withFreshSignIn } from '../../client/account.ts'
import { CofferProblem } from '../../sdk/client.ts'
import { commandClientOptions, photosClient, savedSession } from './account.ts'
import { EXIT, Interrupted, UsageError, type Command } from './command.ts'
import { passwordPrompt } from './reauth.ts'

export const deleteAccount: Command = {
  usage: [
    'usage: coffer-photos delete-account [--yes] [--password-stdin] [--totp-code CODE] [--json]',
    '',
    "Deletes the account on the server: every album and photo, every device's session, its",
    'recovery escrow. It cannot be undone, and the recovery phrase no longer gets anything back.',
    'Then this device forgets the account (its session, keys and local state). The server wants',
    'the password proved within the last 10 minutes and, with a second factor, a code.',
    '',
    '  --yes              do not ask first (needed without a terminal)',
    '  --password-stdin   read the password from stdin when the server asks for it',
    '  --totp-code CODE   a code of the authenticator app, when the account has a second factor',
    '  --json             print the result as one JSON line',
  ].join('\n'),
  options: { yes: { type: 'boolean' }, 'password-stdin': { type: 'boolean' }, 'totp-code': { type: 'string' } },
  async run({ positionals, values, out, signal, home, prompts }) {
    if (positionals.length > 0) throw new UsageError('delete-account takes no arguments')
    if (values.yes !== true && !prompts.interactive()) throw new UsageError('--yes is needed: there is no terminal to confirm on')
    const { account, tokens } = savedSession(home)
    const question = `Delete the account ${account.email} on ${account.server}, with every album and photo in it? This cannot be undone.`
    if (!(await prompts.confirmed(values.yes === true, { message: question, signal }))) throw new Interrupted('nothing was changed: the account stays')

    const client = photosClient(account.server, tokens, home, commandClientOptions(out, signal))
    const password = passwordPrompt(prompts, { fromStdin: values['password-stdin'] === true, signal, command: 'coffer-photos delete-account' })
    const given = typeof values['totp-code'] === 'string' ? values['totp-code'] : undefined
    const remove = (totpCode: string | undefined) =>
      withFreshSignIn(client, () => client.deleteAccount(totpCode === undefined ? {} : { totpCode: totpCode.trim() }), password)
    try {
      await remove(given)
    } catch (error) {
      if (!(error instanceof CofferProblem && error.code === 'error.auth.second_factor_required' && given === undefined)) throw error
      await remove(
        await prompts.answer(undefined, { message: 'Code from your authenticator app', flag: '--totp-code (the account has a second factor)', signal }),
      )
    }
    // The account is gone: nothing kept here works for anything any more.
    home.saveTokens(null)
    home.forgetKeys()
    home.forgetAccount()
    for (const file of ['state.sqlite', 'state.sqlite-wal', 'state.sqlite-shm']) rmSync(path.join(home.path, file), { force: true })

    out.say(`Deleted the account ${account.email} on ${account.server}, with every album and photo in it.`)
    out.say('This device has forgotten it too.')
    out.event('account_deleted', { server: account.server, email: account.email })
    return EXIT.ok
  },
}
