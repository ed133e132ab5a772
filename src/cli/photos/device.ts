// `coffer-photos device add`, on a device that is set up: adds a new device to the account
// (docs/photos.md, "Adding a device"; decision 0019). It issues an enrollment code (proving the
// password again when the sign-in is older than the freshness window) and redeems it itself, so
// that it holds the relay channel; the channel id is the pairing code the person types into
// `coffer-photos join` on the new device. The two devices then run the enrollment exchange
// (src/client/enrollment.ts); once the person confirmed that both screens show the same code and
// the new device's confirmation verified, this device lists it in the signed device directory and
// sends it the account's keys. The channel is closed at the end, whatever happened.
import { fromBase64, toBase64 } from '../../sdk/bytes.ts'
import { CofferProblem, type CofferClient } from '../../sdk/client.ts'
import { readDirectory, signDirectory } from '../../sdk/directory.ts'
import { runInitiator } from '../../client/enrollment.ts'
import type { Hello } from '../../client/format/enrollment.ts'
import { nativeIdentity, type NativeIdentity } from '../../client/node/crypto.ts'
import { commandClientOptions, photosClient, savedSession } from './account.ts'
import { EXIT, SetupNeeded, UsageError, type Command } from './command.ts'
import { Home } from './home.ts'
import { pairingError, POLL_INTERVAL_MS, sameCodeOnBothScreens, stdinLinesUnlessTerminal } from './pairing.ts'
import { withFreshSignIn } from './reauth.ts'

/** Publishes the directory with `hello`'s device added (or its entry replaced), retrying when another publish got in between. */
async function addToDirectory(client: CofferClient, identity: NativeIdentity, userId: string, hello: Hello): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const fetched = await client.fetchDirectory(userId)
    if (fetched === null) throw new Error('the account has no device directory on the server (was setup finished?)')
    const current = readDirectory(fetched.bytes, identity.publicKey)
    const devices = [
      // A device id listed already is this folder's earlier enrollment, whose keys are gone: its entry is replaced.
      ...current.devices.filter((device) => device.device_id !== hello.device_id),
      { device_id: hello.device_id, public_key: identity.publicKey, encryption_key: hello.encryption_key, name: hello.device_name, added_at: new Date().toISOString() },
    ]
    const signed = await signDirectory(identity, { version: current.version + 1, devices })
    try {
      return await client.publishDirectory(signed, toBase64(identity.publicKey))
    } catch (error) {
      if (attempt < 3 && error instanceof CofferProblem && error.code === 'error.directory.version_conflict') continue
      throw error
    }
  }
}

export const device: Command = {
  name: 'device',
  summary: 'add a new device to this account (`device add`): shows the pairing code for `join`',
  usage: [
    'usage: coffer-photos device add [--password-stdin] [--json]',
    '',
    'On a device that is set up: shows a pairing code and the command to run on the new device,',
    '`coffer-photos join <server-url> <pairing-code>`. When the new device answers, both show a',
    '6-digit code; say yes only if the two codes are the same. This device then lists the new one',
    'in the signed device directory and hands it the account\'s keys. The code works for 10 minutes.',
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
  async run({ positionals, values, out, signal }) {
    if (positionals.length !== 1 || positionals[0] !== 'add') throw new UsageError('`coffer-photos device add` is the one form of this command')
    const home = new Home()
    const { account, tokens } = savedSession(home)
    const keys = home.readKeys()
    if (keys === null) throw new SetupNeeded(`this device is not set up for ${account.email}: run \`coffer-photos setup\` first`)
    if (keys.state !== 'complete') throw new SetupNeeded('setup on this device did not finish: run `coffer-photos setup` again to finish it')
    const client = photosClient(account.server, tokens, home, commandClientOptions(out, signal))
    const identity = nativeIdentity(fromBase64(keys.identity_seeds))
    const lines = stdinLinesUnlessTerminal()
    try {
      const fromStdin = values['password-stdin'] === true
      // Read now, whether or not the server asks for it: the lines after it are the answers.
      const password = fromStdin && lines !== null ? await lines.password(signal) : null
      const code = await withFreshSignIn(client, () => client.issueEnrollmentCode(), {
        fromStdin,
        ...(password !== null ? { readStdin: async () => password } : {}),
        signal,
        command: '`coffer-photos device add`',
      })
      // Redeemed here at once: this device holds the channel (and only the initiator may close it).
      const channel = await client.redeemEnrollmentCode(code.code)
      const join = `coffer-photos join ${account.server} ${channel.channel_id}`
      try {
        out.say('On the new device, run:')
        out.say('')
        out.say(`    ${join}`)
        out.say('')
        out.say(`Pairing code: ${channel.channel_id} (it works until ${channel.expires_at}). Waiting for the new device...`)
        out.event('pairing_code', { server: account.server, pairing_code: channel.channel_id, command: join, expires_at: channel.expires_at })
        let directoryVersion = 0
        const result = await runInitiator({
          channelId: channel.channel_id,
          end: client.enrollmentChannel(channel.channel_id, 'initiator'),
          identityKey: identity.publicKey,
          userId: account.user_id,
          keys: { masterKey: fromBase64(keys.master_key), identitySeeds: fromBase64(keys.identity_seeds) },
          onHello: (hello) => {
            out.say(`The new device "${hello.device_name}" (${hello.device_id}) answered.`)
            out.event('device_answered', { device_id: hello.device_id, device_name: hello.device_name })
          },
          confirmSas: (sas) => sameCodeOnBothScreens(sas, 'the new device', out, lines, signal),
          addDevice: async (hello) => {
            directoryVersion = await addToDirectory(client, identity, account.user_id, hello)
          },
          poll: { intervalMs: POLL_INTERVAL_MS, deadline: Date.parse(channel.expires_at), signal },
        })
        out.say(`Added "${result.device.device_name}" (${result.device.device_id}) to ${account.email}: the device directory is at version ${directoryVersion}, and the new device has the keys.`)
        out.event('device_added', { device_id: result.device.device_id, device_name: result.device.device_name, directory_version: directoryVersion })
        return EXIT.ok
      } catch (error) {
        throw pairingError(error, signal, 'the pairing code expired before the new device finished; run `coffer-photos device add` again', '; the device was not added')
      } finally {
        await client.closeChannel(channel.channel_id).catch(() => {}) // gone already when it expired
      }
    } finally {
      lines?.close()
    }
  },
}
