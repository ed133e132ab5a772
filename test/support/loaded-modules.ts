// Loaded with `node --import`: at its exit, the process writes the URL of every module it loaded,
// one per line, to $LOADED_MODULES_FILE (what a command's start costs, test/client/photos-account.test.ts).
import { writeFileSync } from 'node:fs'
import { registerHooks } from 'node:module'

const loaded = new Set<string>()
registerHooks({
  load(url, context, next) {
    loaded.add(url)
    return next(url, context)
  },
})
process.on('exit', () => writeFileSync(process.env.LOADED_MODULES_FILE ?? '/dev/null', [...loaded].join('\n')))
