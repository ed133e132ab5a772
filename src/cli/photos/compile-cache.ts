// Node compiles every module of the command, stripping its types, at each start: 0.1-0.4 s of a
// 0.9-1.2 s start on this project's 2-core machine (docs/photos.md). Node's compile cache keeps them compiled
// between starts. Its default folder is under the shared temporary folder, where another user of
// the machine could leave compiled code for this one to run; here it is the person's own cache
// folder. NODE_COMPILE_CACHE, when set, has already decided (Node reads it itself), and
// NODE_DISABLE_COMPILE_CACHE turns it off.
import { enableCompileCache } from 'node:module'
import { homedir } from 'node:os'
import path from 'node:path'

/** `$XDG_CACHE_HOME/coffer-photos/node-compile-cache`, else under `~/.cache`. */
export function compileCacheFolder(env: NodeJS.ProcessEnv): string {
  // The XDG spec says a relative XDG_CACHE_HOME is invalid and is to be ignored.
  const cache = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(homedir(), '.cache')
  return path.join(cache, 'coffer-photos', 'node-compile-cache')
}

/** Caches what this process compiles from now on; a folder it cannot write only leaves it uncached. */
export function cacheCompiledModules(env: NodeJS.ProcessEnv): void {
  if (env.NODE_COMPILE_CACHE === undefined) enableCompileCache(compileCacheFolder(env))
}
