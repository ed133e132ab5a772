// The part of autocannon 9's programmatic API that the benchmarks use (the package ships no
// typings). Options and result fields as documented in its README.
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string
      connections?: number
      duration?: number
      pipelining?: number
      timeout?: number
      method?: string
      headers?: Record<string, string>
      body?: string | Buffer
      title?: string
    }

    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      total: number
      p50: number
      p90: number
      p99: number
    }

    interface Result {
      title?: string
      url: string
      connections: number
      /** Seconds. */
      duration: number
      errors: number
      timeouts: number
      non2xx: number
      '2xx': number
      statusCodeStats: Record<string, { count: number }>
      /** Milliseconds. */
      latency: Histogram
      /** Per-second samples; `total` is the number of completed requests. */
      requests: Histogram & { sent: number }
    }

    interface Instance extends PromiseLike<Result> {
      stop(): void
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance
  export = autocannon
}
