/**
 * The `rules` engineer of the per-size form: a transparent rule that raises
 * the data ratio and the wait ratio of the sizes that fail and keeps the
 * sizes that work (what the paper found successful engineers do: act on
 * failure evidence, preserve what works).
 *
 * Per drawn size with at least `min_episodes` episodes (thresholds in
 * {@linkcode SIZE_RULE_THRESHOLDS}):
 *
 * | rule | when | does |
 * |---|---|---|
 * | `fails-more-data` | success < `fails` | data_ratio x `data_factor` (at least +0.05, at most 1) |
 * | `fails-more-waits` | it fails, and conflicts >= hole collisions or its wait-class success is below its no-wait success | wait_ratio + `wait_step` (at most 1) |
 * | `fails-more-holes` | it fails, and hole collisions outnumber conflicts | hole_ratio + `hole_step` (at most 0.6) |
 * | `waits-fail` | it does not fail overall, but its success on instances that need a wait (at least `min_episodes` of them) is below `fails` | wait_ratio + `wait_step` (at most 1) |
 * | `works-keep` | success >= `works` (and `waits-fail` did not fire) | nothing: the size's ratios are kept |
 * | `grow` | every drawn size works | the next larger size is added (data ratio the smallest drawn one, hole ratio 0.1, wait ratio 0.5); at 10x10 already, `all-more-waits`: every wait ratio + `wait_step` / 2 |
 *
 * With context `failures` (counts, no success rates) the size with the most
 * failures counts as failing (`most-failures`); with `behavior` or `none`
 * there is no per-size evidence and the form is kept (`no-evidence`).
 * Agents, hole mode and horizon are never changed.
 *
 * @module
 */
import * as v from "valibot";
import {
  SIZE_FORM_BOUNDS,
  SIZE_KEYS,
  type SizeForm,
  type SizeKey,
  type SizeRatios,
} from "../schemas/size_form.ts";
import type { EngineerEvent } from "./engineer.ts";
import type { SizeLine } from "./size_context.ts";
import type { SizeEngineerKind, SizeProposal } from "./size_engineer.ts";

/** The thresholds and steps of the rules. */
export const SIZE_RULE_THRESHOLDS = {
  /** A size with success below this fails. */
  fails: 0.6,
  /** A size with success at or above this works. */
  works: 0.9,
  /** Episodes a size needs before its success counts. */
  min_episodes: 4,
  /** Factor of a failing size's data ratio. */
  data_factor: 1.5,
  /** Step of a failing size's wait ratio. */
  wait_step: 0.2,
  /** Step of a failing size's hole ratio. */
  hole_step: 0.05,
} as const;

