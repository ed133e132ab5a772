// SECRET_KEY resolution and the keys derived from it. When SECRET_KEY is unset, 32 random
// bytes are generated once into $DATA_DIR/secret.key; every later start reads them back.
import { hkdfSync, randomBytes } from 'node:crypto'
import { open, readFile, link, unlink } from 'node:fs/promises'
import path from 'node:path'
import { makeDirectory } from '../directories.ts'

export const SECRET_KEY_FILE = 'secret.key'

export async function resolveSecretKey(configured: Buffer | null, dataDir: string): Promise<Buffer> {
  if (configured) return configured
  const file = path.join(dataDir, SECRET_KEY_FILE)
  const existing = await readKeyFile(file)
  if (existing) return existing
  makeDirectory(dataDir)
  // Write to a private temporary name, fsync, then link into place: link fails when another
  // process won the race, and then both use the winner's key.
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  const handle = await open(temporary, 'wx', 0o600)
  try {
    await handle.writeFile(`${randomBytes(32).toString('base64')}\n`)
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await link(temporary, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    await unlink(temporary)
  }
  const directory = await open(dataDir, 'r')
  try {
    await directory.sync()
  } finally {
    await directory.close()
  }
  const written = await readKeyFile(file)
  if (!written) throw new Error(`${file} could not be read back after writing`)
  return written
}

async function readKeyFile(file: string): Promise<Buffer | null> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  const key = Buffer.from(text.trim(), 'base64')
  if (key.length !== 32) throw new Error(`${file} does not hold 32 bytes of base64; restore it from backup or remove it`)
  return key
}

/** A purpose-bound 32-byte key, so one secret never serves two uses (HKDF-SHA256). */
export function deriveKey(secretKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), `coffer/${purpose}`, 32))
}
