// `coffer-photos join <server-url> <pairing-code>`, on a new device: signs in to the account as
// login does, then runs the enrollment exchange with the device that showed the pairing code
// (`coffer-photos device add`; decision 0019). This device makes its own X-Wing key, shows the
// 6-digit code both screens must agree on, and once the person said they match and the other
// device sent the keys, checks them (the identity key the other device offered makes the seeds
// it sent, and the directory on the server is signed by that key and lists this device with
// this key) before saving them as setup does. Nothing is saved when anything fails. The flow
// itself is src/client/pairing.ts joinByPairing; this adds the sign-in, the questions and the output.
import { CofferProblem } from '../../sdk/client.ts'
import { isPairingCode, joinByPairing, pairingCodeLive } from '../../client/pairing.ts'
import { commandClientOptions, photosClient } from './account.ts'
import { EXIT, SetupNeeded, UsageError, type Command } from './command.ts'
import { savedKeys } from './home.ts'
import { albumMemoryIn } from './library.ts'
import { serverUrl, signIn, SIGN_IN_OPTIONS } from './login.ts'
import { EXPIRED, pairingError, sameCodeOnBothScreens } from './pairing.ts'
import { deviceNameFrom, DEVICE_NAME_OPTION } from './setup.ts'

const GONE =
  'the other device ended the pairing (the codes did not match there, or it was stopped), or the pairing code expired; nothing was kept on this device'

export const join: Command = {
  usage: [
    'usage: coffer-photos join <server-url> <pairing-code> [--email EMAIL] [--password-stdin] [--totp-code CODE] [--device-name NAME] [--json]',
    '',
    'On a new device, with the pairing code that `coffer-photos device add` shows on a device that',
    'is set up: logs in to the account (as `login` does), then pairs with that device. Both show a',
    '6-digit code; say yes only if the two codes are the same. The other device then lists this one',
    "in the device directory and sends it the account's keys, which are kept in the config folder.",
    'The config folder must not hold keys already.',
    '',
    "  --email EMAIL       the account's email address",
    '  --password-stdin    the first line of stdin is the password',
    '  --totp-code CODE    the 6-digit code of the authenticator app, or a recovery code, when the account has a second factor',
    '  --device-name NAME  what to call this device in the directory (default: the host name)',
    '  --json              print the code to compare and the result as JSON lines',
    '',
    'Without a terminal, the answer to "same code?" is the next line of stdin: yes or no.',
  ].join('\n'),
  literal: isPairingCode,
  options: {
    ...SIGN_IN_OPTIONS,
    ...DEVICE_NAME_OPTION,
  },
  async run({ positionals, values, out, signal, home, prompts }) {
    if (positionals.length !== 2)
      throw new UsageError("give the server's address and the pairing code, e.g. `coffer-photos join https://photos.example.org <pairing-code>`")
    const server = serverUrl(positionals[0]!)
    const pairingCode = positionals[1]!.trim()
    if (!isPairingCode(pairingCode)) throw new UsageError('the pairing code is the 43 letters, digits, - and _ that `coffer-photos device add` shows')
    const deviceName = deviceNameFrom(values)
    const held = home.readKeys()
    if (held !== null) {
      const saved = home.readAccount()
      throw new SetupNeeded(
        `this config folder (${home.path}) already holds the keys of ${saved?.email ?? 'an account'}; join with a config folder of its own (COFFER_PHOTOS_HOME)`,
      )
    }

    // A look at the channel before asking for anything: a wrong or expired code stops here.
    if (!(await pairingCodeLive(photosClient(server, null, null, commandClientOptions(out, signal)), pairingCode))) throw new SetupNeeded(EXPIRED)

    const lines = prompts.linesUnlessTerminal()
    try {
      const passwordLine = values['password-stdin'] === true && lines !== null ? () => lines.password(signal) : undefined
      const { profile, deviceId } = await signIn({
        server,
        email: typeof values.email === 'string' ? values.email : undefined,
        totpCode: typeof values['totp-code'] === 'string' ? values['totp-code'] : undefined,
        password: passwordLine ?? (() => prompts.accountPassword(values['password-stdin'] === true, signal)),
        register: false,
        home,
        prompts,
        out,
        signal,
      })
      const client = photosClient(server, home.readTokens(), home, commandClientOptions(out, signal))
      out.say(`Logged in to ${server} as ${profile.email}. Pairing with the other device...`)
      try {
        const joined = await joinByPairing({
          client,
          userId: profile.user_id,
          deviceId,
          deviceName,
          pairingCode,
          confirmSas: (sas) => sameCodeOnBothScreens(sas, 'the other device', out, prompts, lines, signal),
          keep: (keys) => home.saveKeys(savedKeys(keys, 'complete')),
          keepHistory: (albums) => albumMemoryIn(home.path).adopt(albums),
          signal,
        })
        const fingerprint = joined.identityFingerprint
        out.say(`Joined ${profile.email} on ${server}: this device is "${deviceName}" (${deviceId}), identity key ${fingerprint}.`)
        const { history } = joined
        if (history.status === 'kept') {
          if (history.albums > 0)
            out.say(
              `Took the other device's record of ${history.albums} album${history.albums === 1 ? "'s" : "s'"} history: this device now catches a server that shows it less than the other device saw.`,
            )
        } else if (history.status === 'none')
          out.say(
            "The other device handed over no record of the albums' history (it remembers none, runs an older coffer-photos, or the server kept it back): each album is trusted from this device's first check.",
          )
        else
          out.warn(
            `coffer-photos: the other device's record of the albums' history was not kept (${history.reason}): each album is trusted from this device's first check`,
          )
        out.event('joined', {
          server,
          email: profile.email,
          user_id: profile.user_id,
          device_id: deviceId,
          device_name: deviceName,
          identity_fingerprint: fingerprint,
          directory_version: joined.directoryVersion,
          history: history.status,
          ...(history.status === 'kept' ? { history_albums: history.albums } : {}),
        })
        return EXIT.ok
      } catch (error) {
        // Once the exchange is under way, a channel that is gone was closed by the other device (its person said no, or it stopped) or ran out of time.
        if (error instanceof CofferProblem && error.code === 'error.enroll.channel_not_found') throw new Error(GONE)
        throw pairingError(error, signal, EXPIRED, '; nothing was kept on this device')
      }
    } finally {
      lines?.close()
    }
  },
}
