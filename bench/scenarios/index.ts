// Every scenario, in the order `npm run bench` runs them. A new one is a file beside this one
// exporting a `Scenario` (lib/scenario.ts), listed here.
import type { Scenario } from '../lib/scenario.ts'
import { backup } from './backup.ts'
import { bearer } from './bearer.ts'
import { cli } from './cli.ts'
import { importTakeout } from './import.ts'
import { deepVerify } from './deep-verify.ts'
import { library } from './library.ts'
import { lifecycle } from './lifecycle.ts'
import { login } from './login.ts'
import { memory } from './memory.ts'
import { peers } from './peers.ts'
import { receipts } from './receipts.ts'
import { relay } from './relay.ts'
import { restore } from './restore.ts'
import { revokeAll } from './revoke-all.ts'
import { search } from './search.ts'
import { thumbnails } from './thumbnails.ts'
import { upload } from './upload.ts'
import { video } from './video.ts'
import { web } from './web.ts'

export const scenarios: readonly Scenario[] = [
  bearer,
  login,
  relay,
  revokeAll,
  lifecycle,
  upload,
  memory,
  deepVerify,
  thumbnails,
  receipts,
  backup,
  restore,
  peers,
  library,
  web,
  search,
  video,
  cli,
  importTakeout,
]
