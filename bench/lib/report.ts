// The results as Markdown tables (they paste straight into docs/benchmarks.md).
import { formatRate, type Measured } from './measure.ts'
import { formatTarget, noisy, ratio, verdict, type Check, type Row } from './scenario.ts'

/** A Markdown table, columns padded to their widest cell. */
export function table(header: readonly string[], lines: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)))
  const render = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`
  return [render(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(render)].join('\n')
}

export function resultsTable(rows: readonly Row[]): string {
  return table(
    ['scenario', 'subject', 'subject rate', 'ceiling', 'ceiling rate', 'ratio', 'target', 'result'],
    rows.map((r) => [
      r.scenario,
      r.subject.name,
      `${formatRate(r.subject.pooled.rate)} ${r.unit}/s`,
      r.ceiling.name,
      `${formatRate(r.ceiling.pooled.rate)} ${r.unit}/s`,
      ratio(r).toFixed(2),
      formatTarget(r.target),
      `${verdict(r)}${noisy(r) ? ' (noisy)' : ''}`,
    ]),
  )
}

export function detailsTable(measured: readonly Measured[]): string {
  return table(
    ['contender', 'rounds (/s)', 'pooled (/s)', 'p50 ms', 'p99 ms', 'subject CPU (cores)', 'load generator CPU (cores)', 'rest of machine (cores)', 'problems'],
    measured.map((m) => [
      m.name,
      m.rounds.map((r) => formatRate(r.rate)).join(', '),
      formatRate(m.pooled.rate),
      m.pooled.p50Ms.toFixed(2),
      m.pooled.p99Ms.toFixed(2),
      m.pooled.subjectCores.toFixed(2),
      m.pooled.loadgenCores.toFixed(2),
      m.pooled.otherCores.toFixed(2),
      m.pooled.problems.join('; ') || '-',
    ]),
  )
}

export function checksTable(checks: readonly Check[]): string {
  return table(
    ['scenario', 'check', 'value', 'target', 'result'],
    checks.map((c) => [c.scenario, c.name, c.value, c.target, c.pass === null ? 'info' : c.pass ? 'pass' : 'FAIL']),
  )
}
