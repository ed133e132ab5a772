// `coffer-photos join <server-url> <pairing-code>`, on a new device: signs in to the account as
// login does, then runs the enrollment exchange with the device that showed the pairing code
// (`coffer-photos device add`; decision 0019). This device makes its own X-Wing key, shows the
// 6-digit code both screens must agree on, and once the person said they match and the other
// device sent the keys, checks them (the identity key the other device offered makes the seeds
// it sent, and the directory on the server is signed by that key and lists this device with
// this key) before saving them as setup does. Nothing is saved when anything fails.
import { hostname } from 'node:os'
import { equalBytes, toBase64 } from '../../sdk/bytes.ts'
import { readDirectory, type DeviceDirectory } from '../../sdk/directory.ts'
import { CofferProblem } from '../../sdk/client.ts'
import { keyFingerprint } from '../../sdk/hybrid.ts'
import { runEnrollee } from '../../client/enrollment.ts'
import { generateXWingKeyPair } from '../../client/format/xwing.ts'
import { commandClientOptions, photosClient } from './account.ts'
import { EXIT, SetupNeeded, UsageError, type Command } from './command.ts'
import { Home } from './home.ts'
import { serverUrl, signIn, SIGN_IN_OPTIONS } from './login.ts'
import { accountPassword } from './prompts.ts'
import { CHANNEL_LIFETIME_MS, EXPIRED, pairingError, POLL_INTERVAL_MS, sameCodeOnBothScreens, stdinLinesUnlessTerminal } from './pairing.ts'

const DEVICE_NAME_MAX = 100
const PAIRING_CODE = /^[A-Za-z0-9_-]{43}$/
const GONE = 'the other device ended the pairing (the codes did not match there, or it was stopped), or the pairing code expired; nothing was kept on this device'

export const join: Command = {
  name: 'join',
  summary: 'make this device another device of an account, with the pairing code `device add` shows',
  usage: [
    'usage: coffer-photos join <server-url> <pairing-code> [--email EMAIL] [--password-stdin] [--totp-code CODE] [--device-name NAME] [--json]',
    '',
    'On a new device, with the pairing code that `coffer-photos device add` shows on a device that',
    'is set up: logs in to the account (as `login` does), then pairs with that device. Both show a',
    '6-digit code; say yes only if the two codes are the same. The other device then lists this one',
    'in the device directory and sends it the account\'s keys, which are kept in the config folder.',
    'The config folder must not hold keys already.',
    '',
    '  --email EMAIL       the account\'s email address',
    '  --password-stdin    the first line of stdin is the password',
    '  --totp-code CODE    the 6-digit code of the authenticator app, when the account has a second factor',
    '  --device-name NAME  what to call this device in the directory (default: the host name)',
    '  --json              print the code to compare and the result as JSON lines',
    '',
    'Without a terminal, the answer to "same code?" is the next line of stdin: yes or no.',
  ].join('\n'),
  options: {
    ...SIGN_IN_OPTIONS,
    'device-name': { type: 'string' },
  },
  async run({ positionals, values, out, signal }) {
    if (positionals.length !== 2) throw new UsageError('give the server\'s address and the pairing code, e.g. `coffer-photos join https://photos.example.org <pairing-code>`')
    const server = serverUrl(positionals[0]!)
    const pairingCode = positionals[1]!.trim()
    if (!PAIRING_CODE.test(pairingCode)) throw new UsageError('the pairing code is the 43 letters, digits, - and _ that `coffer-photos device add` shows')
    const deviceName = (typeof values['device-name'] === 'string' ? values['device-name'] : hostname()).trim()
    if (deviceName.length === 0 || deviceName.length > DEVICE_NAME_MAX) throw new UsageError(`--device-name: 1 to ${DEVICE_NAME_MAX} characters`)
    const home = new Home()
    const held = home.readKeys()
    if (held !== null) {
      const saved = home.readAccount()
      throw new SetupNeeded(`this config folder (${home.path}) already holds the keys of ${saved?.email ?? 'an account'}; join with a config folder of its own (COFFER_PHOTOS_HOME)`)
    }

    // A look at the channel before asking for anything: a wrong or expired code stops here.
    // (This device's mailbox is empty until its hello is answered, so the drain takes nothing.)
    try {
      await photosClient(server, null, null, commandClientOptions(out, signal)).drain(pairingCode, 'to_enrollee')
    } catch (error) {
      if (error instanceof CofferProblem && error.code === 'error.enroll.channel_not_found') throw new SetupNeeded(EXPIRED)
      throw error
    }

    const lines = stdinLinesUnlessTerminal()
    try {
      const passwordLine = values['password-stdin'] === true && lines !== null ? () => lines.password(signal) : undefined
      const { profile, deviceId } = await signIn({
        server,
        email: typeof values.email === 'string' ? values.email : undefined,
        totpCode: typeof values['totp-code'] === 'string' ? values['totp-code'] : undefined,
        password: passwordLine ?? (() => accountPassword(values['password-stdin'] === true, signal)),
        register: false,
        out,
        signal,
      })
      const client = photosClient(server, home.readTokens(), home, commandClientOptions(out, signal))
      out.say(`Logged in to ${server} as ${profile.email}. Pairing with the other device...`)
      const xwing = generateXWingKeyPair()
      let directoryVersion = 0
      try {
        const result = await runEnrollee({
          channelId: pairingCode,
          end: client.enrollmentChannel(pairingCode, 'enrollee'),
          deviceId,
          deviceName,
          xwing,
          userId: profile.user_id,
          confirmSas: (sas) => sameCodeOnBothScreens(sas, 'the other device', out, lines, signal),
          // The directory the other device just published: signed by the identity key it offered, listing this device with this key. Then the keys are kept.
          accept: async ({ keys, identityKey }) => {
            const fetched = await client.fetchDirectory(profile.user_id)
            if (fetched === null) throw new Error('the account has no device directory on the server')
            let listed: DeviceDirectory
            try {
              listed = readDirectory(fetched.bytes, identityKey)
            } catch {
              throw new Error('the device directory on the server is not signed by the identity key the other device sent')
            }
            if (!listed.devices.some((d) => d.device_id === deviceId && d.encryption_key !== undefined && equalBytes(d.encryption_key, xwing.publicKey))) {
              throw new Error('the device directory on the server does not list this device with its key')
            }
            directoryVersion = listed.version
            home.saveKeys({ state: 'complete', master_key: toBase64(keys.masterKey), identity_seeds: toBase64(keys.identitySeeds), xwing_seed: toBase64(xwing.secretKey) })
          },
          poll: { intervalMs: POLL_INTERVAL_MS, deadline: Date.now() + CHANNEL_LIFETIME_MS, signal },
        })
        const fingerprint = keyFingerprint(result.identityKey)
        out.say(`Joined ${profile.email} on ${server}: this device is "${deviceName}" (${deviceId}), identity key ${fingerprint}.`)
        out.event('joined', { server, email: profile.email, user_id: profile.user_id, device_id: deviceId, device_name: deviceName, identity_fingerprint: fingerprint, directory_version: directoryVersion })
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
