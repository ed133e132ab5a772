// The Search screen's box (decision 0070): what is typed searches at once, on this device
// (lib/search-index.ts), and suggestions complete the word being typed from what the photos hold
// (a month, a place, a camera, an album, Favourites, Videos), each with how many photos it finds.
// A combobox (WAI-ARIA 1.2): ↓ and ↑ move through the suggestions, Enter takes one, Escape closes
// them; a click takes one too.
import { useState } from 'react'
import type { Suggestion, SuggestionKind } from '#photos/search.ts'
import { numberText } from '../../lib/format.ts'

/** Each kind of suggestion, in words. */
const KIND: Record<SuggestionKind, string> = {
  date: 'Date',
  place: 'Place',
  camera: 'Camera',
  album: 'Album',
  favourites: 'Favourites',
  kind: 'Type',
}

export function SearchBox({
  text,
  onText,
  suggestions,
}: {
  readonly text: string
  readonly onText: (text: string) => void
  readonly suggestions: readonly Suggestion[]
}) {
  const [open, setOpen] = useState(false)
  const [active, setActive] = useState(-1)
  const shown = open && suggestions.length > 0
  const choose = (suggestion: Suggestion) => {
    onText(suggestion.text)
    setActive(-1)
  }
  return (
    <div className="search-box">
      <label htmlFor="search-text">Search your photos</label>
      <input
        id="search-text"
        type="search"
        role="combobox"
        aria-expanded={shown}
        aria-controls="search-suggestions"
        aria-autocomplete="list"
        aria-activedescendant={shown && active >= 0 ? `search-suggestion-${active}` : undefined}
        autoComplete="off"
        spellCheck={false}
        placeholder="A name, 2019, July 2019, a place, a camera, an album, favourites, videos"
        value={text}
        onChange={(event) => {
          onText(event.target.value)
          setOpen(true)
          setActive(-1)
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onKeyDown={(event) => {
          if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
            event.preventDefault()
            setOpen(true)
            // -1 is the box itself: past either end of the list, back to it.
            const step = event.key === 'ArrowDown' ? 1 : -1
            setActive((now) => {
              const next = now + step
              return next >= suggestions.length ? -1 : next < -1 ? suggestions.length - 1 : next
            })
          } else if (event.key === 'Enter' && shown && active >= 0 && suggestions[active] !== undefined) {
            event.preventDefault()
            choose(suggestions[active])
          } else if (event.key === 'Escape' && shown) {
            event.preventDefault()
            setOpen(false)
          }
        }}
      />
      {shown && (
        <div id="search-suggestions" role="listbox" aria-label="Suggestions" className="search-suggestions">
          {suggestions.map((suggestion, i) => (
            <div
              key={`${suggestion.kind}:${suggestion.label}`}
              id={`search-suggestion-${i}`}
              role="option"
              tabIndex={-1}
              aria-selected={i === active}
              // Kept from taking the focus: the box stays focused (and its list open) through the click.
              onMouseDown={(event) => event.preventDefault()}
              onClick={() => choose(suggestion)}
              onKeyDown={(event) => event.key === 'Enter' && choose(suggestion)}
            >
              <span className="suggestion-label">{suggestion.label}</span>
              <span className="muted">
                {KIND[suggestion.kind]} · {numberText(suggestion.count)}
              </span>
            </div>
          ))}
        </div>
      )}
    </div>
  )
}
