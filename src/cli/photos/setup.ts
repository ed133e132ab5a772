// `coffer-photos setup`, on an account's first device: makes the master key, the identity key,
// this device's X-Wing key pair and the recovery key; publishes the signed device directory
// (version 1) listing this device and its encryption key; stores the escrow; shows the recovery
// phrase (docs/photos.md, "Setting up"; docs/client-format.md, "Recovery").
//
// The keys are saved (as `pending`) before anything is published: the first publish binds the
// identity key to the account for good, so it must never be lost to a crash. A setup that
// stopped half-way resumes with the same keys; it is `complete` once the phrase was shown and
// the person said it is written down. Until then each run stores a new escrow under a new
// phrase, so the phrase that counts is always the last one shown. The flow itself is
// src/client/account.ts setUpFirstDevice; this adds the config folder, the prompts and the output.
import { hostname } from 'node:os'
import { fromBase64 } from '../../sdk/bytes.ts'
import { IdentityKey } from '../../sdk/identity.ts'
import { AccountSetUpElsewhereError, DEVICE_NAME_MAX, setUpFirstDevice } from '../../client/account.ts'
import { nativeArgon2id } from '../../client/node/crypto.ts'
import { commandClientOptions, photosClient, savedSession } from './account.ts'
import { EXIT, Interrupted, SetupNeeded, UsageError, type Command, type Invocation } from './command.ts'
import { accountKeys, savedKeys } from './home.ts'
import { passwordPrompt } from './reauth.ts'

/** The --device-name option of setup and recover. */
export const DEVICE_NAME_OPTION = { 'device-name': { type: 'string' } } as const satisfies Command['options']

/** What to call this device in the directory: --device-name, else the host name. */
export function deviceNameFrom(values: Invocation['values']): string {
  const deviceName = (typeof values['device-name'] === 'string' ? values['device-name'] : hostname()).trim()
  if (deviceName.length === 0 || deviceName.length > DEVICE_NAME_MAX) throw new UsageError(`--device-name: 1 to ${DEVICE_NAME_MAX} characters`)
  return deviceName
}

function alreadySetUpElsewhere(email: string, server: string): SetupNeeded {
  return new SetupNeeded(
    `${email} is already set up on another device (there is nothing to set up here): to use the account on this device, run \`coffer-photos recover ${server}\` with the recovery phrase`,
  )
}

/** The 24 words in four numbered rows, for writing down. */
function phraseLines(phrase: string): string[] {
  const words = phrase.split(' ')
  const width = Math.max(...words.map((word) => word.length))
  return [0, 6, 12, 18].map((start) =>
    words
      .slice(start, start + 6)
      .map((word, i) => `${String(start + i + 1).padStart(2)}. ${word.padEnd(width)}`)
      .join('  ')
      .trimEnd(),
  )
}

export const setup: Command = {
  usage: [
    'usage: coffer-photos setup [--device-name NAME] [--password-stdin] [--yes] [--json]',
    '',
    "On the account's first device: makes the master key, the identity key, this device's",
    'encryption key and a recovery key; publishes the signed device directory; stores the',
    'recovery escrow on the server; shows the 24-word recovery phrase. Write the phrase down:',
    'it is the only way back to the photos if this device is lost.',
    '',
    '  --device-name NAME   what to call this device in the directory (default: the host name)',
    '  --password-stdin     read the password from stdin, for when the server asks to prove it again',
    '                       (it does when the last sign-in is older than 10 minutes)',
    '  --yes                do not ask to confirm that the phrase is written down (needed without a terminal)',
    '  --json               print the phrase and the result as JSON lines',
  ].join('\n'),
  options: {
    ...DEVICE_NAME_OPTION,
    'password-stdin': { type: 'boolean' },
    yes: { type: 'boolean' },
  },
  async run({ values, out, signal, home, prompts }) {
    const yes = values.yes === true
    if (!yes && !prompts.interactive()) throw new UsageError('--yes is needed: there is no terminal to confirm on that the recovery phrase is written down')
    const deviceName = deviceNameFrom(values)
    const { account, tokens } = savedSession(home)
    const client = photosClient(account.server, tokens, home, commandClientOptions(out, signal))
    const keys = home.readKeys()
    if (keys?.state === 'complete') {
      throw new SetupNeeded(
        `this device is already set up for ${account.email} (identity key ${IdentityKey.fromSeeds(fromBase64(keys.identity_seeds)).fingerprint}); there is nothing to set up again`,
      )
    }

    let set: Awaited<ReturnType<typeof setUpFirstDevice>>
    try {
      set = await setUpFirstDevice({
        client,
        userId: account.user_id,
        deviceId: account.device_id,
        deviceName,
        pending: keys === null ? null : accountKeys(keys),
        keep: (made) => home.saveKeys(savedKeys(made, 'pending')),
        forget: () => home.forgetKeys(), // never published: nothing refers to them
        password: passwordPrompt(prompts, { fromStdin: values['password-stdin'] === true, signal, command: 'setup' }),
        argon2id: nativeArgon2id,
      })
    } catch (error) {
      if (error instanceof AccountSetUpElsewhereError) throw alreadySetUpElsewhere(account.email, account.server)
      throw error
    }
    const { phrase } = set
    out.say('Your recovery phrase. Write it down and keep it somewhere safe, away from this device;')
    out.say('with it (and your password) the photos can be recovered if every device is lost. It is shown only now.')
    out.say('')
    for (const line of phraseLines(phrase)) out.say(`  ${line}`)
    out.say('')
    out.event('recovery_phrase', { phrase })
    if (!(await prompts.confirmed(yes, { message: 'Have you written down the recovery phrase?', signal }))) {
      throw new Interrupted('setup is not finished: run `coffer-photos setup` again when you can write down the recovery phrase (it will show a new one)')
    }
    home.saveKeys(savedKeys(set.keys, 'complete'))
    out.say(`Set up ${account.email} on ${account.server}: this device is "${deviceName}" (${account.device_id}), identity key ${set.identityFingerprint}.`)
    out.event('set_up', {
      server: account.server,
      email: account.email,
      user_id: account.user_id,
      device_id: account.device_id,
      device_name: deviceName,
      identity_fingerprint: set.identityFingerprint,
      directory_version: set.directoryVersion,
    })
    return EXIT.ok
  },
}
