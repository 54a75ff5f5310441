/**
 * What the program node kinds share: the `family:` parameter (how to run
 * the program), its check and key at plan (the program's files enter the
 * key by content), a client per node, and the instances blob.
 *
 * @module
 */
import * as v from "valibot";
import {
  type BlobRef,
  checkProgramCommand,
  type FingerprintInfo,
  InputFileError,
  type Json,
  type NodeContext,
  ProgramCommandError,
} from "@envsmith/engine/kind";
import { UserError } from "@envsmith/engine/errors";
import {
  ProgramClient,
  type ProgramInstance,
  type ProgramSpec,
  ProgramSpecSchema,
} from "../families/program/protocol.ts";

/** The `family:` parameter of every program node. */
export const FamilyParam: v.GenericSchema<unknown, ProgramSpec> =
  ProgramSpecSchema;

/** The one line of docs of the `family:` parameter. */
export const FAMILY_DOC =
  "the family program: { command: [python3, lake.py], timeout: 300, inputs: [], env: [] } (docs/environments.md)";

/**
 * Checks the family's command at plan and returns its files' digests: the
 * program file's content enters the key.
 *
 * @throws {UserError} naming the fix for a missing program or script.
 */
export function familyFingerprint(
  params: unknown,
  info: FingerprintInfo,
): Json {
  const fam = (params as { family?: unknown } | null)?.family;
  if (fam === null || typeof fam !== "object" || Array.isArray(fam)) {
    throw new UserError(
      "a program node needs family: { command: [PROGRAM, ARGS...] }, e.g. family: { command: [python3, lake.py] }",
    );
  }
  const f = fam as { command?: unknown; inputs?: unknown };
  try {
    return {
      family: checkProgramCommand(f.command, f.inputs, info.baseDir, {
        label: "family",
        inputBytes: info.inputBytes,
      }),
    };
  } catch (e) {
    if (e instanceof ProgramCommandError) throw e;
    if (e instanceof InputFileError) {
      throw new UserError(`family: ${e.message}`);
    }
    throw e;
  }
}

/** A protocol client for this node (stderr to the node log, stopped with the run). */
export function familyClient(
  spec: ProgramSpec,
  ctx: NodeContext,
): ProgramClient {
  return new ProgramClient(spec, {
    baseDir: ctx.baseDir,
    log: (l) => ctx.log(l),
    signal: ctx.signal,
  });
}

/** What a `program.generate` node's value is. */
export interface ProgramInstances {
  /** The family's name (from describe). */
  readonly family: string;
  /** The suite label of these instances (for per-suite tables). */
  readonly suite: string;
  /** How many. */
  readonly count: number;
  /** The instances, a JSON blob (a list). */
  readonly instances: BlobRef;
}

const _Instances = v.looseObject({
  family: v.string(),
  suite: v.string(),
  count: v.number(),
  instances: v.looseObject({
    $blob: v.string(),
    size: v.number(),
    media: v.string(),
  }),
});

/** Reads the instances of one or more `program.generate` values, each with its suite. */
export async function readProgramInstances(
  envs: unknown,
  ctx: NodeContext,
): Promise<{ instance: ProgramInstance; suite: string }[]> {
  const out: { instance: ProgramInstance; suite: string }[] = [];
  for (const e of Array.isArray(envs) ? envs : [envs]) {
    const r = v.safeParse(_Instances, e);
    if (!r.success) {
      throw new UserError(
        "envs must be the value of a program.generate node (or a list of them)",
      );
    }
    const bytes = await ctx.readBlob(r.output.instances as BlobRef);
    const list = JSON.parse(
      new TextDecoder().decode(bytes),
    ) as ProgramInstance[];
    for (const instance of list) out.push({ instance, suite: r.output.suite });
  }
  return out;
}
