// The built web app as the server serves it: the two pages with the CSP and never cached, the
// hashed assets cached for a year with their media types, and nothing else under /assets/.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WEB_CSP, WEB_DIST } from '../../src/http/web-app.ts'
import { raw } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
/** The asset paths index.html loads, as written by the build (test/support/build-web.ts). */
let assets: string[]

beforeAll(async () => {
  server = await startServer()
  assets = [...(await readFile(path.join(WEB_DIST, 'index.html'), 'utf8')).matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!)
})
afterAll(() => server.close())

describe('the web app', () => {
  it.each([
    ['/', 'Coffer Photos'],
    ['/admin', 'Coffer operator'],
  ])('%s is its page, under the CSP, never cached', async (route, title) => {
    const page = await raw(server, 'GET', route)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.text).toContain(`<title>${title}</title>`)
    expect(page.headers.get('content-security-policy')).toBe(WEB_CSP)
    expect(WEB_CSP).toContain("script-src 'self'")
    expect(WEB_CSP).toContain("connect-src 'self'")
    expect(WEB_CSP).not.toContain('unsafe-inline')
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
    // No inline script: every script element loads a file of this origin.
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/)
  })

  it('serves each hashed asset with its media type, cached for a year', async () => {
    expect(assets.some((asset) => asset.endsWith('.js'))).toBe(true)
    expect(assets.some((asset) => asset.endsWith('.css'))).toBe(true)
    for (const asset of assets) {
      const answer = await raw(server, 'GET', asset)
      expect(answer.status, asset).toBe(200)
      expect(answer.headers.get('cache-control'), asset).toBe('public, max-age=31536000, immutable')
      expect(answer.headers.get('content-type'), asset).toMatch(
        asset.endsWith('.js') ? /^(text|application)\/javascript/ : asset.endsWith('.css') ? /^text\/css/ : /^image\/svg\+xml/,
      )
      expect(answer.text, asset).toBe(await readFile(path.join(WEB_DIST, asset), 'utf8'))
    }
  })

  it('serves the manifest, its icons and the service worker, never cached', async () => {
    const manifest = await raw(server, 'GET', '/manifest.webmanifest')
    expect(manifest.status).toBe(200)
    expect(manifest.headers.get('content-type')).toMatch(/^application\/manifest\+json/)
    expect(manifest.headers.get('cache-control')).toBe('no-store')
    const parsed = JSON.parse(manifest.text) as {
      name: string
      start_url: string
      display: string
      icons: { src: string; sizes: string; purpose: string }[]
      share_target: { action: string; method: string; enctype: string }
    }
    expect(parsed).toMatchObject({
      name: 'Coffer Photos',
      display: 'standalone',
      share_target: { action: '/share', method: 'POST', enctype: 'multipart/form-data' },
    })
    expect(parsed.icons.map((icon) => `${icon.sizes} ${icon.purpose}`)).toEqual(['192x192 any', '512x512 any', '512x512 maskable'])
    for (const icon of parsed.icons) {
      const answer = await raw(server, 'GET', icon.src)
      expect(answer.status, icon.src).toBe(200)
      expect(answer.headers.get('content-type'), icon.src).toBe('image/png')
    }
    const worker = await raw(server, 'GET', '/sw.js')
    expect(worker.status).toBe(200)
    expect(worker.headers.get('content-type')).toMatch(/^(text|application)\/javascript/)
    expect(worker.headers.get('cache-control')).toBe('no-store')
    expect(worker.headers.get('content-security-policy')).toBe(WEB_CSP)
    expect(WEB_CSP).toContain("worker-src 'self'")
    expect(WEB_CSP).toContain("manifest-src 'self'")
    // The shell it caches: the page and the gallery's files, nothing of the API.
    const shell = JSON.parse(JSON.parse(/JSON\.parse\(("(?:[^"\\]|\\.)*")\)/.exec(worker.text)![1]!) as string) as { paths: string[] }
    expect(shell.paths).toContain('/')
    for (const asset of assets) expect(shell.paths).toContain(asset)
    expect(shell.paths.filter((p) => !p.startsWith('/assets/') && !p.startsWith('/icons/') && p !== '/' && p !== '/manifest.webmanifest')).toEqual([])
    expect(shell.paths.some((p) => p.includes('admin'))).toBe(false)
  })

  it('has no route for the share target: its POST is answered by the service worker', async () => {
    expect((await raw(server, 'POST', '/share')).status).toBe(404)
  })

  it.each([
    '/assets/missing-0000.js',
    '/icons/missing.png',
    '/icons/..%2findex.html',
    '/assets/../index.html',
    '/assets/%2e%2e/admin.html',
    '/index.html',
    '/web/src/main.tsx',
  ])('%s is a 404 problem, not a file', async (route) => {
    const answer = await raw(server, 'GET', route)
    expect(answer.status).toBe(404)
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(answer.json?.code).toBe('error.not_found')
    expect(answer.headers.get('cache-control')).toBe('no-store')
  })
})
