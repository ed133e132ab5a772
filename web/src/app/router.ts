// Screens live in the URL's fragment (#/albums/…), so a reload or a shared link opens the same
// screen and the server needs to know no route but `/`.
import { useEffect, useState } from 'react'

/** The current route: the fragment's path split into its parts ('' parts dropped). */
export function currentRoute(): string[] {
  return location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map(decodeURIComponent)
}

export function useRoute(): string[] {
  const [route, setRoute] = useState(currentRoute)
  useEffect(() => {
    const changed = () => setRoute(currentRoute())
    addEventListener('hashchange', changed)
    return () => removeEventListener('hashchange', changed)
  }, [])
  return route
}

/** The link to a route, for href. */
export function linkTo(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`
}

export function navigate(...parts: string[]): void {
  location.hash = linkTo(...parts)
}
