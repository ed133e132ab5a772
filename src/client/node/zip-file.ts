// A zip archive on disk as a RandomAccessSource (../zip-reader.ts): positioned reads on one
// FileHandle, so coffer-photos reads a Takeout archive where it lies (no unpacking, no whole-file
// read). Reads at their own positions, so several entries may stream at once.
import { open, type FileHandle } from 'node:fs/promises'
import type { RandomAccessSource } from '../zip-reader.ts'

export interface ZipFileSource extends RandomAccessSource, AsyncDisposable {
  close(): Promise<void>
}

/** Opens `file` for reading: its size as it is now; a read past what the file then holds comes back short (the reader refuses it as `truncated`). */
export async function openZipFile(file: string): Promise<ZipFileSource> {
  const handle: FileHandle = await open(file, 'r')
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw new Error(`${file}: not a regular file`)
    const close = () => handle.close()
    return {
      size: info.size,
      async read(offset, length) {
        const bytes = new Uint8Array(length)
        let filled = 0
        while (filled < length) {
          const { bytesRead } = await handle.read(bytes, filled, length - filled, offset + filled)
          if (bytesRead === 0) break
          filled += bytesRead
        }
        return filled === length ? bytes : bytes.subarray(0, filled)
      },
      close,
      [Symbol.asyncDispose]: close,
    }
  } catch (error) {
    await handle.close()
    throw error
  }
}
