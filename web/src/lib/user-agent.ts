// What an app is called from what it says about itself: "Chrome on Linux". For the sessions and
// security events (their User-Agent header) and for this browser's default device name (User-Agent
// Client Hints where the browser has them, else its User-Agent string).

const APPS: readonly (readonly [RegExp, string])[] = [
  [/coffer-photos/i, 'coffer-photos (command line)'],
  [/Edg\//, 'Edge'],
  [/OPR\//, 'Opera'],
  [/Firefox\//, 'Firefox'],
  [/Chrom(e|ium)\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/^node/i, 'A Node.js program'],
]
const SYSTEMS: readonly (readonly [RegExp, string])[] = [
  [/Android/, 'Android'],
  [/iPhone|iPad/, 'iOS'],
  [/CrOS|Chrome OS/, 'ChromeOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh|macOS/, 'macOS'],
  [/Linux/, 'Linux'],
]
/** Client Hints brands, most specific first: every Chromium lists "Chromium" too. */
const BRANDS: readonly (readonly [RegExp, string])[] = [
  [/Edge/, 'Edge'],
  [/Opera/, 'Opera'],
  [/Google Chrome/, 'Chrome'],
  [/Chromium/, 'Chromium'],
]

function named(table: readonly (readonly [RegExp, string])[], text: string): string | undefined {
  return table.find(([pattern]) => pattern.test(text))?.[1]
}

/** "Chrome on Linux" from a User-Agent header; the header itself (cut short) when it names nothing known. */
export function appText(userAgent: string | null): string {
  if (userAgent === null || userAgent.trim() === '') return 'An app that did not say what it is'
  const app = named(APPS, userAgent)
  if (app === undefined) return userAgent.slice(0, 60)
  const system = named(SYSTEMS, userAgent)
  return system === undefined ? app : `${app} on ${system}`
}

/** The part of NavigatorUAData read here (Chromium only, so not in TypeScript's DOM types). */
interface UserAgentData {
  readonly brands: readonly { readonly brand: string }[]
  readonly platform: string
}

/** What this browser is called in the account's device directory unless the person types another name. */
export function defaultDeviceName(): string {
  const data = (navigator as Navigator & { userAgentData?: UserAgentData }).userAgentData
  const agent = navigator.userAgent
  const app = (data === undefined ? undefined : named(BRANDS, data.brands.map(({ brand }) => brand).join(' '))) ?? named(APPS, agent) ?? 'Browser'
  const system = (data === undefined ? undefined : named(SYSTEMS, data.platform)) ?? named(SYSTEMS, agent)
  return system === undefined ? app : `${app} on ${system}`
}
