// Every scenario, in the order `npm run bench` runs them. A new one is a file beside this one
// exporting a `Scenario` (lib/scenario.ts), listed here.
import type { Scenario } from '../lib/scenario.ts'
import { bearer } from './bearer.ts'
import { login } from './login.ts'

export const scenarios: readonly Scenario[] = [bearer, login]
