// s3rver ships no types: the part of its API the tests use.
declare module 's3rver' {
  interface S3rverOptions {
    readonly address?: string
    readonly port?: number
    readonly silent?: boolean
    readonly directory?: string
    readonly configureBuckets?: readonly { readonly name: string }[]
  }
  interface StoredObject {
    content: import('node:stream').Readable | null
    range?: { start: number; end: number }
  }
  interface FilesystemStore {
    getObject(bucket: string, key: string, options?: { start?: number; end?: number }): Promise<StoredObject | null>
    getResourcePath(bucket: string, key: string, resource: 'object' | 'object.md5' | 'metadata.json'): string
    deleteObject(bucket: string, key: string): Promise<void>
    copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata?: unknown): Promise<unknown>
  }
  export default class S3rver {
    constructor(options: S3rverOptions)
    readonly store: FilesystemStore
    run(): Promise<{ address: string; port: number }>
    close(): Promise<void>
  }
}
