// `coffer-photos recover <server-url>`: on a new device (a config folder without keys), signs in
// as `login` does, reads the recovery phrase, opens the account's escrow with it and enrolls this
// device: a new X-Wing key pair, listed in a new version of the signed device directory (signed
// with the recovered identity key), then the keys saved as setup saves them (docs/photos.md,
// "Recovering on a new device"; docs/client-format.md, "Recovery").
//
// A wrong phrase changes nothing: the escrow is opened before anything is made, published or
// saved, and the escrow itself is only read. The directory is published before the keys are
// saved: a crash between the two leaves this device listed with a key nobody holds, and
// recover run again in the same folder (the same device id) replaces that entry. The flow itself
// is src/client/account.ts recoverWithPhrase; this adds the sign-in, the prompts and the output.
import { NoEscrowError, recoverWithPhrase, type Recovered, type RecoveryPhraseError } from '../../client/account.ts'
import { ClientFormatError } from '../../client/format/errors.ts'
import { recoveryKeyFromPhrase } from '../../client/format/recovery.ts'
import { nativeArgon2id } from '../../client/node/crypto.ts'
import { commandClientOptions, photosClient } from './account.ts'
import { EXIT, Refused, SetupNeeded, UsageError, type Command, type Invocation } from './command.ts'
import { savedKeys } from './home.ts'
import { serverUrl, signIn, SIGN_IN_OPTIONS } from './login.ts'
import type { Output } from './output.ts'
import type { Prompts } from './prompts.ts'
import { deviceNameFrom, DEVICE_NAME_OPTION } from './setup.ts'

/** Phrases a person may type at the terminal before recover gives up. */
const PHRASE_TRIES = 3

/** Why a phrase spells no recovery key (the word count, a word not in the list, the checksum), or null when it spells one. */
function phraseProblem(phrase: string): string | null {
  try {
    recoveryKeyFromPhrase(phrase)
    return null
  } catch (error) {
    if (error instanceof ClientFormatError) return error.message.replace(/^recovery phrase: /, '')
    throw error
  }
}

/** What --password-stdin and --phrase-stdin read: both from the one stdin, the password on its first line. */
async function fromStdin(values: Invocation['values'], prompts: Prompts): Promise<{ password?: string; phrase?: string }> {
  if (values['phrase-stdin'] !== true) return {}
  let text = await prompts.stdinText()
  let password: string | undefined
  if (values['password-stdin'] === true) {
    const end = text.indexOf('\n')
    if (end < 0) throw new UsageError('--password-stdin with --phrase-stdin: stdin holds the password on its first line and the recovery phrase after it')
    password = text.slice(0, end).replace(/\r$/, '')
    if (password === '') throw new UsageError('--password-stdin: the first line of stdin held no password')
    text = text.slice(end + 1)
  }
  const problem = phraseProblem(text)
  if (problem !== null) throw new UsageError(`--phrase-stdin: ${problem}`)
  return { ...(password === undefined ? {} : { password }), phrase: text }
}

const WRONG_PHRASE =
  "the recovery phrase does not open this account's escrow: its words are valid, but it is not the phrase setup showed for this account (the last one shown, if setup ran more than once)"

/**
 * The phrase for recoverWithPhrase: the one from stdin, once; else typed at the terminal, asked
 * again after a wrong one (a few tries). Refused when the last one did not open the escrow.
 */
function phrasePrompt(given: string | undefined, prompts: Prompts, out: Output, signal: AbortSignal): (failed: RecoveryPhraseError | null) => Promise<string> {
  let attempt = 0
  return async (failed) => {
    if (failed !== null) {
      if (given !== undefined || attempt >= PHRASE_TRIES) throw new Refused(`${WRONG_PHRASE}; nothing was changed`)
      out.warn(
        `coffer-photos: ${WRONG_PHRASE}. Check the words and try again (${PHRASE_TRIES - attempt} ${PHRASE_TRIES - attempt === 1 ? 'try' : 'tries'} left).`,
      )
    }
    attempt++
    return (
      given ??
      prompts.maskedWords({
        message: 'Recovery phrase (the 24 words, in order)',
        signal,
        validate: (value) => phraseProblem(value) ?? true,
      })
    )
  }
}

