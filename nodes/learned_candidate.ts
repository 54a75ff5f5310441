/**
 * The `learned.candidate` node kind: the i-th candidate change of a
 * configuration (a hindsight branch trains on it).
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import { learnedFamily, userErrors } from "./_learned_io.ts";
import { parseEnvConfig } from "../schemas/env_config.ts";
import { candidateChanges } from "../engineer/learned_features.ts";

/** The `learned.candidate` kind: the index-th candidate change of a config. */
export const candidate: NodeKind<{ config: unknown; index: number }, Json> = {
  name: "learned.candidate",
  description:
    "The index-th candidate change of a configuration (0 keep, then one step of one dimension up/down); past the last: keep",
  params: v.strictObject({
    config: v.pipe(v.unknown(), v.description("the current configuration")),
    index: v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.description("which candidate (0 = keep)"),
    ),
  }),
  paramDocs: {
    config: "the current configuration whose candidate changes are listed",
    index:
      "which candidate: 0 keep, then one step of one dimension up/down; past the last: keep",
  },
  module: import.meta.url,
  async run(p, ctx) {
    await Promise.resolve();
    const cs = userErrors(() =>
      candidateChanges(learnedFamily, parseEnvConfig(p.config))
    );
    const c = cs[p.index] ?? cs[0]!;
    ctx.log(`candidate ${p.index}: ${c.label} (of ${cs.length})`);
    return ({
      value: c.config as unknown as Json,
      report: { label: c.label, candidates: cs.length },
    });
  },
};
