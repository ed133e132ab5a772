// `coffer-photos logout`: ends the session on the server and forgets its token pair. The keys
// stay, so that logging in again needs no setup; --forget-keys removes them as well.
import { commandClientOptions, photosClient } from './account.ts'
import { EXIT, Interrupted, type Command } from './command.ts'

export const logout: Command = {
  usage: [
    'usage: coffer-photos logout [--forget-keys [--yes]] [--json]',
    '',
    "Ends the session on the server and removes its tokens from the config folder. The account's",
    'keys stay, so `coffer-photos login` is all it takes to continue on this device.',
    '',
    "  --forget-keys   also remove this device's keys (master key, identity key, encryption key);",
    '                  afterwards only the recovery phrase gets the photos back here',
    '  --yes           do not ask before forgetting the keys (needed without a terminal)',
    '  --json          print the result as one JSON line',
  ].join('\n'),
  options: {
    'forget-keys': { type: 'boolean' },
    yes: { type: 'boolean' },
  },
  async run({ values, out, signal, home, prompts }) {
    const account = home.readAccount()
    const tokens = home.readTokens()
    const forgetKeys = values['forget-keys'] === true && home.readKeys() !== null
    if (
      forgetKeys &&
      !(await prompts.confirmed(values.yes === true, {
        message: `Forget this device's keys for ${account?.email ?? 'the account'}? Without them, only the recovery phrase gets the photos back here.`,
        signal,
      }))
    ) {
      throw new Interrupted('nothing was changed: the keys and the session stay')
    }
    let ended = false
    if (account !== null && tokens !== null) {
      try {
        await photosClient(account.server, tokens, home, commandClientOptions(out, signal)).logout()
        ended = true
      } finally {
        // Forgotten here whatever the server said: a session the server was not told about ends by itself when its refresh token expires.
        home.saveTokens(null)
        if (!ended) out.warn('coffer-photos: the session was forgotten on this device, but the server could not be told to end it')
      }
    }
    if (forgetKeys) home.forgetKeys()
    out.say(ended ? `Logged out of ${account?.server} (${account?.email}).` : 'Not logged in.')
    if (forgetKeys) out.say("This device's keys are forgotten.")
    out.event('logged_out', { server: account?.server ?? null, session_ended: ended, keys_forgotten: forgetKeys })
    return EXIT.ok
  },
}