function _r(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** The rules' proposal for a context (pure; exported for tests). */
// Long by design: the rules as one list in the order they apply (no data, failing, waiting, working lines), so a reader checks them top to bottom.
export function sizeRules(
  form: SizeForm,
  lines: readonly SizeLine[] | undefined,
  hasSuccess: boolean,
): Omit<SizeProposal, "reads"> {
  const T = SIZE_RULE_THRESHOLDS;
  const events: EngineerEvent[] = [];
  const sizes = { ...form.sizes } as Record<SizeKey, SizeRatios>;
  const fire = (rule: string, detail: string) =>
    events.push({ type: "rule", detail: `${rule}: ${detail}` });
  const drawn = (lines ?? []).filter((l) =>
    form.sizes[l.size].data_ratio > 0 && l.episodes >= T.min_episodes
  );
  if (!lines || drawn.length === 0) {
    fire("no-evidence", "no per-size results to act on; the form is kept");
    return {
      form,
      rationale: "rules: no per-size evidence; the form is kept.",
      events,
    };
  }
  let failing: SizeLine[];
  if (hasSuccess) {
    failing = drawn.filter((l) => (l.success_rate ?? 1) < T.fails);
  } else {
    const fails = (l: SizeLine) =>
      l.failures.conflicts + l.failures.hole_collisions + l.failures.timeouts +
      l.failures.parse_errors;
    const worst = [...drawn].sort((a, b) => fails(b) - fails(a))[0]!;
    failing = fails(worst) > 0 ? [worst] : [];
    if (failing.length > 0) {
      fire("most-failures", `${worst.size} has ${fails(worst)} failures`);
    }
  }
  for (const l of failing) {
    const r = sizes[l.size];
    const data = _r(
      Math.min(1, Math.max(r.data_ratio * T.data_factor, r.data_ratio + 0.05)),
    );
    fire(
      "fails-more-data",
      `${l.size} success ${
        l.success_rate ?? "n/a"
      } < ${T.fails}: data_ratio ${r.data_ratio} -> ${data}`,
    );
    let wait = r.wait_ratio, holes = r.hole_ratio;
    const f = l.failures;
    const waitWeak = l.success_wait !== null && l.success_free !== null &&
      l.success_wait < l.success_free;
    if (f.conflicts >= f.hole_collisions || waitWeak) {
      wait = _r(Math.min(1, r.wait_ratio + T.wait_step));
      fire(
        "fails-more-waits",
        `${l.size} conflicts ${f.conflicts}, hole collisions ${f.hole_collisions}, success needing a wait ${
          l.success_wait ?? "n/a"
        } vs none ${
          l.success_free ?? "n/a"
        }: wait_ratio ${r.wait_ratio} -> ${wait}`,
      );
    } else {
      holes = _r(
        Math.min(SIZE_FORM_BOUNDS.hole_ratio.max, r.hole_ratio + T.hole_step),
      );
      fire(
        "fails-more-holes",
        `${l.size} hole collisions ${f.hole_collisions} > conflicts ${f.conflicts}: hole_ratio ${r.hole_ratio} -> ${holes}`,
      );
    }
    sizes[l.size] = { data_ratio: data, hole_ratio: holes, wait_ratio: wait };
  }
  const waitFailing = hasSuccess
    ? drawn.filter((l) =>
      !failing.includes(l) && l.success_wait !== null &&
      l.episodes_wait >= T.min_episodes && l.success_wait < T.fails
    )
    : [];
  for (const l of waitFailing) {
    const r = sizes[l.size];
    const wait = _r(Math.min(1, r.wait_ratio + T.wait_step));
    fire(
      "waits-fail",
      `${l.size} success ${l.success_rate}, but ${l.success_wait} on the ${l.episodes_wait} instances that need a wait (< ${T.fails}): wait_ratio ${r.wait_ratio} -> ${wait}`,
    );
    sizes[l.size] = { ...r, wait_ratio: wait };
  }
  const working = hasSuccess
    ? drawn.filter((l) =>
      (l.success_rate ?? 0) >= T.works && !waitFailing.includes(l)
    )
    : [];
  for (const l of working) {
    fire(
      "works-keep",
      `${l.size} success ${l.success_rate} >= ${T.works}: kept`,
    );
  }
  if (hasSuccess && working.length === drawn.length) {
    const largest = Math.max(...drawn.map((l) => SIZE_KEYS.indexOf(l.size)));
    const next = SIZE_KEYS.slice(largest + 1).find((k) =>
      form.sizes[k].data_ratio === 0
    );
    if (next) {
      const data = Math.min(...drawn.map((l) => form.sizes[l.size].data_ratio));
      sizes[next] = { data_ratio: data, hole_ratio: 0.1, wait_ratio: 0.5 };
      fire(
        "grow",
        `every drawn size works: ${next} added (data_ratio ${data}, hole_ratio 0.1, wait_ratio 0.5)`,
      );
    } else {
      for (const l of drawn) {
        const r = sizes[l.size];
        sizes[l.size] = {
          ...r,
          wait_ratio: _r(Math.min(1, r.wait_ratio + T.wait_step / 2)),
        };
      }
      fire(
        "all-more-waits",
        `every drawn size works and none is left to add: every wait ratio + ${
          T.wait_step / 2
        }`,
      );
    }
  }
  const changed = failing.length > 0 || waitFailing.length > 0 ||
    (hasSuccess && working.length === drawn.length);
  return {
    form: { ...form, sizes },
    rationale: `rules: ${
      changed
        ? events.map((e) => e.detail).join("; ")
        : `no size fails and not all work (${
          drawn.map((l) => `${l.size} success ${l.success_rate}`).join(", ")
        }); the form is kept`
    }.`,
    events,
  };
}

/** The `rules` form engineer kind (no parameters). */
export const sizeEngineer: SizeEngineerKind<Record<string, never>> = {
  name: "rules",
  description:
    "raises the data and wait ratios of map sizes that fail, keeps sizes that work, adds the next size when all work",
  params: v.strictObject({}),
  module: import.meta.url,
  create: () => ({
    name: "rules",
    propose(input) {
      const ctx = input.context.json;
      const hasSuccess = ctx.type === "stats" || ctx.type === "full";
      const out = sizeRules(input.form, ctx.sizes, hasSuccess);
      return Promise.resolve({
        ...out,
        reads: ctx.sizes
          ? [
            hasSuccess ? "sizes[].success_rate" : "sizes[].failures",
            "sizes[].failures",
          ]
          : [],
      });
    },
  }),
};
