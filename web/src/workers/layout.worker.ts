// The grid's layout off the page's thread (lib/layout.ts): the months of a million photos in,
// the rows and sections out as typed arrays, moved back rather than copied.
import * as Comlink from 'comlink'
import { computeLayout, type Layout, type Sizes } from '../lib/layout.ts'

const api = {
  layout(months: Int32Array, sizes: Sizes, days?: Int32Array): Layout {
    const layout = computeLayout(months, sizes, days)
    return Comlink.transfer(
      layout,
      [layout.rowTop, layout.rowItem, layout.rowSection, layout.sectionRow, layout.sectionItem, layout.sectionMonth, layout.sectionDay].map(
        (array) => array.buffer,
      ),
    )
  },
}

export type LayoutWorker = typeof api

Comlink.expose(api)
