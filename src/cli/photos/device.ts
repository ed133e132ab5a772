// `coffer-photos device add`, on a device that is set up: adds a new device to the account
// (docs/photos.md, "Adding a device"; decision 0019). It issues an enrollment code (proving the
// password again when the sign-in is older than the freshness window) and redeems it itself, so
// that it holds the relay channel; the channel id is the pairing code the person types into
// `coffer-photos join` on the new device. The two devices then run the enrollment exchange
// (src/client/enrollment.ts); once the person confirmed that both screens show the same code and
// the new device's confirmation verified, this device lists it in the signed device directory and
// sends it the account's keys. The channel is closed at the end, whatever happened. The flow
// itself is src/client/pairing.ts openPairing and addDeviceByPairing; this adds the prompts and the output.
import { addDeviceByPairing, openPairing } from '../../client/pairing.ts'
import { nativeIdentity } from '../../client/node/crypto.ts'
import { commandClientOptions, photosClient, savedSession } from './account.ts'
import { EXIT, SetupNeeded, UsageError, type Command } from './command.ts'
import { accountKeys } from './home.ts'
import { albumMemoryIn } from './library.ts'
import { pairingError, sameCodeOnBothScreens } from './pairing.ts'
import { passwordPrompt } from './reauth.ts'

export const device: Command = {
  usage: [
    'usage: coffer-photos device add [--password-stdin] [--json]',
    '',
    'On a device that is set up: shows a pairing code and the command to run on the new device,',
    '`coffer-photos join <server-url> <pairing-code>`. When the new device answers, both show a',
    '6-digit code; say yes only if the two codes are the same. This device then lists the new one',
    "in the signed device directory and hands it the account's keys. The code works for 10 minutes.",
    '',
    '  --password-stdin   the first line of stdin is the password, for when the server asks to prove',
    '                     it again (it does when the last sign-in is older than 10 minutes)',
    '  --json             print the pairing code, the code to compare and the result as JSON lines',
    '',
    'Without a terminal, the answer to "same code?" is the next line of stdin: yes or no.',
  ].join('\n'),
  options: {
    'password-stdin': { type: 'boolean' },
  },
  async run({ positionals, values, out, signal, home, prompts }) {
    if (positionals.length !== 1 || positionals[0] !== 'add') throw new UsageError('`coffer-photos device add` is the one form of this command')
    const { account, tokens } = savedSession(home)
    const keys = home.readKeys()
    if (keys === null) throw new SetupNeeded(`this device is not set up for ${account.email}: run \`coffer-photos setup\` first`)
    if (keys.state !== 'complete') throw new SetupNeeded('setup on this device did not finish: run `coffer-photos setup` again to finish it')
    const client = photosClient(account.server, tokens, home, commandClientOptions(out, signal))
    const held = accountKeys(keys)
    const identity = nativeIdentity(held.identitySeeds)
    const lines = prompts.linesUnlessTerminal()
    try {
      const fromStdin = values['password-stdin'] === true
      // Read now, whether or not the server asks for it: the lines after it are the answers.
      const password = fromStdin && lines !== null ? await lines.password(signal) : null
      // Redeemed at once: this device holds the channel (and only the initiator may close it).
      const pairing = await openPairing(
        client,
        passwordPrompt(prompts, {
          fromStdin,
          ...(password !== null ? { readStdin: async () => password } : {}),
          signal,
          command: '`coffer-photos device add`',
        }),
      )
      const join = `coffer-photos join ${account.server} ${pairing.pairingCode}`
      out.say('On the new device, run:')
      out.say('')
      out.say(`    ${join}`)
      out.say('')
      out.say(`Pairing code: ${pairing.pairingCode} (it works until ${pairing.expiresAt}). Waiting for the new device...`)
      out.event('pairing_code', { server: account.server, pairing_code: pairing.pairingCode, command: join, expires_at: pairing.expiresAt })
      try {
        const result = await addDeviceByPairing({
          client,
          userId: account.user_id,
          keys: held,
          identity,
          pairing,
          onHello: (hello) => {
            out.say(`The new device "${hello.device_name}" (${hello.device_id}) answered.`)
            out.event('device_answered', { device_id: hello.device_id, device_name: hello.device_name })
          },
          confirmSas: (sas) => sameCodeOnBothScreens(sas, 'the new device', out, prompts, lines, signal),
          history: () => albumMemoryIn(home.path).handOver(),
          signal,
        })
        out.say(
          `Added "${result.device.device_name}" (${result.device.device_id}) to ${account.email}: the device directory is at version ${result.directoryVersion}, and the new device has the keys.`,
        )
        if (result.history === 'kept')
          out.say("It also took this device's record of each album's history: a server that rewrites what this device saw is caught there too.")
        if (result.history === 'unanswered')
          out.say(
            "It did not take this device's record of the albums' history (it may run an older coffer-photos): it trusts each album from its own first check.",
          )
        out.event('device_added', {
          device_id: result.device.device_id,
          device_name: result.device.device_name,
          directory_version: result.directoryVersion,
          history: result.history,
        })
        return EXIT.ok
      } catch (error) {
        throw pairingError(
          error,
          signal,
          'the pairing code expired before the new device finished; run `coffer-photos device add` again',
          '; the device was not added',
        )
      }
    } finally {
      lines?.close()
    }
  },
}
