// `coffer-photos login <server-url>`: opens a session on the server (creating the account first
// with --register) and keeps it in the config folder. The email, the password and a second-factor
// code are asked for on a terminal when no flag gives them. `recover` signs in the same way (signIn).
import { randomUUID } from 'node:crypto'
import type { Profile } from '../../sdk/client.ts'
import { typedSecondFactorCode } from '../../sdk/second-factor-code.ts'
import { commandClientOptions, photosClient } from './account.ts'
import { EXIT, SetupNeeded, UsageError, type Command } from './command.ts'
import type { Home } from './home.ts'
import type { Output } from './output.ts'
import type { Prompts } from './prompts.ts'

/** The server's base address: http(s), no query or fragment, no trailing slash (a path prefix is kept). */
export function serverUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new UsageError(`"${text}" is not a server address; give one like https://photos.example.org`)
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new UsageError(`"${text}" is not a server address; give one like https://photos.example.org`)
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

const isLoopback = (server: string): boolean => ['localhost', '127.0.0.1', '[::1]'].includes(new URL(server).hostname)

/** The flags of signing in, which `recover` takes too. */
export const SIGN_IN_OPTIONS = {
  email: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  'totp-code': { type: 'string' },
} as const satisfies Command['options']

const SIGN_IN_OPTIONS_WITH_REGISTER = { ...SIGN_IN_OPTIONS, register: { type: 'boolean' } } as const satisfies Command['options']

/** What signIn was given: the command's --email and --totp-code, and how to get the password. */
export interface SignInOptions {
  readonly server: string
  readonly email: string | undefined
  readonly totpCode: string | undefined
  /** Asked only once the email is known (a prompt, or stdin). */
  readonly password: () => Promise<string>
  readonly register: boolean
  /** The config folder that keeps the session. */
  readonly home: Home
  readonly prompts: Prompts
  readonly out: Output
  readonly signal: AbortSignal
}

export interface SignedIn {
  readonly home: Home
  readonly profile: Profile
  readonly deviceId: string
  /** Whether the folder held keys set up for this account (`complete`). */
  readonly setUp: boolean
}

/**
 * Signs in to `server` (registering first with `register`), asking on a terminal for what the
 * flags do not give, and keeps the session in the config folder: `login`, and `recover` before
 * it opens the escrow. Refuses a folder that holds another account's keys.
 */
export async function signIn(options: SignInOptions): Promise<SignedIn> {
  const { server, home, prompts, out, signal } = options
  const saved = home.readAccount()
  const keys = home.readKeys()
  // Keys belong to one account: a folder that holds some is not reused for another.
  const keptFor = (where: string) =>
    new SetupNeeded(
      `this config folder (${home.path}) holds the keys of ${saved?.email} on ${saved?.server}, not ${where}; use another COFFER_PHOTOS_HOME, or \`coffer-photos logout --forget-keys\` first`,
    )
  if (keys !== null && saved !== null && saved.server !== server) throw keptFor(server)
  if (!server.startsWith('https:') && !isLoopback(server))
    out.warn(`coffer-photos: ${server} is not https: the password and the session's tokens cross the network readable by anyone on the way`)

  const email = await prompts.answer(options.email, {
    message: 'Email',
    flag: '--email',
    signal,
    validate: (value) => /^[^@\s]+@[^@\s]+$/.test(value.trim()) || 'an email address, like name@example.org',
  })
  const password = await options.password()
  // One device id per config folder, sent with every sign-in so the server's session list can tell devices apart.
  const deviceId = saved?.device_id ?? randomUUID()
  const client = photosClient(server, null, null, commandClientOptions(out, signal))
  if (options.register) {
    // Register takes no device id: its session is swapped for a login that carries one.
    await client.register(email.trim(), password)
    await client.logout()
  }
  const result = await client.login(email.trim(), password, { device_id: deviceId })
  if (result.kind === 'second_factor') {
    const typed = await prompts.answer(options.totpCode, {
      message: 'Code from your authenticator app (or a recovery code)',
      flag: '--totp-code (the account has a second factor)',
      signal,
      validate: (value) => typedSecondFactorCode(value) !== null || 'the 6 digits the authenticator app shows, or one of your recovery codes (xxxxx-xxxxx)',
    })
    await client.verifyLogin(result.challenge.mfa_token, typedSecondFactorCode(typed) ?? typed, { device_id: deviceId })
  }
  const profile = await client.getProfile()
  if (keys !== null && saved !== null && saved.user_id !== profile.user_id) {
    await client.logout()
    throw keptFor(`${profile.email} on ${server}`)
  }

  const previous = home.readTokens()
  home.saveTokens(null)
  home.saveAccount({ server, email: profile.email, user_id: profile.user_id, device_id: deviceId })
  home.saveTokens(client.tokens)
  // The session this folder held on this server is of no use any more: end it rather than leave it live.
  if (previous !== null && saved?.server === server)
    await photosClient(server, previous, null)
      .logout()
      .catch(() => {})
  return { home, profile, deviceId, setUp: keys?.state === 'complete' }
}

export const login: Command = {
  usage: [
    'usage: coffer-photos login <server-url> [--email EMAIL] [--password-stdin] [--totp-code CODE] [--register] [--json]',
    '',
    'Logs in to the Coffer server at <server-url> and keeps the session in the config folder.',
    'Whatever is not given is asked for when stdin is a terminal (the password is never shown).',
    '',
    "  --email EMAIL      the account's email address",
    '  --password-stdin   read the password from stdin (everything up to the end, less one final line break)',
    '  --totp-code CODE   the 6-digit code of the authenticator app, or a recovery code, when the account has a second factor',
    '  --register         create the account first (it must not exist yet)',
    '  --json             print the result as one JSON line',
  ].join('\n'),
  options: SIGN_IN_OPTIONS_WITH_REGISTER,
  async run({ positionals, values, out, signal, home, prompts }) {
    if (positionals.length !== 1) throw new UsageError("give the server's address, e.g. `coffer-photos login https://photos.example.org`")
    const server = serverUrl(positionals[0]!)
    const registered = values.register === true
    const { profile, deviceId, setUp } = await signIn({
      server,
      email: typeof values.email === 'string' ? values.email : undefined,
      totpCode: typeof values['totp-code'] === 'string' ? values['totp-code'] : undefined,
      password: () => prompts.accountPassword(values['password-stdin'] === true, signal),
      register: registered,
      home,
      prompts,
      out,
      signal,
    })
    out.say(`Logged in to ${server} as ${profile.email}${registered ? ' (new account)' : ''}.`)
    out.say(setUp ? 'This device is set up.' : "Next: `coffer-photos setup` makes the account's keys and your recovery phrase.")
    out.event('logged_in', { server, email: profile.email, user_id: profile.user_id, device_id: deviceId, registered, set_up: setUp })
    return EXIT.ok
  },
}
