// A client that goes away in the middle of its request (a browser reload, a closed tab) is not a
// fault nor a malformed request: one info line "request aborted by the client", without a
// stack, and no line at warn or error, whether the connection ends or is reset, and whether the
// body was a stream the handler reads (an upload) or JSON Fastify parses.
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/sdk/client.ts'
import { album, ciphertext, uploader, type Uploader } from '../support/albums.ts'
import { bearer } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let member: Uploader
beforeAll(async () => {
  server = await startServer()
  member = await uploader(server, 'abort')
})
afterAll(() => server.close())

type Line = { level: number; msg: string; request_id?: string; err?: unknown; stack?: unknown }

/** The log lines written from `from` on, parsed. */
const linesFrom = (from: number): Line[] => server.logs.slice(from).map((line) => JSON.parse(line) as Line)

/**
 * Sends the head and `sent` of a body announced as `length` bytes, waits until the server has
 * received the request (its "request received" line), then ends the connection (`end`) or
 * resets it (`reset`, as a reloading browser may). Resolves with the request's id.
 */
async function abandoned(path: string, headers: Record<string, string>, length: number, sent: Uint8Array | string, how: 'end' | 'reset'): Promise<string> {
  const id = crypto.randomUUID()
  const from = server.logs.length
  const outgoing = request(new URL(server.url + path), {
    method: path.endsWith('batch') ? 'POST' : 'PUT',
    headers: { ...headers, 'content-length': String(length), 'x-request-id': id },
  })
  outgoing.on('error', () => {})
  outgoing.write(sent)
  await received(from, id)
  if (how === 'reset') outgoing.socket?.resetAndDestroy()
  else outgoing.destroy()
  await aborted(id)
  return id
}

/** Resolves once a line of request `id` with `msg` is logged (the server logs asynchronously to the test). */
async function logged(id: string, msg: string, from = 0): Promise<void> {
  while (!linesFrom(from).some((line) => line.request_id === id && line.msg === msg)) await new Promise((resolve) => setImmediate(resolve))
}
const received = (from: number, id: string) => logged(id, 'request received', from)
const aborted = (id: string) => logged(id, 'request aborted by the client')

async function openedUpload(size: number): Promise<{ path: string; body: Buffer }> {
  const albumId = await album(member)
  const body = ciphertext(size)
  const hash = sha256Hex(body)
  const session = await member.client.openUploadSession({
    album_id: albumId,
    crypto_suite_id: 1,
    ciphertext_hash: hash,
    blobs: [{ role: 'original', hash, size }],
  })
  return { path: `/v1/upload/${session.upload_id}/blobs/${hash}`, body }
}

/** Checks the request's lines, after one more request has been answered (any late line of the aborted one is written by then). */
async function expectOneAbortLine(id: string, from: number): Promise<void> {
  await member.client.getProfile()
  const own = linesFrom(from).filter((line) => line.request_id === id)
  expect(own.filter((line) => line.msg === 'request aborted by the client')).toEqual([expect.objectContaining({ level: 30 })])
  expect(own.filter((line) => line.level >= 40)).toEqual([])
  expect(own.some((line) => line.err !== undefined || line.stack !== undefined)).toBe(false)
  expect(linesFrom(from).filter((line) => line.level >= 50)).toEqual([])
}

describe('a request its client abandons', () => {
  it.each([['end'], ['reset']] as const)('an upload PUT whose connection %ss halfway through the body: one info line, nothing kept', async (how) => {
    const upload = await openedUpload(1024 * 1024)
    const from = server.logs.length
    const id = await abandoned(
      upload.path,
      { ...bearer(member), 'content-type': 'application/octet-stream' },
      upload.body.length,
      upload.body.subarray(0, 300_000),
      how,
    )
    await expectOneAbortLine(id, from)
    const status = await member.client.uploadSessionStatus(upload.path.split('/')[3]!)
    expect(status.blobs.map((blob) => [blob.present, blob.received])).toEqual([[false, 0]])
  })

  it.each([['end'], ['reset']] as const)('a JSON body whose connection %ss halfway: one info line', async (how) => {
    const from = server.logs.length
    const id = await abandoned('/v1/blobs/batch', { ...bearer(member), 'content-type': 'application/json' }, 5000, '{"hashes": [', how)
    await expectOneAbortLine(id, from)
  })
})
