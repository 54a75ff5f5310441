/**
 * Tables (`@envsmith/engine/tables`): result tables as queries over the cache, paired comparisons and their statistics.
 *
 * @module
 */
export {
  aggregatesOf,
  buildTable,
  type Cell,
  formatCell,
  type Lookup,
  type Sample,
  type Table,
  tableCsv,
  tableMarkdown,
  type TableMarkdownOptions,
  tableNotes,
} from "./tables.ts";
export {
  type ComparisonMemo,
  comparisonMemoKey,
  DirComparisonMemo,
  importMemoFile,
  memoFileOf,
  memoizedCompareRows,
  readMemoFile,
  statisticsCodeDigest,
  writeMemoFile,
} from "./comparison_memo.ts";
export {
  overridesDigest,
  overridesText,
  type Trial,
  trialName,
  trialOf,
  trialTitle,
} from "./trial.ts";
export {
  type CellInterval,
  type CompareCell,
  type CompareFamily,
  type Comparison,
  comparisonCaption,
  comparisonCsv,
  comparisonMarkdown,
  comparisonSummary,
  DEFAULT_RESAMPLES,
  type EquivalenceResult,
  formatDifference,
  formatEquivalence,
  formatPValues,
  improvementCsv,
  type ImprovementResult,
  MIN_RESAMPLES,
  PROFILE_TAUS,
} from "./table_compare.ts";
export {
  type CompareOptions,
  comparePaired,
  holm,
  minSignFlipP,
  type Pair,
  type PairedComparison,
  signFlipOneSided,
  signFlipP,
} from "./paired_stats.ts";
export {
  crossedBootstrapVariance,
  type CrossedData,
  type CrossedGroup,
  crossedResamples,
  prepareGroup,
} from "./crossed_bootstrap.ts";
export {
  acceleration,
  bcaInterval,
  bootstrapP,
  percentileInterval,
  tostFromResamples,
} from "./bootstrap_interval.ts";
export {
  interquartileMean,
  performanceProfile,
  probabilityOfImprovement,
} from "./rliable_aggregates.ts";
export {
  type IntervalMethod,
  type ProfileResult,
  resampleTable,
  type ResamplingInput,
  type ResamplingResult,
} from "./table_resampling.ts";
export { normalCdf, normalQuantile } from "./normal_distribution.ts";
export {
  chainEnds,
  experimentWarningLines,
  formatWarning,
  type GroupedWarning,
  resultWarnings,
} from "./result_warnings.ts";
