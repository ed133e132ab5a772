// `coffer-photos sessions` and `coffer-photos revoke <session>`: the account's signed-in
// sessions, on every device, and ending one of them. Both need only a session, not the keys;
// with the keys, each session is shown with its device's name from the signed directory.
//
// The server gives no "last used" (SPEC: last_active_at must not be shown as such). A session's
// `created_at` is when its token pair was last renewed (a refresh opens a successor under a new
// id), so it is shown as "renewed": the session was in use then. `authenticated_at` is when a
// password (or second factor) was last proved on it: "signed in".
import { fromBase64 } from '../../sdk/bytes.ts'
import type { CofferClient, Devices } from '../../sdk/client.ts'
import { IdentityKey } from '../../sdk/identity.ts'
import { commandClientOptions, photosClient, savedSession } from './account.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { deviceNames, minuteText } from './devices.ts'
import type { Home, SavedAccount } from './home.ts'
import type { Output } from './output.ts'

type Session = Devices['sessions'][number]

/** The first characters of a session id that `revoke` takes: at least this many. */
const PREFIX_MIN = 4
/** The shortest id shown in the table (longer when two ids start alike). */
const SHOWN_MIN = 8
const APP_MAX = 40

/** The session list, with the client on the folder's session and the device names when this device can check the directory. */
async function listed(
  home: Home,
  out: Output,
  signal: AbortSignal,
): Promise<{ account: SavedAccount; client: CofferClient; sessions: Session[]; names: Map<string, string> | null }> {
  const { account, tokens } = savedSession(home)
  const client = photosClient(account.server, tokens, home, commandClientOptions(out, signal))
  const { sessions } = await client.listSessions()
  const keys = home.readKeys()
  const identity = keys === null ? null : IdentityKey.fromSeeds(fromBase64(keys.identity_seeds)).publicKey
  const names = await deviceNames(client, account.user_id, identity, out)
  return { account, client, sessions, names }
}

/** The shortest length, from SHOWN_MIN, at which every id is told apart from the others. */
function shownLength(ids: readonly string[]): number {
  const longest = Math.max(SHOWN_MIN, ...ids.map((id) => id.length))
  for (let length = SHOWN_MIN; length < longest; length++) if (new Set(ids.map((id) => id.slice(0, length))).size === ids.length) return length
  return longest
}

/** What the DEVICE column says: the directory's name, else the id the session's device gave, else a dash. */
function deviceText(session: Session, names: Map<string, string> | null): string {
  if (session.device_id === null) return '-'
  return names?.get(session.device_id) ?? `device ${session.device_id.slice(0, SHOWN_MIN)}`
}

const clipped = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/** Rows as columns padded to their widest cell (the last one not padded). */
function table(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd(),
  )
}

function sessionEvent(session: Session, names: Map<string, string> | null): Record<string, unknown> {
  return {
    session_id: session.session_id,
    current: session.current,
    device_id: session.device_id,
    device_name: session.device_id === null ? null : (names?.get(session.device_id) ?? null),
    authenticated_at: session.authenticated_at,
    created_at: session.created_at,
    ip_address: session.ip_address,
    user_agent: session.user_agent,
  }
}

export const sessions: Command = {
  usage: [
    'usage: coffer-photos sessions [--json]',
    '',
    'Lists every live session of the account, oldest first: its id (the first characters, enough',
    'for `coffer-photos revoke`), its device (named from the signed directory when this device is',
    'set up), when it signed in (the password last proved), when its tokens were last renewed',
    '(it was in use then; the server records no later use), and the address and app that opened it.',
    "The session marked * is this device's. A session renews its tokens every quarter of an hour",
    'while in use, and takes a new id each time.',
    '',
    '  --json   print one `session` event per session, then a `sessions` event',
  ].join('\n'),
  options: {},
  async run({ positionals, out, signal, home }) {
    if (positionals.length > 0) throw new UsageError('sessions takes no arguments')
    const { account, sessions, names } = await listed(home, out, signal)
    const length = shownLength(sessions.map((s) => s.session_id))
    const rows = sessions.map((session) => [
      session.session_id.slice(0, length),
      deviceText(session, names),
      minuteText(session.authenticated_at),
      minuteText(session.created_at),
      session.ip_address ?? '-',
      clipped(session.user_agent ?? '-', APP_MAX),
    ])
    const marks = ['', ...sessions.map((session) => (session.current ? '*' : ''))]
    for (const [i, line] of table([['SESSION', 'DEVICE', 'SIGNED IN', 'RENEWED', 'ADDRESS', 'APP'], ...rows]).entries())
      out.say(`${marks[i]!.padEnd(2)}${line}`)
    for (const session of sessions) out.event('session', sessionEvent(session, names))
    out.say('')
    out.say(
      `${sessions.length} session${sessions.length === 1 ? '' : 's'} of ${account.email}; * is this device's. \`coffer-photos revoke <session>\` ends one, \`coffer-photos revoke-all\` every one.`,
    )
    out.event('sessions', { server: account.server, email: account.email, sessions: sessions.length })
    return EXIT.ok
  },
}

export const revoke: Command = {
  usage: [
    'usage: coffer-photos revoke <session> [--json]',
    '',
    'Ends the session whose id is <session>, or starts with it (at least 4 characters, matching one',
    'session only; `coffer-photos sessions` lists them). The device that held it is signed out and',
    'says so on its next command; its keys stay, and `coffer-photos login` signs it in again.',
    "Revoking this device's own session logs this device out, as `coffer-photos logout` does.",
    '',
    '  --json   print the result as one JSON line',
  ].join('\n'),
  options: {},
  async run({ positionals, out, signal, home }) {
    if (positionals.length !== 1) throw new UsageError('revoke takes one session id, or its first characters (`coffer-photos sessions` lists them)')
    const given = positionals[0]!.trim().toLowerCase()
    if (!/^[0-9a-f-]+$/.test(given) || given.replaceAll('-', '').length < PREFIX_MIN) {
      throw new UsageError(
        `"${positionals[0]}" is not a session id: give at least its first ${PREFIX_MIN} characters, as \`coffer-photos sessions\` shows them`,
      )
    }
    const { account, client, sessions, names } = await listed(home, out, signal)
    const matching = sessions.filter((session) => session.session_id.toLowerCase().startsWith(given))
    if (matching.length === 0) {
      throw new UsageError(
        `no live session's id starts with "${given}" (\`coffer-photos sessions\` lists them; a session takes a new id each time it renews its tokens)`,
      )
    }
    if (matching.length > 1)
      throw new UsageError(`"${given}" starts ${matching.length} sessions' ids (${matching.map((s) => s.session_id).join(', ')}): give more of it`)
    const session = matching[0]!
    await client.revokeSession(session.session_id)
    const device = deviceText(session, names)
    if (session.current) {
      home.saveTokens(null) // as logout does: the session is gone, the keys stay
      out.say(`Ended session ${session.session_id}, this device's own: this device is signed out of ${account.server}.`)
      out.say(`The keys stay here; run \`coffer-photos login ${account.server}\` to sign in again.`)
    } else {
      out.say(`Ended session ${session.session_id} (${device}, signed in ${minuteText(session.authenticated_at)}).`)
      out.say('That device is signed out: its next command says so, and it signs in again with `coffer-photos login`.')
    }
    out.event('revoked', { ...sessionEvent(session, names), signed_out_here: session.current })
    return EXIT.ok
  },
}
