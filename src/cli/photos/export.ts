// `coffer-photos export [--output FILE]`: everything the server holds about the account (profile,
// sessions, moderation record, every album's feed and custody receipts) saved as one JSON file,
// for the person's records (docs/export.md). It needs only a session, not the keys: the server
// holds nothing it could decrypt, and exports it as it holds it.
//
// The body is written to the file as it arrives (an account with many photos exports hundreds of
// megabytes). It goes to `<file>.part` first and takes its name only once whole: a file by the
// export's name is always a complete export, and a failed or stopped one leaves nothing behind.
import { createWriteStream } from 'node:fs'
import { access, rename, rm, stat } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { bytesText, progressOnStderr } from '../progress.ts'
import { commandClientOptions, photosClient, savedSession } from './account.ts'
import { EXIT, UsageError, type Command } from './command.ts'

/** `coffer-export-<UTC date>.json` in the current folder, or `...-2.json` and so on when it is taken. */
async function freeDefaultFile(resolvePath: (given: string) => string): Promise<string> {
  const stem = `coffer-export-${new Date().toISOString().slice(0, 10)}`
  for (let n = 1; ; n++) {
    const file = resolvePath(`${stem}${n === 1 ? '' : `-${n}`}.json`)
    if (
      !(await access(file).then(
        () => true,
        () => false,
      ))
    )
      return file
  }
}

export const exportCommand: Command = {
  usage: [
    'usage: coffer-photos export [--output FILE] [--json]',
    '',
    'Saves everything the server holds about the account, for your records: the profile, whether a',
    'second factor is on, the signed-in sessions, security events, the moderation record, and every',
    'album with its history (the signed changes) and the custody receipts of its photos. Photos and',
    'their names are not in it: the server holds them encrypted; `coffer-photos restore` gets them',
    'back. The server allows a few exports an hour. Needs a session only (`coffer-photos login`).',
    '',
    '  -o, --output FILE   where to save it (replaced if it exists); default coffer-export-<date>.json',
    '                      in the current folder (-2, -3... when that name is taken)',
    '  --json              print the result as one JSON line',
  ].join('\n'),
  options: { output: { type: 'string', short: 'o' } },
  async run({ positionals, values, out, signal, home, resolvePath }) {
    if (positionals.length > 0) throw new UsageError('export takes no arguments (give the file with --output FILE)')
    const { account, tokens } = savedSession(home)
    const file = typeof values.output === 'string' ? resolvePath(values.output) : await freeDefaultFile(resolvePath)
    const partial = `${file}.part`
    const client = photosClient(account.server, tokens, home, commandClientOptions(out, signal))
    const { body } = await client.exportAccount()
    const progress = progressOnStderr(out.progress)
    let received = 0
    try {
      await pipeline(
        Readable.fromWeb(body),
        async function* (chunks: AsyncIterable<Uint8Array>) {
          for await (const chunk of chunks) {
            received += chunk.byteLength
            progress.update(`exporting: ${bytesText(received)}`)
            yield chunk
          }
        },
        // It holds addresses and the email: readable by its owner only, and on disk before it takes its name.
        createWriteStream(partial, { mode: 0o600, flush: true }),
        { signal },
      )
      await rename(partial, file)
    } catch (error) {
      await rm(partial, { force: true })
      if (signal.aborted) return EXIT.interrupted
      const code = (error as { code?: unknown }).code
      if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) throw error // the file could not be written: a local problem
      throw new Error(`the export was cut short (${(error as Error).message}); nothing was saved: run it again`)
    } finally {
      progress.done()
    }
    const { size } = await stat(file)
    out.say(`Saved the export of ${account.email} to ${file} (${bytesText(size)}).`)
    out.event('exported', { server: account.server, email: account.email, file, bytes: size })
    return EXIT.ok
  },
}
