// The Photos screen's upload (decision 0058): the album is chosen first, an album of the account
// or a new one named here, then the photos or a folder (or, for files dropped on the screen, they
// go at once). The page then opens that album, whose uploads take the files (lib/upload-handoff.ts)
// and show their progress. Below the albums, a Google Takeout export goes to its own screen
// (#/import, TakeoutImport.tsx): its photos go into the albums the export names.
import { useState } from 'react'
import type { Library } from '#photos/albums.ts'
import { linkTo, navigate } from '../../app/router.ts'
import { Modal } from '../../app/ui.tsx'
import type { Picked } from '../../lib/picked.ts'
import { handOver } from '../../lib/upload-handoff.ts'
import { AlbumChooser, type ChosenAlbum } from './AlbumChooser.tsx'
import { Pickers } from './Pickers.tsx'

type Files = Iterable<Picked> | AsyncIterable<Picked>

/** `dropped`: the files of a drop on the Photos screen, sent to the album once it is chosen; null for the Upload button (the pickers come next). */
export function UploadChooser({ library, dropped, onCancel }: { library: Library; dropped: Files | null; onCancel: () => void }) {
  const [chosen, setChosen] = useState<ChosenAlbum | null>(null)

  const send = (albumId: string, files: Files) => {
    handOver(albumId, files)
    navigate('albums', albumId)
  }

  if (chosen !== null)
    return (
      <Modal title={`Add to ${chosen.name}`} onCancel={onCancel}>
        <p>Choose photos, or a folder: every photo and video in it and in its folders goes to {chosen.name}, named by its path in the folder.</p>
        <div className="actions">
          <Pickers onPicked={(files) => send(chosen.albumId, files)} photosLabel="Choose photos" folderLabel="Choose a folder" />
          <button type="button" className="link" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </Modal>
    )

  return (
    <AlbumChooser
      library={library}
      title={dropped === null ? 'Upload to which album?' : 'Upload the dropped files to which album?'}
      submitLabel={dropped === null ? 'Continue' : 'Upload'}
      busyLabel="Opening it…"
      footer={
        dropped === null && (
          <p className="chooser-footer">
            Moving from Google Photos? <a href={linkTo('import')}>Import from Google Takeout</a>: your photos with their dates, places and albums.
          </p>
        )
      }
      onChosen={(album) => (dropped !== null ? send(album.albumId, dropped) : setChosen(album))}
      onCancel={onCancel}
    />
  )
}
