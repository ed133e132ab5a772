// The files a person hands the page to upload, each with the name it takes in the album: a file
// picked or dropped on its own keeps its name; a file from a folder (dropped, or chosen with the
// folder picker) is named by its path from that folder, plain names joined by "/" as
// coffer-photos names files from subfolders (docs/client-format.md). From a folder only photos
// and videos are taken, by their type or their name's extension (the client library's
// media-types.ts, what coffer-photos backs up), and hidden files and folders (".name") are
// skipped, as coffer-photos does. A folder is read as the upload goes (an async generator), a
// folder's listing at a time: a folder of any size is not listed whole before the first file
// is queued. Decision 0058.
import { BACKED_UP_TYPES, mediaTypeOfName } from '#photos/media-types.ts'

/** A file to upload and its name in the album. */
export interface Picked {
  readonly file: File
  readonly name: string
}

/** The FileSystemEntry of a drop, as far as this file reads it (fakes in the unit test). */
export interface EntryLike {
  readonly name: string
  readonly isFile: boolean
  readonly isDirectory: boolean
  file?(success: (file: File) => void, failure?: (error: unknown) => void): void
  createReader?(): { readEntries(success: (entries: EntryLike[]) => void, failure?: (error: unknown) => void): void }
}

/** Folders deeper than this below the one dropped are not entered (a guard, not a limit anyone meets). */
export const MAX_DEPTH = 32

const isHidden = (name: string): boolean => name.startsWith('.')

/** A photo or video by its type or, when the browser gives none or a vague one, by its name (what coffer-photos backs up). */
export const isMedia = (file: { readonly name: string; readonly type: string }): boolean =>
  BACKED_UP_TYPES.test(file.type) || BACKED_UP_TYPES.test(mediaTypeOfName(file.name))

/** The media type a file is sent with: the browser's, else the one its name says (a camera RAW file has none in a browser). */
export const typeOf = (file: { readonly name: string; readonly type: string }): string => (file.type !== '' ? file.type : mediaTypeOfName(file.name))

/** Files picked one by one (the "Add photos" picker, or a drop of files alone): each under its own name. */
export function* pickedFiles(files: Iterable<File>): Generator<Picked> {
  for (const file of files) yield { file, name: file.name }
}

/**
 * The files of the folder picker (`webkitdirectory`): each named by its path from the picked
 * folder (webkitRelativePath without its first name); hidden ones, those in hidden folders and
 * those that are not photos or videos left out.
 */
export function* pickedFolder(files: Iterable<File & { readonly webkitRelativePath?: string }>): Generator<Picked> {
  // The browser lists them in no set order: sorted by path, as coffer-photos walks (the list of File handles is in memory already).
  const pathOf = (file: File & { readonly webkitRelativePath?: string }) => ((file.webkitRelativePath ?? '') === '' ? file.name : file.webkitRelativePath!)
  const sorted = [...files].sort((a, b) => (pathOf(a) < pathOf(b) ? -1 : pathOf(a) > pathOf(b) ? 1 : 0))
  for (const file of sorted) {
    const names = pathOf(file).split('/')
    const inside = names.length > 1 ? names.slice(1) : names
    if (inside.some(isHidden) || !isMedia(file)) continue
    yield { file, name: inside.join('/') }
  }
}

const fileOf = (entry: EntryLike): Promise<File> => new Promise((resolve, reject) => entry.file!(resolve, reject))

/** A folder's entries, every batch the reader gives (Chromium gives 100 at a time), sorted by name as coffer-photos walks. */
async function listing(entry: EntryLike): Promise<EntryLike[]> {
  const reader = entry.createReader!()
  const all: EntryLike[] = []
  for (;;) {
    const batch = await new Promise<EntryLike[]>((resolve, reject) => reader.readEntries(resolve, reject))
    if (batch.length === 0) break
    all.push(...batch)
  }
  return all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

async function* walkFolder(entry: EntryLike, prefix: string, depth: number): AsyncGenerator<Picked> {
  if (depth > MAX_DEPTH) return
  let entries: EntryLike[]
  try {
    entries = await listing(entry)
  } catch {
    return // a folder the browser cannot list: the rest is still taken
  }
  for (const child of entries) {
    if (isHidden(child.name)) continue
    const name = prefix === '' ? child.name : `${prefix}/${child.name}`
    if (child.isDirectory) yield* walkFolder(child, name, depth + 1)
    else if (child.isFile) {
      const file = await fileOf(child).catch(() => null)
      if (file !== null && isMedia({ name: child.name, type: file.type })) yield { file, name }
    }
  }
}

/**
 * What was dropped: each file under its name, each folder walked (its files named from inside
 * it: a dropped "Trip" holding "sub/x.jpg" gives "sub/x.jpg"). `loose` are the files of a drop
 * whose items gave no entry (the page's DataTransfer.files): taken as they are.
 */
export async function* droppedItems(entries: readonly EntryLike[], loose: readonly File[] = []): AsyncGenerator<Picked> {
  for (const entry of entries) {
    if (entry.isDirectory) yield* walkFolder(entry, '', 1)
    else if (entry.isFile) {
      const file = await fileOf(entry).catch(() => null)
      if (file !== null) yield { file, name: entry.name }
    }
  }
  yield* pickedFiles(loose)
}

/**
 * Reads a drop while its event lasts (entries can only be taken then): the entries of its items,
 * and the files of those without one. What they hold is read later, by droppedItems.
 */
/** What dropOf reads of a drop's DataTransfer (this file is also type-checked without the DOM's types, for its unit test). */
interface TransferLike {
  readonly items: Iterable<{ readonly kind: string; webkitGetAsEntry?(): unknown; getAsFile(): File | null }>
}

export function dropOf(transfer: TransferLike): { readonly entries: EntryLike[]; readonly loose: File[] } {
  const entries: EntryLike[] = []
  const loose: File[] = []
  for (const item of transfer.items) {
    if (item.kind !== 'file') continue
    const entry = item.webkitGetAsEntry?.() ?? null
    if (entry !== null) entries.push(entry as unknown as EntryLike)
    else {
      const file = item.getAsFile()
      if (file !== null) loose.push(file)
    }
  }
  return { entries, loose }
}

/** Whether a drop holds anything: for the page to say so before it asks where to put it. */
export const dropIsEmpty = (drop: { readonly entries: readonly EntryLike[]; readonly loose: readonly File[] }): boolean =>
  drop.entries.length === 0 && drop.loose.length === 0
