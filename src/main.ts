// Process entry: config -> deps -> migrate -> buildApp -> listen, and a graceful shutdown on
// SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the database).
import { buildApp } from './app.ts'
import { ConfigError, loadConfig, type Config } from './config.ts'
import { createDeps, startUp } from './deps.ts'
import { startSweeping } from './features/maintenance/sweep.service.ts'

/** The server could not listen on HOST:PORT; the message is the one line the operator sees. */
class ListenError extends Error {}

const LISTEN_REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'PORT is already in use',
  EADDRNOTAVAIL: 'HOST is not an address of this machine',
  ENOTFOUND: 'HOST does not resolve to an address',
  EAI_AGAIN: 'HOST could not be resolved (DNS unavailable)',
  EACCES: 'permission denied (ports below 1024 need privileges)',
}

function listenError(config: Config, error: unknown): ListenError {
  const { code, message } = error instanceof Error ? (error as NodeJS.ErrnoException) : { code: undefined, message: String(error) }
  const reason = code === undefined ? message : `${LISTEN_REASONS[code] ?? message} (${code})`
  return new ListenError(`cannot listen on HOST=${config.host} PORT=${config.port}: ${reason}`)
}

export async function serve(): Promise<void> {
  const config = loadConfig()
  const deps = await createDeps(config)
  const leftovers = await startUp(deps)
  const app = await buildApp(deps)
  if (leftovers > 0) app.log.info({ files: leftovers }, 'removed what interrupted blob writes left')
  const stopSweeping = startSweeping(deps, app.log)
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    // No new pass; one under way finishes before the storage closes.
    const sweepingStopped = stopSweeping()
    try {
      await app.close()
      await sweepingStopped
      await deps.storage.close()
      app.log.info('stopped')
    } catch (error) {
      app.log.error({ err: error }, 'unclean shutdown')
      process.exitCode = 1
    }
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))
  try {
    await app.listen({ port: config.port, host: config.host })
  } catch (error) {
    // Nothing was served: release what start-up opened before reporting.
    const sweepingStopped = stopSweeping()
    await app.close()
    await sweepingStopped
    await deps.storage.close()
    throw listenError(config, error)
  }
  app.log.info({ engine: deps.storage.engine, dataDir: config.dataDir, publicOrigin: config.publicOrigin }, 'coffer is serving')
}

export async function runServe(): Promise<void> {
  try {
    await serve()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`coffer: invalid configuration: ${error.message}\n`)
    } else if (error instanceof ListenError) {
      process.stderr.write(`coffer: ${error.message}\n`)
    } else {
      process.stderr.write(`coffer: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    }
    process.exit(1)
  }
}

if (import.meta.main) await runServe()
