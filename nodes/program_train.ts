/**
 * The `program.train` node kind: the family program's own trainer (the
 * `train` request of the program protocol, docs/environments.md).
 *
 * ```yaml
 * policy: { kind: program.train, with: { family: *lake, policy: $prev.policy, envs: $envs, budget: 20000, seed: $seed } }
 * ```
 *
 * Parameters: `family`, `envs` (a `program.generate` value or a list),
 * `policy` (the previous `program.train` value, or null for a fresh
 * start), `budget` (environment steps the trainer may take), `seed`.
 *
 * The program gets the instances, the path of a read-only copy of the
 * previous checkpoint (or null), an empty `out_dir` to write its checkpoint
 * into, the seed and the budget; it names the file it wrote. The file
 * becomes a blob of the cache (a regular file, at most 1 GiB).
 *
 * Value: `{ family, checkpoint, metrics, budget }`, `checkpoint` a blob;
 * report: the metrics the trainer returned.
 *
 * @module
 */
import * as v from "valibot";
import { join } from "node:path";
import type { BlobRef, Json, NodeKind } from "@envsmith/engine/kind";
import { ProgramFamilyError } from "../families/program/protocol.ts";
import {
  FAMILY_DOC,
  familyFingerprint,
  FamilyParam,
} from "./_program_family.ts";
import { programInputs, ProgramPolicy } from "./_program_policy.ts";

/** Largest checkpoint file stored (1 GiB). */
export const CHECKPOINT_MAX_BYTES = 1 << 30;

const _Params = v.strictObject({
  family: FamilyParam,
  envs: v.unknown(),
  policy: v.optional(v.nullable(ProgramPolicy), null),
  budget: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1e12)),
  seed: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(0x7fffffff)),
    0,
  ),
});

/** Parameters of `program.train`. */
export type ProgramTrainParams = v.InferOutput<typeof _Params>;

/** The `program.train` kind. */
export const kind: NodeKind<ProgramTrainParams, Json> = {
  name: "program.train",
  description:
    "Train with a family program's own trainer: instances and the previous checkpoint in, a checkpoint file out (cached as a blob)",
  params: _Params as v.GenericSchema<unknown, ProgramTrainParams>,
  paramDocs: {
    family: FAMILY_DOC,
    envs: "the instances: a program.generate node (or a list of them)",
    policy:
      "the previous program.train node, or null to start fresh (default null)",
    budget: "environment steps the trainer may take",
    seed: "the trainer's seed (default 0)",
  },
  module: import.meta.url,
  heavy: true,
  fingerprint: familyFingerprint,
  async run(p, ctx) {
    const { client, description: d, items, checkpoint: previous } =
      await programInputs(p, ctx, "previous");
    const instances = items.map((x) => x.instance);
    const outDir = join(ctx.workDir, "out");
    await Deno.mkdir(outDir, { recursive: true });
    const { file, metrics } = await client.train({
      instances,
      checkpoint: previous,
      outDir,
      seed: p.seed,
      budget: p.budget,
    });
    const path = join(outDir, file);
    let st: Deno.FileInfo;
    try {
      st = await Deno.lstat(path);
    } catch {
      throw new ProgramFamilyError(
        `${client.label} (train): the reply names checkpoint ${file}, but out_dir holds no such file; write it into out_dir before replying`,
      );
    }
    if (!st.isFile || st.size > CHECKPOINT_MAX_BYTES) {
      throw new ProgramFamilyError(
        `${client.label} (train): checkpoint ${file} is ${
          st.isFile ? `${st.size} bytes (over 1 GiB)` : "not a regular file"
        }; write one regular file of at most 1 GiB`,
      );
    }
    const blob: BlobRef = await ctx.writeBlob(
      await Deno.readFile(path),
      "application/octet-stream",
    );
    ctx.log(
      `${d.name}: trained ${p.budget} steps on ${instances.length} instances; checkpoint ${file} (${st.size} bytes)`,
    );
    return {
      value: {
        family: d.name,
        checkpoint: { ...blob },
        file,
        metrics,
        budget: p.budget,
      },
      report: { metrics, requests: client.requests },
    };
  },
};
