// An app on the packed @coffer/sdk, as a new developer would write it (test/e2e/sdk.package.test.ts
// installs the tarball into a scratch project, type-checks this file there without Node's
// types, compiles it and runs it on the machine's Node against a real server). It prints one
// JSON line of what it saw. The test puts the server's address in place of 'SERVER_URL'.
import {
  CofferClient,
  CofferProblem,
  IdentityKey,
  buildLifecycleWrite,
  fromBase64,
  manifestSigner,
  readDirectory,
  readManifest,
  sha256Hex,
  signDirectory,
  verifyReceipts,
} from '@coffer/sdk'
import { albumFiles, backupFile, generateMasterKey, openAlbum } from '@coffer/sdk/photos'

const coffer = new CofferClient({ baseUrl: 'SERVER_URL' })
const random = (size: number) => crypto.getRandomValues(new Uint8Array(size))

await coffer.register(`app-${crypto.randomUUID()}@example.test`, 'a long passphrase for the app')
const { user_id: userId } = await coffer.getProfile()
const identity = IdentityKey.generate()
const deviceId = crypto.randomUUID()
await coffer.publishDirectory(
  await signDirectory(identity, { version: 1, devices: [{ device_id: deviceId, public_key: random(32), name: 'Example' }] }),
  identity,
)
const directory = readDirectory((await coffer.fetchDirectory(userId))!.bytes, identity.publicKey)

let conflict = ''
try {
  await coffer.publishDirectory(await signDirectory(identity, { version: 1, devices: [] }), identity)
} catch (error) {
  if (error instanceof CofferProblem) conflict = `${error.status} ${error.code}`
}

const albumId = crypto.randomUUID()
await coffer.provisionAlbum(albumId)
const fileId = crypto.randomUUID()
const original = random(4096)
const envelope = {
  protocol_version: '2026-06-01',
  album_id: albumId,
  file_id: fileId,
  crypto_suite_id: 1,
  amk_version: 1,
  plaintext_size: 4000,
  chunk_size: 65536,
  key_mode: 'derived',
  created_by_user: userId,
  created_by_device: deviceId,
  client_version: 'example/1',
} as const
const created = await coffer.uploadAsset({
  albumId,
  cryptoSuiteId: 1,
  original,
  derivatives: [random(512)],
  metadata: random(64),
  sign: manifestSigner(identity, { ...envelope, action: 'create' }),
})

const next = random(2048)
const session = await coffer.openUploadSession({
  album_id: albumId,
  crypto_suite_id: 1,
  ciphertext_hash: sha256Hex(next),
  blobs: [{ role: 'original', hash: sha256Hex(next), size: next.length }],
})
await coffer.putBlob(session.upload_id, sha256Hex(next), next)
const replace = await buildLifecycleWrite(identity, {
  envelope: {
    ...envelope,
    action: 'replace',
    ciphertext_hash: sha256Hex(next),
    prior_provenance_hash: created.manifestHash,
    original_blob_hash: sha256Hex(original),
  },
})
const replaced = await coffer.applyManifest(albumId, replace.request)

const feed = await coffer.feed(albumId)
const actions = feed.entries.map((entry) => readManifest(fromBase64(entry.manifest_cbor), identity.publicKey).envelope.action)
const range = await coffer.downloadBlob(sha256Hex(next), { start: 10, end: 19 })
const verdicts = await coffer.verifyStorage({ assets: [{ asset_id: fileId, blob_hashes: [sha256Hex(next)] }], deep: true })
const receipts = await coffer.assetReceipts(fileId)
const check = await verifyReceipts(receipts.receipts, await coffer.attestationKeys(), fileId)

// The photo library on the same account: a named album, a file backed up and read back.
const library = { client: coffer, identity, identityPublicKey: identity.publicKey, userId, deviceId, masterKey: generateMasterKey() }
const holidays = await openAlbum(library, 'Holidays')
const photo = new Uint8Array([...random(60_000), ...random(60_000)]) // two chunks; getRandomValues gives at most 65,536 bytes a call
const backedUp = await backupFile(
  { ...library, albumId: holidays.albumId },
  { name: 'beach.jpg', size: photo.length, type: 'image/jpeg', modified: 1_700_000_000_000, open: () => [photo] },
)
let restored = new Uint8Array(0)
for await (const file of albumFiles(library, holidays.albumId)) {
  for await (const chunk of file.bytes) restored = new Uint8Array([...restored, ...chunk])
}

console.log(
  JSON.stringify({
    devices: directory.devices.length,
    conflict,
    created: created.action,
    replaced: replaced.action,
    actions,
    range: range.length === 10 && range.every((byte, i) => byte === next[10 + i]),
    durable: verdicts.verdicts[0]?.durable,
    receipts: receipts.receipts.length,
    receiptsValid: check.valid,
    photo: backedUp.status,
    photoRestored: restored.length === photo.length && restored.every((byte, i) => byte === photo[i]),
  }),
)
