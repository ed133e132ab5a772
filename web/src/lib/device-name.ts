// What this browser is called in the account's device directory unless the person types another
// name: "Chrome on Linux", "Safari on iOS". User-Agent Client Hints where the browser has them
// (Chromium), else the User-Agent string; the person sees it and can change it.

/** The part of NavigatorUAData read here (Chromium only, so not in TypeScript's DOM types). */
interface UserAgentData {
  readonly brands: readonly { readonly brand: string }[]
  readonly platform: string
}

/** Brand names as people say them, most specific first ("Chromium" is in every Chromium's list). */
const BRANDS: readonly [RegExp, string][] = [
  [/Edge/, 'Edge'],
  [/Opera/, 'Opera'],
  [/Brave/, 'Brave'],
  [/Google Chrome/, 'Chrome'],
  [/Chromium/, 'Chromium'],
]

/** User-Agent tokens, most specific first (Edge and Opera also say Chrome; Chrome also says Safari). */
const AGENTS: readonly [RegExp, string][] = [
  [/Edg(e|A|iOS)?\//, 'Edge'],
  [/OPR\//, 'Opera'],
  [/Firefox\/|FxiOS\//, 'Firefox'],
  [/Chrome\/|CriOS\//, 'Chrome'],
  [/Safari\//, 'Safari'],
]

const SYSTEMS: readonly [RegExp, string][] = [
  [/Android/, 'Android'],
  [/iPhone|iPad|iPod/, 'iOS'],
  [/CrOS|Chrome OS/, 'ChromeOS'],
  [/Mac OS X|macOS/, 'macOS'],
  [/Windows/, 'Windows'],
  [/Linux/, 'Linux'],
]

function first(table: readonly [RegExp, string][], text: string): string | null {
  return table.find(([pattern]) => pattern.test(text))?.[1] ?? null
}

export function defaultDeviceName(): string {
  const data = (navigator as Navigator & { userAgentData?: UserAgentData }).userAgentData
  const agent = navigator.userAgent
  const browser = (data === undefined ? null : first(BRANDS, data.brands.map((b) => b.brand).join(' '))) ?? first(AGENTS, agent) ?? 'Browser'
  const system = (data === undefined || data.platform === '' ? null : first(SYSTEMS, data.platform)) ?? first(SYSTEMS, agent)
  return system === null ? browser : `${browser} on ${system}`
}
