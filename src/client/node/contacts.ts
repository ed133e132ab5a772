// The identity keys this device pinned (../sharing.ts ContactStore), in the config folder's
// state.sqlite: one row per account it shared with or was shared with, and when the person
// compared safety numbers.
import { closeSync, openSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { equalBytes } from '../../sdk/bytes.ts'
import type { ContactStore } from '../sharing.ts'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS contacts (
  user_id TEXT PRIMARY KEY,
  identity_key BLOB NOT NULL,
  pinned_at INTEGER NOT NULL,
  verified_at INTEGER
) STRICT;
`

/** The contacts in the SQLite database `file`, opened per call (state.sqlite). */
export function contactsFile(file: string): ContactStore {
  const withDb = <T>(use: (db: DatabaseSync) => T): T => {
    closeSync(openSync(file, 'a', 0o600)) // private before SQLite creates it, as node/state.ts does
    const db = new DatabaseSync(file)
    try {
      db.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;')
      db.exec(SCHEMA)
      return use(db)
    } finally {
      db.close()
    }
  }
  return {
    async pinned(userId) {
      const row = withDb((db) => db.prepare('SELECT identity_key, verified_at FROM contacts WHERE user_id = ?').get(userId)) as
        | { identity_key: Uint8Array; verified_at: number | null }
        | undefined
      return row === undefined ? null : { identityKey: new Uint8Array(row.identity_key), verifiedAt: row.verified_at }
    },
    async pin(userId, identityKey) {
      withDb((db) =>
        db
          .prepare(
            `INSERT INTO contacts (user_id, identity_key, pinned_at, verified_at) VALUES (?, ?, ?, NULL)
             ON CONFLICT (user_id) DO UPDATE SET identity_key = excluded.identity_key, pinned_at = excluded.pinned_at, verified_at = NULL`,
          )
          .run(userId, identityKey, Date.now()),
      )
    },
    async markVerified(userId, identityKey, at) {
      const pinned = await this.pinned(userId)
      if (pinned === null || !equalBytes(pinned.identityKey, identityKey)) throw new Error(`the key compared is not the one pinned for account ${userId}`)
      withDb((db) => db.prepare('UPDATE contacts SET verified_at = ? WHERE user_id = ?').run(at, userId))
    },
  }
}
