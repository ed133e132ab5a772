// vitest globalSetup: builds the web app (web/dist) from the sources as they are, so the
// browser tests never run against a build older than the code under test, and as it ships:
// vitest sets NODE_ENV=test, which would give React's development build.
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { ROOT } from './process.ts'

export default function setup(): void {
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', path.join(ROOT, 'web/vite.config.ts'), '--logLevel', 'warn'],
    { cwd: ROOT, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } },
  )
}
