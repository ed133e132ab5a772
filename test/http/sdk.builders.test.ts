// What the SDK's builders make, the server accepts: a signed directory is published and
// served back readable, an upload signed by manifestSigner applies, a replace built with
// buildLifecycleWrite continues the chain (and replays when sent again), and every manifest in
// the feed reads back under the identity key.
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromBase64, sha256Hex } from '../../src/sdk/bytes.ts'
import { CofferProblem } from '../../src/sdk/client.ts'
import { readDirectory, signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { buildLifecycleWrite, manifestSigner, readManifest } from '../../src/sdk/manifest.ts'
import { registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

describe('the SDK builders against the server', () => {
  it('publish a directory, upload, replace and read the feed', async () => {
    const member = await registered(server, 'builders')
    const coffer = member.client
    const identity = IdentityKey.generate()
    const deviceId = randomUUID()
    const { user_id: userId } = await coffer.getProfile()

    const devices = [{ device_id: deviceId, public_key: new Uint8Array(randomBytes(32)), name: 'Test device' }]
    expect(await coffer.publishDirectory(await signDirectory(identity, { version: 1, devices }), identity)).toBe(1)
    expect(readDirectory((await coffer.fetchDirectory(userId))!.bytes, identity.publicKey)).toEqual({ version: 1, devices })
    const stale = await coffer.publishDirectory(await signDirectory(identity, { version: 1, devices: [] }), identity).catch((error: unknown) => error)
    expect(stale).toBeInstanceOf(CofferProblem)
    expect((stale as CofferProblem).problem).toMatchObject({ code: 'error.directory.version_conflict', stored: 1 })

    const albumId = randomUUID()
    await coffer.provisionAlbum(albumId)
    const common = {
      protocol_version: '2026-06-01',
      album_id: albumId,
      amk_version: 1,
      plaintext_size: 1000,
      chunk_size: 65536,
      key_mode: 'derived',
      created_by_user: userId,
      created_by_device: deviceId,
      client_version: 'sdk-builders-test/1',
    } as const
    const fileId = randomUUID()
    const original = new Uint8Array(randomBytes(700))
    const created = await coffer.uploadAsset({
      albumId,
      cryptoSuiteId: 1,
      original,
      derivatives: [new Uint8Array(randomBytes(200))],
      metadata: new Uint8Array(randomBytes(50)),
      sign: manifestSigner(identity, { ...common, crypto_suite_id: 1, file_id: fileId, action: 'create' }, { note: 'app data' }),
    })
    expect(created).toMatchObject({ asset_id: fileId, action: 'create', replayed: false, sent: 2 })

    const next = new Uint8Array(randomBytes(600))
    const session = await coffer.openUploadSession({
      album_id: albumId,
      crypto_suite_id: 1,
      ciphertext_hash: sha256Hex(next),
      blobs: [{ role: 'original', hash: sha256Hex(next), size: next.length }],
    })
    await coffer.putBlob(session.upload_id, sha256Hex(next), next)
    const replace = await buildLifecycleWrite(identity, {
      envelope: {
        ...common,
        crypto_suite_id: 1,
        file_id: fileId,
        action: 'replace',
        ciphertext_hash: sha256Hex(next),
        prior_provenance_hash: created.manifestHash,
        original_blob_hash: sha256Hex(original),
      },
    })
    expect(await coffer.applyManifest(albumId, replace.request)).toMatchObject({ asset_id: fileId, action: 'replace', replayed: false })
    expect(await coffer.applyManifest(albumId, replace.request)).toMatchObject({ asset_id: fileId, action: 'replace', replayed: true })

    const feed = await coffer.feed(albumId)
    expect(feed.entries.map((entry) => entry.envelope_hash)).toEqual([created.manifestHash, replace.manifestHash])
    const read = feed.entries.map((entry) => readManifest(fromBase64(entry.manifest_cbor), identity.publicKey))
    expect(read.map((m) => m.envelope.action)).toEqual(['create', 'replace'])
    expect(read[0]!.content).toEqual({ note: 'app data' })
    expect(read[1]!.envelope).toEqual(replace.envelope)
    expect(await coffer.downloadBlob(sha256Hex(next))).toEqual(next)
  })
})
