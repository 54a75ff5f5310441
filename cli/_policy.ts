/**
 * Shared helpers of the `train` and `evaluate` subcommands: where their
 * instances come from and how they report.
 *
 * @module
 */
import { UserError } from "@envsmith/engine/errors";
import { generate, GenerationError } from "../mapf/generator.ts";
import {
  type Instance,
  InstanceError,
  parseInstanceLines,
} from "../mapf/instance.ts";
import type { SuiteSplit } from "../mapf/generator.ts";
import { generateSuite, getSuite } from "../mapf/suites.ts";
import type { AnyEnvConfig } from "../schemas/env_config.ts";
import type { CliIo } from "./_io.ts";

/** Output of the policy subcommands: lines, plus an overwritable status line. */
export interface PolicyCliIo extends CliIo {
  /** Show a transient progress line (overwritten in place on a terminal). */
  status(line: string): void;
  /** End the status line (so later output starts on a fresh line). */
  endStatus(): void;
}

const _enc = new TextEncoder();
let _statusShown = false;

/** stdout/stderr; the status line is overwritten in place on a terminal, printed at most every 5 s otherwise. */
export const policyIo: PolicyCliIo = (() => {
  let last = 0;
  return {
    out: (t: string) => console.log(t),
    err: (t: string) => console.error(t),
    status(line: string) {
      if (Deno.stderr.isTerminal()) {
        Deno.stderr.writeSync(_enc.encode(`\r\x1b[2K${line}`));
        _statusShown = true;
      } else if (performance.now() - last > 5000) {
        last = performance.now();
        console.error(line);
      }
    },
    endStatus() {
      if (_statusShown) Deno.stderr.writeSync(_enc.encode("\n"));
      _statusShown = false;
    },
  };
})();

/** Instances of a JSON-lines file, with user-facing errors. */
export async function readInstanceFile(path: string): Promise<Instance[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw new UserError(
      `Cannot read instances ${path}: ${(e as Error).message}`,
    );
  }
  try {
    const out = parseInstanceLines(text);
    if (out.length === 0) {
      throw new UserError(
        `${path}: no instances (one JSON instance per line expected)`,
      );
    }
    return out;
  } catch (e) {
    if (e instanceof InstanceError) {
      throw new UserError(`${path}: ${e.message}`);
    }
    throw e;
  }
}

/** Instances of a suite split (suite seed space), with user-facing errors. */
export function suiteInstances(
  name: string,
  count: number | undefined,
  seed: number,
  split: SuiteSplit = "validation",
): Instance[] {
  let suite;
  try {
    suite = getSuite(name);
  } catch (e) {
    throw new UserError((e as Error).message);
  }
  if (seed > 0x7fffffff) {
    throw new UserError(`--seed must be at most 2147483647, got ${seed}`);
  }
  try {
    return generateSuite(suite.name, {
      count: count ?? suite.count,
      seed,
      split,
    }).instances;
  } catch (e) {
    if (e instanceof GenerationError) throw new UserError(e.message);
    throw e;
  }
}

/** Run the generator, turning a generation failure into a user error. */
export function generateOrExplain(
  config: AnyEnvConfig,
  options: { count: number; seed: number; suite?: string; split?: SuiteSplit },
): Instance[] {
  if (options.seed > 0x7fffffff) {
    throw new UserError(
      `--seed must be at most 2147483647, got ${options.seed}`,
    );
  }
  try {
    return generate(config, options).instances;
  } catch (e) {
    if (e instanceof GenerationError) throw new UserError(e.message);
    throw e;
  }
}

/** Parse `--hidden 64,64`. */
export function hiddenFlag(v: string): number[] {
  const out = v.split(",").map((x) => Number(x.trim()));
  if (
    out.length === 0 || out.length > 8 ||
    !out.every((n) => Number.isInteger(n) && n >= 1 && n <= 1024)
  ) {
    throw new UserError(
      `--hidden must be 1..8 comma-separated layer sizes in 1..1024, e.g. 64,64 (got "${v}")`,
    );
  }
  return out;
}

/** Parse a positive number flag. */
export function numberFlag(name: string, min: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) {
      throw new UserError(`${name} must be a number >= ${min}, got "${v}"`);
    }
    return n;
  };
}
