// Prometheus metrics of one instance (each instance is scraped on its own; nothing here is
// shared state between requests that matters to behaviour).
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export interface Metrics {
  readonly registry: Registry
  readonly httpRequests: Counter<'method' | 'route' | 'status'>
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>
  readonly passwordVerifications: Counter
  readonly blobBytesRead: Counter
}

export function createMetrics(): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'coffer_' })
  return {
    registry,
    httpRequests: new Counter({
      name: 'coffer_http_requests_total',
      help: 'HTTP requests answered, by route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'coffer_http_request_duration_seconds',
      help: 'HTTP request latency, by route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    passwordVerifications: new Counter({
      name: 'coffer_password_verifications_total',
      help: 'argon2id verifications run, including the dummy one for an unknown email',
      registers: [registry],
    }),
    blobBytesRead: new Counter({
      name: 'coffer_blob_bytes_read_total',
      help: 'Bytes read from the blob store (downloads, deep verification)',
      registers: [registry],
    }),
  }
}
