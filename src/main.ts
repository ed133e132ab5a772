// Process entry: config -> deps -> migrate -> buildApp -> listen, and a graceful shutdown on
// SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the database).
import { buildApp } from './app.ts'
import { loadConfig, type Config } from './config.ts'
import { createDeps, startUp } from './deps.ts'
import { startSweeping } from './features/maintenance/sweep.service.ts'
import { listenFailure, reportStartFailure } from './start-up-failure.ts'

export async function serve(config: Config): Promise<void> {
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
    throw listenFailure(config, error)
  }
  app.log.info({ engine: deps.storage.engine, dataDir: config.dataDir, blobs: deps.blobs.location, publicOrigin: config.publicOrigin }, 'coffer is serving')
}

export async function runServe(): Promise<void> {
  let config: Config | null = null
  try {
    config = loadConfig()
    await serve(config)
  } catch (error) {
    reportStartFailure(config, error, 'failed to start: ')
    process.exit(1)
  }
}

if (import.meta.main) await runServe()
