// The config folder of `coffer-photos` (docs/photos.md, "The config folder"): who is logged in
// where, the session's token pair and this device's keys, one JSON file each. The folder is
// 0700 and every file 0600; a file is replaced whole (temporary file, fsync, rename, fsync of
// the folder), so a crash leaves the old or the new version, never half of one. Writes are
// synchronous: CofferClient reports each refreshed token pair through a synchronous callback,
// and two refreshes must reach the disk in the order they happened.
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, unlinkSync, writeSync } from 'node:fs'
import { homedir } from 'node:os'
import path from 'node:path'
import { UUID_PATTERN } from '../../contract/constants.ts'
import type { AccountKeys } from '../../client/account.ts'
import { fromBase64, toBase64 } from '../../sdk/bytes.ts'
import type { Tokens } from '../../sdk/client.ts'

export const HOME_FILES = { account: 'account.json', tokens: 'tokens.json', keys: 'keys.json' } as const

/** `$COFFER_PHOTOS_HOME` (from `cwd` when relative), else `$XDG_CONFIG_HOME/coffer-photos`, else `~/.config/coffer-photos`. */
export function homeFolder(env: Readonly<Record<string, string | undefined>>, cwd: string): string {
  if (env.COFFER_PHOTOS_HOME) return path.resolve(cwd, env.COFFER_PHOTOS_HOME)
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and is to be ignored.
  const config = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(homedir(), '.config')
  return path.join(config, 'coffer-photos')
}

// Each file is checked field by field as it is read. Plain checks, not TypeBox: every command
// reads these files at its start, and TypeBox is some 700 modules to load (decision 0040).
type FieldCheck = (value: unknown) => boolean
const text: FieldCheck = (value) => typeof value === 'string' && value.length > 0
const uuid: FieldCheck = (value) => typeof value === 'string' && new RegExp(UUID_PATTERN).test(value)
const base64: FieldCheck = (value) => typeof value === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(value)
const oneOf =
  (...allowed: readonly unknown[]): FieldCheck =>
  (value) =>
    allowed.includes(value)
const integer: FieldCheck = (value) => Number.isInteger(value)

/** What a file must hold: an object with these fields (more are allowed, as a later version may write them). */
type FileShape = Readonly<Record<string, FieldCheck>>

/** account.json: written by login; the device id is made once per folder and kept across logins. */
export interface SavedAccount {
  readonly server: string
  readonly email: string
  readonly user_id: string
  readonly device_id: string
}
const SAVED_ACCOUNT: FileShape = { server: text, email: text, user_id: uuid, device_id: uuid }

/** tokens.json: the token pair, exactly as the server gave it (TokenResponse). */
const SAVED_TOKENS: FileShape = { access_token: text, refresh_token: text, token_type: oneOf('Bearer'), expires_by: integer }

/**
 * keys.json: written by setup before anything is published, as `pending`, so that an
 * interrupted setup resumes with the same keys; `complete` once the recovery phrase was shown.
 */
export interface SavedKeys {
  readonly state: 'pending' | 'complete'
  /** Standard base64 of the 32-byte account master key. */
  readonly master_key: string
  /** Standard base64 of the identity key's 64 seed bytes (IdentityKey.exportSeeds()). */
  readonly identity_seeds: string
  /** Standard base64 of this device's 32-byte X-Wing seed (its secret key). */
  readonly xwing_seed: string
}
const SAVED_KEYS: FileShape = { state: oneOf('pending', 'complete'), master_key: base64, identity_seeds: base64, xwing_seed: base64 }

function fits(shape: FileShape, value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  return Object.entries(shape).every(([field, check]) => check((value as Record<string, unknown>)[field]))
}

/** The keys as keys.json holds them, in `state`. */
export function savedKeys(keys: AccountKeys, state: SavedKeys['state']): SavedKeys {
  return { state, master_key: toBase64(keys.masterKey), identity_seeds: toBase64(keys.identitySeeds), xwing_seed: toBase64(keys.xwingSeed) }
}

/** The keys keys.json holds. */
export function accountKeys(saved: SavedKeys): AccountKeys {
  return { masterKey: fromBase64(saved.master_key), identitySeeds: fromBase64(saved.identity_seeds), xwingSeed: fromBase64(saved.xwing_seed) }
}

/** A file in the config folder that is not what coffer-photos writes there. */
export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError'
}

export class Home {
  readonly path: string

  constructor(folder: string) {
    this.path = folder
  }

  readAccount(): SavedAccount | null {
    return this.#read(HOME_FILES.account, SAVED_ACCOUNT)
  }

  saveAccount(account: SavedAccount): void {
    this.#write(HOME_FILES.account, account)
  }

  readTokens(): Tokens | null {
    return this.#read(HOME_FILES.tokens, SAVED_TOKENS)
  }

  /** Keeps the pair, or removes the file for null (CofferClient's `onTokens`). */
  saveTokens(tokens: Tokens | null): void {
    if (tokens === null) this.#remove(HOME_FILES.tokens)
    else
      this.#write(HOME_FILES.tokens, {
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token,
        token_type: tokens.token_type,
        expires_by: tokens.expires_by,
      })
  }

  readKeys(): SavedKeys | null {
    return this.#read(HOME_FILES.keys, SAVED_KEYS)
  }

  saveKeys(keys: SavedKeys): void {
    this.#write(HOME_FILES.keys, keys)
  }

  forgetKeys(): void {
    this.#remove(HOME_FILES.keys)
  }

  /** After the account was deleted: which account and device this folder was for. */
  forgetAccount(): void {
    this.#remove(HOME_FILES.account)
  }

  #file(name: string): string {
    return path.join(this.path, name)
  }

  #read<T>(name: string, shape: FileShape): T | null {
    let text: string
    try {
      text = readFileSync(this.#file(name), 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      value = undefined
    }
    if (!fits(shape, value))
      throw new ConfigFileError(`${this.#file(name)} is not what coffer-photos writes; remove it (and log in again), or point COFFER_PHOTOS_HOME elsewhere`)
    return value as T
  }

  #write(name: string, value: unknown): void {
    mkdirSync(this.path, { recursive: true, mode: 0o700 })
    chmodSync(this.path, 0o700) // also when the folder was there before, made by hand
    const final = this.#file(name)
    const temporary = path.join(this.path, `.${name}.${randomBytes(6).toString('hex')}.tmp`)
    const handle = openSync(temporary, 'wx', 0o600)
    try {
      writeSync(handle, `${JSON.stringify(value, null, 2)}\n`)
      fsyncSync(handle)
    } catch (error) {
      closeSync(handle)
      unlinkSync(temporary)
      throw error
    }
    closeSync(handle)
    renameSync(temporary, final)
    this.#syncFolder()
  }

  #remove(name: string): void {
    rmSync(this.#file(name), { force: true })
    this.#syncFolder()
  }

  #syncFolder(): void {
    let folder: number
    try {
      folder = openSync(this.path, 'r')
    } catch {
      return // no folder: nothing was written
    }
    try {
      fsyncSync(folder)
    } catch {
      // Some platforms cannot fsync a folder; the rename itself is done.
    } finally {
      closeSync(folder)
    }
  }
}
