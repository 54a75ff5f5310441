/**
 * Tables (`@envsmith/engine/tables`): result tables as queries over the cache, paired comparisons and their statistics.
 *
 * @module
 */
export {
  buildTable,
  formatCell,
  type Lookup,
  type Table,
  tableNotes,
} from "./tables.ts";
export {
  memoFileOf,
  readMemoFile,
  statisticsCodeDigest,
} from "./comparison_memo.ts";
export {
  type CompareCell,
  comparisonCaption,
  formatDifference,
  formatPValues,
} from "./table_compare.ts";
export { crossedResamples, prepareGroup } from "./crossed_bootstrap.ts";
export { bootstrapP, percentileInterval } from "./bootstrap_interval.ts";
export { experimentWarningLines } from "./result_warnings.ts";
