// The two ways to choose files to upload, side by side: "Add photos" (files) and "Add a folder"
// (the folder picker, webkitdirectory: every photo and video inside, named by its path from the
// folder; lib/picked.ts). Each a button that opens its hidden file input.
import { useRef } from 'react'
import { pickedFiles, pickedFolder, type Picked } from '../../lib/picked.ts'

export function Pickers({
  onPicked,
  disabled = false,
  describedBy,
  photosLabel = 'Add photos',
  folderLabel = 'Add a folder',
}: {
  onPicked: (files: Iterable<Picked>) => void
  disabled?: boolean
  describedBy?: string | undefined
  photosLabel?: string
  folderLabel?: string
}) {
  const files = useRef<HTMLInputElement>(null)
  const folder = useRef<HTMLInputElement>(null)
  const picked = (input: HTMLInputElement, read: (list: File[]) => Iterable<Picked>) => {
    const list = [...(input.files ?? [])]
    input.value = ''
    if (!disabled && list.length > 0) onPicked(read(list))
  }
  return (
    <>
      <button type="button" disabled={disabled} aria-describedby={describedBy} onClick={() => files.current?.click()}>
        {photosLabel}
      </button>
      <input
        ref={files}
        type="file"
        multiple
        accept="image/*,video/*"
        className="hidden-input"
        aria-label="Photos to add"
        tabIndex={-1}
        onChange={(e) => picked(e.target, pickedFiles)}
      />
      <button type="button" className="secondary" disabled={disabled} aria-describedby={describedBy} onClick={() => folder.current?.click()}>
        {folderLabel}
      </button>
      <input
        // The folder picker: React knows no webkitdirectory property, so it is set as an attribute.
        ref={(input) => {
          folder.current = input
          input?.setAttribute('webkitdirectory', '')
        }}
        type="file"
        multiple
        className="hidden-input"
        aria-label="Folder to add"
        tabIndex={-1}
        onChange={(e) => picked(e.target, pickedFolder)}
      />
    </>
  )
}
