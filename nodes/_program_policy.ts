/**
 * A checkpoint of a family program's trainer (the value of a
 * `program.train` node) and its read-only copy for the program.
 *
 * @module
 */
import * as v from "valibot";
import { join } from "node:path";
import type { BlobRef, NodeContext } from "@envsmith/engine/kind";
import type {
  FamilyDescription,
  ProgramClient,
  ProgramInstance,
  ProgramSpec,
} from "../families/program/protocol.ts";
import { familyClient, readProgramInstances } from "./_program_family.ts";

/** The value of a `program.train` node, as its readers check it. */
export const ProgramPolicy = v.looseObject({
  family: v.string(),
  file: v.pipe(v.string(), v.regex(/^[^/\\]+$/)),
  checkpoint: v.looseObject({
    $blob: v.string(),
    size: v.number(),
    media: v.string(),
  }),
});

/** The value of a `program.train` node. */
export type ProgramPolicyValue = v.InferOutput<typeof ProgramPolicy>;

/**
 * Writes a read-only copy of the checkpoint into `ctx.workDir/<sub>/` under
 * the file name its trainer gave it and returns its path (null for null).
 */
export async function checkpointPath(
  policy: ProgramPolicyValue | null | undefined,
  ctx: NodeContext,
  sub: string,
): Promise<string | null> {
  if (policy === null || policy === undefined) return null;
  const dir = join(ctx.workDir, sub);
  await Deno.mkdir(dir, { recursive: true });
  const path = join(dir, policy.file);
  await Deno.writeFile(
    path,
    await ctx.readBlob(policy.checkpoint as BlobRef),
    { mode: 0o444 },
  );
  return path;
}

/**
 * What a node that runs a family program on instances with a checkpoint
 * starts from: the client, the family's description, the instances with
 * their suites, and the checkpoint's read-only copy under `ctx.workDir/<sub>/`.
 */
export async function programInputs(
  p: {
    readonly family: ProgramSpec;
    readonly envs: unknown;
    readonly policy?: ProgramPolicyValue | null | undefined;
  },
  ctx: NodeContext,
  sub: string,
): Promise<{
  client: ProgramClient;
  description: FamilyDescription;
  items: { instance: ProgramInstance; suite: string }[];
  checkpoint: string | null;
}> {
  const client = familyClient(p.family, ctx);
  const description = await client.describe();
  const items = await readProgramInstances(p.envs, ctx);
  const checkpoint = await checkpointPath(p.policy, ctx, sub);
  return { client, description, items, checkpoint };
}