export const recover: Command = {
  usage: [
    'usage: coffer-photos recover <server-url> [--email EMAIL] [--password-stdin] [--totp-code CODE] [--phrase-stdin] [--device-name NAME] [--json]',
    '',
    'On a new device, when no set-up device is at hand: signs in to <server-url> as `login` does,',
    "asks for the 24-word recovery phrase that setup showed, opens the account's recovery escrow",
    'with it, and sets this device up: its own encryption key, listed in the signed device',
    "directory, and the account's keys saved in the config folder. The config folder must hold",
    'no keys. A wrong phrase changes nothing.',
    '',
    "  --email EMAIL        the account's email address",
    '  --password-stdin     read the password from stdin (with --phrase-stdin: its first line)',
    '  --totp-code CODE     the 6-digit code of the authenticator app, or a recovery code, when the account has a second factor',
    '  --phrase-stdin       read the recovery phrase from stdin (with --password-stdin: the lines after',
    '                       the password); any case and spacing, on one line or several',
    '  --device-name NAME   what to call this device in the directory (default: the host name)',
    '  --json               print the result as one JSON line',
  ].join('\n'),
  options: {
    ...SIGN_IN_OPTIONS,
    'phrase-stdin': { type: 'boolean' },
    ...DEVICE_NAME_OPTION,
  },
  async run({ positionals, values, out, signal, home, prompts }) {
    if (positionals.length !== 1) throw new UsageError("give the server's address, e.g. `coffer-photos recover https://photos.example.org`")
    const server = serverUrl(positionals[0]!)
    const deviceName = deviceNameFrom(values)
    if (home.readKeys() !== null) {
      const held = home.readAccount()
      throw new SetupNeeded(
        `this config folder (${home.path}) already holds keys${held === null ? '' : ` of ${held.email} on ${held.server}`}; recover sets up a device that has none: use a new COFFER_PHOTOS_HOME, or \`coffer-photos logout --forget-keys\` first`,
      )
    }
    // Everything the command line or stdin must give is checked before anything is sent.
    const given = await fromStdin(values, prompts)
    if (given.phrase === undefined && !prompts.interactive())
      throw new UsageError('--phrase-stdin is needed: there is no terminal to ask for the recovery phrase on')

    const { profile, deviceId } = await signIn({
      server,
      email: typeof values.email === 'string' ? values.email : undefined,
      totpCode: typeof values['totp-code'] === 'string' ? values['totp-code'] : undefined,
      password:
        given.password === undefined ? () => prompts.accountPassword(values['password-stdin'] === true, signal) : () => Promise.resolve(given.password!),
      register: false,
      home,
      prompts,
      out,
      signal,
    })
    const client = photosClient(server, home.readTokens(), home, commandClientOptions(out, signal))
    let recovered: Recovered
    try {
      recovered = await recoverWithPhrase({
        client,
        userId: profile.user_id,
        deviceId,
        deviceName,
        phrase: phrasePrompt(given.phrase, prompts, out, signal),
        argon2id: nativeArgon2id,
      })
    } catch (error) {
      if (error instanceof NoEscrowError) {
        throw new SetupNeeded(
          error.setUpStarted
            ? `${profile.email} has no recovery escrow on ${server}: setup did not finish on the account's first device; run \`coffer-photos setup\` there to finish it (it stores the escrow and shows the recovery phrase)`
            : `${profile.email} has no recovery escrow on ${server}: the account was never set up, so there is nothing to recover; run \`coffer-photos setup\` to set it up on this device`,
        )
      }
      if (error instanceof ClientFormatError)
        throw new Error(`the recovery escrow on the server cannot be opened (${error.message.replace(/^escrow: /, '')}); nothing was changed`)
      throw error
    }
    const { directory } = recovered
    home.saveKeys(savedKeys(recovered.keys, 'complete'))

    out.say(`Recovered ${profile.email} on ${server}: this device is "${deviceName}" (${deviceId}), identity key ${recovered.identityFingerprint}.`)
    out.say(
      `The device directory (version ${directory.version}) lists ${directory.devices.length} device${directory.devices.length === 1 ? '' : 's'}. The recovery phrase stays the same: keep it safe.`,
    )
    out.event('recovered', {
      server,
      email: profile.email,
      user_id: profile.user_id,
      device_id: deviceId,
      device_name: deviceName,
      identity_fingerprint: recovered.identityFingerprint,
      directory_version: directory.version,
      devices: directory.devices.length,
      escrow_version: recovered.escrowVersion,
    })
    return EXIT.ok
  },
}
