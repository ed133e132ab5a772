// A QR code drawn as SVG in the page: the `qrcode` package computes the modules, React draws one
// path of unit squares. No data: URL and no canvas: the CSP's img-src refuses data: URLs.
import { create } from 'qrcode'
import { useMemo } from 'react'

/** The light margin around the symbol, in modules (the standard's quiet zone). */
const QUIET = 4

export function QrCode({ text, label }: { text: string; label: string }) {
  const { size, path } = useMemo(() => {
    const { modules } = create(text, { errorCorrectionLevel: 'M' })
    let d = ''
    for (let row = 0; row < modules.size; row++) {
      for (let col = 0; col < modules.size; col++) if (modules.get(row, col)) d += `M${col + QUIET} ${row + QUIET}h1v1h-1z`
    }
    return { size: modules.size + 2 * QUIET, path: d }
  }, [text])
  return (
    <svg className="qr" viewBox={`0 0 ${size} ${size}`} role="img" aria-label={label} shapeRendering="crispEdges">
      <rect width={size} height={size} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  )
}
