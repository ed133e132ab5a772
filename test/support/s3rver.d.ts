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
  /** What a PUT hands the store: the body as it arrives (or whole), and the request's headers. */
  interface ObjectToStore {
    readonly bucket: string
    readonly key: string
    readonly content: import('node:stream').Readable | Buffer
    readonly metadata: Record<string, string>
  }
  interface FilesystemStore {
    putObject(object: ObjectToStore): Promise<{ size: number; md5: string }>
    putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5?: string): Promise<void>
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
