/**
 * Tables (`@envsmith/engine/tables`): result tables as queries over the cache, paired comparisons and their statistics.
 *
 * @module
 */
export {
  buildTable,
  type Cell,
  formatCell,
  type Lookup,
  type Sample,
  type Table,
  tableCsv,
  tableMarkdown,
  tableNotes,
} from "./tables.ts";
export {
  type CompareCell,
  type Comparison,
  comparisonCsv,
  comparisonMarkdown,
  formatDifference,
  formatPValues,
} from "./table_compare.ts";
export {
  type CompareOptions,
  comparePaired,
  holm,
  minSignFlipP,
  type Pair,
  type PairedComparison,
  signFlipP,
} from "./paired_stats.ts";
