// The account a command acts as: who is logged in where (the config folder, home.ts), a
// CofferClient that retries what the network breaks and keeps each refreshed token pair on disk,
// and the keys setup made. Commands call openAccount; login, logout and setup, which run before
// there is a whole account, use the pieces.
import { fromBase64 } from '../../sdk/bytes.ts'
import { CofferClient, type Tokens } from '../../sdk/client.ts'
import { nativeIdentity, type NativeIdentity } from '../../client/node/crypto.ts'
import { retryingFetch, type RetryOptions } from '../../client/retry.ts'
import { SetupNeeded } from './command.ts'
import type { Home, SavedAccount } from './home.ts'
import type { Output } from './output.ts'

export interface Account {
  readonly client: CofferClient
  readonly server: string
  readonly email: string
  readonly userId: string
  readonly deviceId: string
  /** Signs the manifests (natively: the SDK's IdentityKey is the portable one). */
  readonly identity: NativeIdentity
  /** 32 bytes; album keys derive from it. */
  readonly masterKey: Uint8Array
  /** The config folder (home.ts); the local state store may live in it too. */
  readonly home: string
}

export interface ClientOptions {
  /** Stops the retry pauses (Ctrl-C). */
  readonly signal?: AbortSignal
  /** Told before each retry pause, e.g. to say the server is unreachable. */
  readonly onRetry?: RetryOptions['onRetry']
  /** Tries per request, the first included; retryingFetch's default unless given. */
  readonly attempts?: number
  /** Aborts the requests themselves, not only the pauses between tries (a time limit). */
  readonly requestSignal?: AbortSignal
}

/** fetch, each request also aborted by `signal` when one is given. */
function abortableFetch(signal: AbortSignal | undefined): typeof fetch {
  if (signal === undefined) return fetch
  return (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal })
}

export const USER_AGENT = 'coffer-photos'

/** A client on `server` that retries with backoff; with `home`, every new token pair (or its end) is written there. */
export function photosClient(server: string, tokens: Tokens | null, home: Home | null, options: ClientOptions = {}): CofferClient {
  return new CofferClient({
    baseUrl: server,
    tokens,
    fetch: retryingFetch(abortableFetch(options.requestSignal), {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onRetry ? { onRetry: options.onRetry } : {}),
      ...(options.attempts ? { attempts: options.attempts } : {}),
    }),
    userAgent: USER_AGENT,
    ...(home ? { onTokens: (pair: Tokens | null) => home.saveTokens(pair) } : {}),
  })
}

/** Who is logged in, with the session's token pair; SetupNeeded when there is none. */
export function savedSession(home: Home): { account: SavedAccount; tokens: Tokens } {
  const account = home.readAccount()
  if (account === null) throw new SetupNeeded('not logged in: run `coffer-photos login <server-url>` first')
  const tokens = home.readTokens()
  if (tokens === null) throw new SetupNeeded(`not logged in (logged out of ${account.server}): run \`coffer-photos login ${account.server}\` first`)
  return { account, tokens }
}

/** The logged-in, set-up account of the config folder `home`. Throws SetupNeeded saying what to run when it is not logged in or not set up. */
export async function openAccount(home: Home, options: ClientOptions = {}): Promise<Account> {
  const { account, tokens } = savedSession(home)
  const keys = home.readKeys()
  if (keys === null) throw new SetupNeeded(`this device is not set up for ${account.email}: run \`coffer-photos setup\` first`)
  if (keys.state !== 'complete') throw new SetupNeeded('setup on this device did not finish: run `coffer-photos setup` again to finish it')
  return {
    client: photosClient(account.server, tokens, home, options),
    server: account.server,
    email: account.email,
    userId: account.user_id,
    deviceId: account.device_id,
    identity: nativeIdentity(fromBase64(keys.identity_seeds)),
    masterKey: fromBase64(keys.master_key),
    home: home.path,
  }
}

/** Client options for a command: Ctrl-C stops the retry pauses, and each retry is said on stderr. */
export function commandClientOptions(out: Output, signal: AbortSignal): ClientOptions {
  return {
    signal,
    onRetry: ({ delayMs, reason }) => out.warn(`coffer-photos: the server did not answer (${reason}); trying again in ${Math.ceil(delayMs / 1000)} s`),
  }
}
