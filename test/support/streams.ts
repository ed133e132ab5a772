// Streams a test hands a program run in-process (support/cli.ts, support/photos-cli.ts).
import { Writable } from 'node:stream'

/** A stream that keeps the text written to it. */
export function collected(): { stream: Writable; text: () => string } {
  let text = ''
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: Buffer | string, _encoding, done) {
      text += typeof chunk === 'string' ? chunk : chunk.toString('utf8')
      done()
    },
  })
  return { stream, text: () => text }
}
