/**
 * The `band` engineer of the per-size form: steers each drawn size's
 * success into a band (`low..high`, default 0.3..0.8), the success-band
 * curriculum of the environment-design literature applied per size. A size
 * above the band gets harder (wait ratio + `step`, hole ratio + `step` / 4),
 * a size below it easier (the same steps down); sizes inside are kept. Data
 * ratios are kept: which sizes the stage trains on is the form's choice,
 * how hard each one is is the band's. Reads `sizes[].success_rate`
 * (contexts `stats` and `full`); with any other context the form is kept.
 *
 * @module
 */
import * as v from "valibot";
import {
  SIZE_FORM_BOUNDS,
  type SizeKey,
  type SizeRatios,
} from "../schemas/size_form.ts";
import type { EngineerEvent } from "./engineer.ts";
import type { SizeEngineerKind } from "./size_engineer.ts";

/** Parameters of the band form engineer. */
export interface SizeBandParams {
  /** Lower edge of the band. @default 0.3 */
  low?: number | undefined;
  /** Upper edge of the band. @default 0.8 */
  high?: number | undefined;
  /** Step of the wait ratio. @default 0.2 */
  step?: number | undefined;
}

function _r(x: number): number {
  return Math.round(x * 1000) / 1000;
}

const _rate = v.pipe(v.number(), v.minValue(0), v.maxValue(1));

/** The `band` form engineer kind. */
export const sizeEngineer: SizeEngineerKind<SizeBandParams> = {
  name: "band",
  description:
    "keeps each map size's success inside a band by moving its wait and hole ratios",
  params: v.pipe(
    v.strictObject({
      low: v.optional(v.pipe(_rate, v.description("lower edge (default 0.3)"))),
      high: v.optional(
        v.pipe(_rate, v.description("upper edge (default 0.8)")),
      ),
      step: v.optional(
        v.pipe(_rate, v.description("wait ratio step (default 0.2)")),
      ),
    }),
    v.check(
      (p) => (p.low ?? 0.3) < (p.high ?? 0.8),
      "band: low must be below high",
    ),
  ),
  module: import.meta.url,
  create: (params) => ({
    name: "band",
    propose(input) {
      const low = params.low ?? 0.3, high = params.high ?? 0.8;
      const step = params.step ?? 0.2;
      const ctx = input.context.json;
      const events: EngineerEvent[] = [];
      const sizes = { ...input.form.sizes } as Record<SizeKey, SizeRatios>;
      const hmax = SIZE_FORM_BOUNDS.hole_ratio.max;
      for (const l of ctx.sizes ?? []) {
        if (
          l.success_rate === null || input.form.sizes[l.size].data_ratio === 0
        ) {
          continue;
        }
        const r = sizes[l.size];
        const dir = l.success_rate > high ? 1 : l.success_rate < low ? -1 : 0;
        if (dir === 0) continue;
        sizes[l.size] = {
          data_ratio: r.data_ratio,
          wait_ratio: _r(Math.min(1, Math.max(0, r.wait_ratio + dir * step))),
          hole_ratio: _r(
            Math.min(hmax, Math.max(0, r.hole_ratio + (dir * step) / 4)),
          ),
        };
        events.push({
          type: "rule",
          detail: `${
            dir > 0 ? "above" : "below"
          }-band: ${l.size} success ${l.success_rate} ${
            dir > 0 ? `> ${high}` : `< ${low}`
          }: wait_ratio ${r.wait_ratio} -> ${
            sizes[l.size].wait_ratio
          }, hole_ratio ${r.hole_ratio} -> ${sizes[l.size].hole_ratio}`,
        });
      }
      return Promise.resolve({
        form: { ...input.form, sizes },
        rationale: `band engineer: ${
          events.length === 0
            ? `every size inside ${low}..${high} (or no per-size success); kept`
            : events.map((e) => e.detail).join("; ")
        }.`,
        events,
        reads: ctx.sizes && (ctx.type === "stats" || ctx.type === "full")
          ? ["sizes[].success_rate"]
          : [],
      });
    },
  }),
};
