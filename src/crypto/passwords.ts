// argon2id through @node-rs/argon2: hashing and verification run on the libuv thread pool,
// never on the event loop. A hash records its own parameters, so changing the configured ones
// never locks anyone out.
import { hash, verify, type Algorithm } from '@node-rs/argon2'
import { randomBytes } from 'node:crypto'

// `Algorithm` is a const enum in the typings; its Argon2id member is 2.
const ARGON2ID = 2 as Algorithm

export interface PasswordHashParams {
  readonly memoryKib: number
  readonly iterations: number
}

export interface PasswordHasher {
  hash(password: string): Promise<string>
  verify(passwordHash: string, password: string): Promise<boolean>
  /** Spends the time of one verification on a hash of the same parameters (unknown email). */
  verifyDummy(password: string): Promise<void>
}

export async function createPasswordHasher(params: PasswordHashParams, onVerify: () => void = () => {}): Promise<PasswordHasher> {
  const options = { algorithm: ARGON2ID, memoryCost: params.memoryKib, timeCost: params.iterations, parallelism: 1 }
  const dummyHash = await hash(randomBytes(16).toString('hex'), options)
  const checked = async (passwordHash: string, password: string): Promise<boolean> => {
    onVerify()
    try {
      return await verify(passwordHash, password)
    } catch {
      return false // an unreadable stored hash never authenticates
    }
  }
  return {
    hash: (password) => hash(password, options),
    verify: checked,
    verifyDummy: async (password) => {
      await checked(dummyHash, password)
    },
  }
}
