// The SQLite WAL's checkpoints, on a thread and a connection of their own (sqlite.ts, decision
// 0037): a checkpoint copies the WAL's pages into the database file and fsyncs both, which on
// the server's event loop stopped every request for as long as the disk took. PASSIVE never
// waits for the writer or a reader; what it cannot copy yet, the next one does.
import { DatabaseSync } from 'node:sqlite'
import { workerData } from 'node:worker_threads'

const { file, busyTimeoutMs, intervalMs } = workerData as { readonly file: string; readonly busyTimeoutMs: number; readonly intervalMs: number }

const database = new DatabaseSync(file, { timeout: busyTimeoutMs })
const checkpoint = database.prepare('PRAGMA wal_checkpoint(PASSIVE)')

setInterval(() => {
  try {
    checkpoint.get()
  } catch {
    // A checkpoint that fails (a lock held past the timeout, a read error) is tried again at the next interval.
  }
}, intervalMs)
