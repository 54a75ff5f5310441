// Shared helpers of the diagnose/redesign subcommands (private to cli/).
import { parse as parseYaml } from "yaml";
import { UserError } from "@envsmith/engine/errors";
import { SUITE_SPLITS, type SuiteSplit } from "../mapf/generator.ts";
import { cacheDir } from "@envsmith/engine/cache";
import {
  type AnyEnvConfig,
  EnvConfigError,
  parseEnvConfig,
  PRESET_NAMES,
} from "../schemas/env_config.ts";

/** Where a subcommand writes, and what it reads from its surroundings. */
export interface CliIo {
  /** Standard output (one call per line or block). */
  out(text: string): void;
  /** Standard error. */
  err(text: string): void;
  /**
   * The cache directory (its `aux/KIND/llm` folders hold the LLM reply
   * caches).
   * @default the global `--cache` option, else `$ENVSMITH_CACHE`, else `.envsmith/cache`
   */
  readonly cache?: string;
  /**
   * Reads environment variables (e.g. `ENVSMITH_LLM_GGUF`).
   * @default Deno.env.get
   */
  readonly env?: (name: string) => string | undefined;
}

/**
 * The cache directory of a subcommand's invocation: `io.cache`, else the
 * program's global `--cache`, else `$ENVSMITH_CACHE`, else the default, so
 * `--cache DIR` governs every cache the command writes.
 */
export function cacheOf(
  io: CliIo,
  cmd: { optsWithGlobals(): unknown },
): string {
  return io.cache ??
    cacheDir((cmd.optsWithGlobals() as { cache?: string }).cache);
}

/** The current-config flags (`--preset`, `--config`) {@linkcode configFromFlags} reads. */
export interface ConfigFlags {
  readonly preset?: string | undefined;
  readonly config?: string | undefined;
}

/** The LLM endpoint flags the commands share, as commander parses them. */
export interface LlmFlags {
  readonly gguf?: string | undefined;
  readonly baseUrl?: string | undefined;
  readonly model?: string | undefined;
  readonly apiKeyEnv?: string | undefined;
  readonly threads?: number | undefined;
  readonly temperature?: number | undefined;
  readonly offline?: true | undefined;
}

/** stdout/stderr. */
export const defaultIo: CliIo = {
  out: (t) => console.log(t),
  err: (t) => console.error(t),
};

/** Read a JSON or YAML file, with a user-facing error. */
export async function readDataFile(
  path: string,
  what: string,
): Promise<unknown> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw new UserError(`Cannot read ${what} ${path}: ${(e as Error).message}`);
  }
  try {
    return path.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    throw new UserError(
      `Cannot parse ${what} ${path}: ${(e as Error).message}`,
    );
  }
}

/** The config named by `--preset` or `--config` (undefined when neither). */
export async function configFromFlags(
  flags: ConfigFlags,
): Promise<AnyEnvConfig | undefined> {
  if (flags.preset !== undefined && flags.config !== undefined) {
    throw new UserError("Give either --preset or --config, not both.");
  }
  if (flags.preset !== undefined) {
    if (!(PRESET_NAMES as readonly string[]).includes(flags.preset)) {
      throw new UserError(
        `Unknown preset "${flags.preset}"; use one of ${
          PRESET_NAMES.join(", ")
        }.`,
      );
    }
    return parseEnvConfig({ preset: flags.preset });
  }
  if (flags.config !== undefined) {
    const raw = await readDataFile(flags.config, "config file");
    try {
      return parseEnvConfig(raw);
    } catch (e) {
      if (e instanceof EnvConfigError) {
        throw new UserError(`${flags.config}: ${e.message}`);
      }
      throw e;
    }
  }
  return undefined;
}

/** Parse an integer flag. */
export function intFlag(name: string, min: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) {
      throw new UserError(`${name} must be an integer >= ${min}, got "${v}"`);
    }
    return n;
  };
}

/** Parse `--split validation|test` (a benchmark suite's split). */
export function splitFlag(v: string): SuiteSplit {
  if ((SUITE_SPLITS as readonly string[]).includes(v)) return v as SuiteSplit;
  throw new UserError(
    `--split must be validation or validation-2 (designing, tuning) or test (reported results), got "${v}"`,
  );
}
