// Attestation keys (API.md section 7): hybrid keys that sign custody receipts. The first start
// generates one; `coffer keys rotate` retires it (it stays listed, so old receipts verify) and
// activates a new one. Private seeds are sealed at rest with a key derived from SECRET_KEY.
import type { Static } from 'typebox'
import type { AttestationKeysDocument } from '../../contract/custody.ts'
import { timestamp } from '../../contract/common.ts'
import type { SecretBox } from '../../crypto/secret-box.ts'
import { HYBRID_ALGORITHM, exportHybridSeeds, generateHybridKeyPair, importHybridSeeds, keyFingerprint, type HybridPrivateKey } from '../../crypto/hybrid.ts'
import type { Deps } from '../../deps.ts'
import { StartUpError } from '../../start-up-failure.ts'
import type { CustodyStore } from '../../storage/port/custody.ts'

export interface SigningKey {
  readonly keyId: string
  readonly privateKey: HybridPrivateKey
}

/**
 * Opens sealed attestation keys, keeping each opened key by its id: a key id names immutable
 * bytes, so the cache can never disagree with the database (which says which key is active).
 */
export interface AttestationKeyring {
  generate(): { keyId: string; publicKey: Buffer; privateBox: Buffer }
  signingKey(store: CustodyStore, keyId: string): Promise<SigningKey>
}

function associatedData(keyId: string): string {
  return `coffer/attestation-key/v1:${keyId}`
}

export function createAttestationKeyring(box: SecretBox): AttestationKeyring {
  const opened = new Map<string, SigningKey>()
  return {
    generate() {
      const pair = generateHybridKeyPair()
      const keyId = keyFingerprint(pair.publicKey)
      return { keyId, publicKey: pair.publicKey, privateBox: box.seal(exportHybridSeeds(pair.privateKey), associatedData(keyId)) }
    },
    async signingKey(store, keyId) {
      const cached = opened.get(keyId)
      if (cached) return cached
      const record = await store.findAttestationKey(keyId)
      if (record === undefined) throw new Error(`attestation key ${keyId} is not in the database`)
      const key = { keyId, privateKey: importHybridSeeds(box.open(record.privateBox, associatedData(keyId))).privateKey }
      opened.set(keyId, key)
      return key
    },
  }
}

/**
 * The issuer the newest receipt names when it is not this process's PUBLIC_ORIGIN, else null. A
 * client checks a receipt's server_id against the attestation-keys document of the origin it
 * reaches, so receipts issued under another origin fail its check: every instance, and every
 * `coffer` command that appends receipts (`maintain`), must share one PUBLIC_ORIGIN. After the
 * service moved to a new origin, this answers the old one until the first receipt issued under it.
 */
export async function anotherIssuer(deps: Deps): Promise<string | null> {
  const newest = await deps.storage.newestReceiptIssuer()
  return newest === null || newest === deps.config.publicOrigin ? null : newest
}

/** Says so at a start when the newest receipt names another issuer than PUBLIC_ORIGIN (see anotherIssuer). */
export async function warnOfAnotherIssuer(deps: Deps): Promise<void> {
  const other = await anotherIssuer(deps)
  if (other === null) return
  deps.log.warn(
    { public_origin: deps.config.publicOrigin, newest_receipt_issued_by: other },
    'PUBLIC_ORIGIN is not the issuer the newest receipt names: clients refuse a receipt whose issuer is not the origin they reach; ' +
      'give every instance and every coffer command the same PUBLIC_ORIGIN (maintenance leaves orphaned receipt requests to a process that has it)',
  )
}

/**
 * Generates the first attestation key unless one is active, and makes RECEIPT_CHAINS receipt
 * chains (decision 0072) while no receipt has been issued; once one has, receipt_seq numbers
 * each chain's receipts by the number of chains, and a start with another number is refused.
 * Several instances starting at once agree on one key.
 */
export async function ensureAttestationKey(deps: Deps): Promise<string> {
  return deps.storage.transaction(async (tx) => {
    const head = await tx.lockReceiptChain(1)
    let keyId = head.activeKeyId
    if (keyId === null) {
      const key = deps.attestation.generate()
      await tx.activateAttestationKey(key, deps.clock.now())
      keyId = key.keyId
    }
    const wanted = deps.config.receiptChains
    const layout = await tx.receiptChainLayout()
    if (layout.chains !== wanted) {
      if (layout.issued)
        throw new StartUpError(
          `RECEIPT_CHAINS=${wanted}, but this database has issued receipts on ${layout.chains} chain${layout.chains === 1 ? '' : 's'}: ` +
            `start every instance with RECEIPT_CHAINS=${layout.chains} (the number of chains is fixed by the first receipt)`,
        )
      await tx.setReceiptChains(wanted)
    }
    return keyId
  })
}

/** Retires the active key and activates a new one; receipts signed from now on name the new key. */
export async function rotateAttestationKey(deps: Deps): Promise<{ retired: string | null; active: string }> {
  return deps.storage.transaction(async (tx) => {
    const head = await tx.lockReceiptChain(1)
    const key = deps.attestation.generate()
    await tx.activateAttestationKey(key, deps.clock.now())
    return { retired: head.activeKeyId, active: key.keyId }
  })
}

export async function attestationKeysDocument(deps: Deps): Promise<Static<typeof AttestationKeysDocument>> {
  const keys = await deps.storage.listAttestationKeys()
  return {
    server_id: deps.config.publicOrigin,
    // Only when there are several: a one-chain server's document stays exactly API.md's.
    ...(deps.config.receiptChains === 1 ? {} : { receipt_chains: deps.config.receiptChains }),
    keys: keys.map((key) => ({
      key_id: key.keyId,
      algorithm: HYBRID_ALGORITHM,
      public_key: key.publicKey.toString('base64'),
      status: key.status,
      not_before: timestamp(key.notBefore),
      ...(key.notAfter === null ? {} : { not_after: timestamp(key.notAfter) }),
    })),
  }
}
