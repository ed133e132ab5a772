// The PostgreSQL client tools (pg_dump, pg_restore), run from PATH: they must be of the
// server's major version or newer.
import { spawn } from 'node:child_process'
import { BackupError } from './files.ts'

export function runTool(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT' ? new BackupError(`${command} was not found on PATH: install the PostgreSQL client tools of the server's version`) : error,
      ),
    )
    child.on('close', (code) => {
      if (code === 0) resolve(stdout)
      else reject(new BackupError(`${command} failed (exit ${code}): ${stderr.trim().split('\n').at(-1) ?? ''}`))
    })
  })
}
