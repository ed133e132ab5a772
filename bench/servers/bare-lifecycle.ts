// The ceiling of the lifecycle scenario: a bare Fastify 5 route (no logger, no hooks, no
// schemas, no database, no files) at Coffer's path that does the part of a lifecycle write
// every server must do: parse the JSON body, decode the base64 manifest and take its SHA-256;
// it answers what Coffer answers (asset id, a sync sequence, the action).
import { createHash } from 'node:crypto'
import Fastify from 'fastify'
import { serveParent, startOrDie } from '../lib/child-side.ts'

interface OpBody {
  readonly manifest_envelope?: { readonly file_id?: unknown; readonly action?: unknown }
  readonly manifest_cbor?: unknown
}

await startOrDie(async () => {
  const app = Fastify({ logger: false })
  let syncSeq = 0
  app.post<{ Params: { album_id: string }; Body: OpBody }>('/v1/albums/:album_id/ops', async (request, reply) => {
    const envelope = request.body?.manifest_envelope
    const manifest = request.body?.manifest_cbor
    if (typeof manifest !== 'string' || envelope === undefined) return reply.code(422).send({ code: 'error.request.invalid' })
    const manifestHash = createHash('sha256').update(Buffer.from(manifest, 'base64')).digest('hex')
    if (manifestHash.length !== 64) return reply.code(500).send()
    return { asset_id: envelope.file_id, sync_seq: ++syncSeq, action: envelope.action, replayed: false }
  })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  serveParent({ url }, { onStop: () => app.close() })
})
