/**
 * `./envsmith report`: one self-contained static HTML page per set of
 * experiments, built from the cache alone (never runs anything).
 *
 * Per experiment it shows its tables (the numbers of `./envsmith tables`,
 * mean ± std; missing cells and skipped variants marked), the learning
 * curves of every stage group (training success against cumulative samples,
 * one line per variant, stage boundaries marked), each engineer's
 * configuration trajectory (config ids, changed dimensions, rationale), and
 * a few failure cases drawn as SVG (from the last stage's diagnosis and from
 * the evaluation trajectories). Nodes the cache lacks are listed with the
 * command that computes them.
 *
 * @example
 * Not run: `ctx` is a run's context with a filled cache; report_test.ts builds reports.
 * ```ts ignore
 * import { buildReport } from "./build.ts";
 * const { html } = await buildReport(ctx, ["experiments/quick.yaml"]);
 * Deno.writeTextFileSync("report.html", html);
 * ```
 *
 * @module
 */
import type { CommandContext } from "@envsmith/engine/cli";
import { collectExperiment, type ExperimentReport } from "./data.ts";
import { renderReportHtml } from "./html.ts";

/** Default output file of `./envsmith report` (relative to the working directory). */
export const DEFAULT_REPORT_FILE = ".envsmith/report/index.html";

/** Options of {@linkcode buildReport}. */
export interface ReportOptions {
  /** Failure cases per variant and source (training, evaluation). @default 2 */
  readonly cases?: number;
  /** Page title. @default "envsmith report" */
  readonly title?: string;
  /** Strings never to show (replaced by `[redacted]`). @default none */
  readonly redact?: readonly string[];
}

/** A built report. */
export interface Report {
  /** The page. */
  readonly html: string;
  /** What it shows, per experiment. */
  readonly experiments: readonly ExperimentReport[];
}

/** Builds the report of `files` from the cache of `ctx`. */
export async function buildReport(
  ctx: CommandContext,
  files: readonly string[],
  options: ReportOptions = {},
): Promise<Report> {
  const experiments: ExperimentReport[] = [];
  for (const f of files) {
    experiments.push(
      await collectExperiment(
        ctx,
        f,
        options.cases === undefined ? {} : { cases: options.cases },
      ),
    );
  }
  const html = renderReportHtml(experiments, {
    ...(options.title === undefined ? {} : { title: options.title }),
    ...(options.redact === undefined ? {} : { redact: options.redact }),
  });
  return { html, experiments };
}

/**
 * Values of environment variables whose names look secret (`*KEY*`,
 * `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`, `*AUTH*`), to redact
 * from the page should any ever reach it. Empty without env permission.
 */
export function secretEnvValues(
  env: () => Record<string, string> = () => Deno.env.toObject(),
): string[] {
  let all: Record<string, string>;
  try {
    all = env();
  } catch {
    return [];
  }
  return Object.entries(all).filter(([k, v]) =>
    /KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH/i.test(k) && v.length >= 6
  ).map(([, v]) => v);
}
