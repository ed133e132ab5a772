// The page's side of the service worker (web/src/sw/sw.ts; decision 0057): registering it, and
// asking it for the files a share sheet sent to the app. Whether the browser is offline, for the
// frame's offline screen.
import { useEffect, useState } from 'react'

/** Registers /sw.js when the page has loaded (see registerWorker). */
export function registerServiceWorker(): void {
  if (!('serviceWorker' in navigator)) return
  addEventListener('load', () => void registerWorker())
}

/**
 * Registers /sw.js (a build's); false when it cannot be: the development server has none, and
 * without it the app works as before, only not offline, not as a share target, and videos play
 * from their whole original.
 */
export async function registerWorker(): Promise<boolean> {
  try {
    await navigator.serviceWorker.register('/sw.js', { scope: '/' })
    return true
  } catch {
    return false
  }
}

/** The files the share sheet sent (null: none, or the worker was restarted and forgot them). */
export async function sharedFiles(): Promise<File[] | null> {
  if (!('serviceWorker' in navigator)) return null
  const registration = await Promise.race([navigator.serviceWorker.ready, new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000))])
  const worker = registration?.active
  if (worker === undefined || worker === null) return null
  return new Promise((resolve) => {
    const channel = new MessageChannel()
    const timer = setTimeout(() => resolve(null), 5000)
    channel.port1.onmessage = (event: MessageEvent<{ files: File[] | null }>) => {
      clearTimeout(timer)
      resolve(event.data.files)
    }
    worker.postMessage({ type: 'shared-files' }, [channel.port2])
  })
}

/** Tells the worker to forget the shared files (they are in the upload queue now, or turned down). */
export function forgetSharedFiles(): void {
  navigator.serviceWorker?.controller?.postMessage({ type: 'shared-done' })
  void navigator.serviceWorker?.ready.then((registration) => registration.active?.postMessage({ type: 'shared-done' }))
}

/** Whether the browser says it is offline, kept up to date. */
export function useOffline(): boolean {
  const [offline, setOffline] = useState(() => !navigator.onLine)
  useEffect(() => {
    const changed = () => setOffline(!navigator.onLine)
    addEventListener('online', changed)
    addEventListener('offline', changed)
    return () => {
      removeEventListener('online', changed)
      removeEventListener('offline', changed)
    }
  }, [])
  return offline
}
