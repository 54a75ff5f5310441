// Shared helpers of the generate/render/solve/import subcommands (private to cli/).
import { UserError } from "@envsmith/engine/errors";
import {
  type Instance,
  InstanceError,
  parseInstanceLines,
} from "../mapf/instance.ts";
import type { CliIo } from "./_io.ts";

/** Output, error and input streams of the MAPF subcommands (tests replace them). */
export interface MapfCliIo extends CliIo {
  /** The whole of standard input. */
  stdin(): Promise<string>;
}

/** Standard streams. */
export const mapfIo: MapfCliIo = {
  out: (t) => console.log(t),
  err: (t) => console.error(t),
  stdin: () => new Response(Deno.stdin.readable).text(),
};

/** Text of FILE, or of standard input when FILE is absent or `-`. */
export async function readInput(
  io: MapfCliIo,
  file: string | undefined,
): Promise<string> {
  if (file === undefined || file === "-") return await io.stdin();
  try {
    return await Deno.readTextFile(file);
  } catch (e) {
    throw new UserError(`Cannot read ${file}: ${(e as Error).message}`);
  }
}

/** Instances (JSON lines) of FILE or standard input, with user-facing errors. */
export async function readInstanceInput(
  io: MapfCliIo,
  file: string | undefined,
): Promise<Instance[]> {
  const text = await readInput(io, file);
  let instances: Instance[];
  try {
    instances = parseInstanceLines(text);
  } catch (e) {
    if (e instanceof InstanceError) {
      throw new UserError(`${file ?? "stdin"}: ${e.message}`);
    }
    throw e;
  }
  if (instances.length === 0) {
    throw new UserError(
      `${
        file ?? "stdin"
      }: no instances (expected one JSON instance per line, as written by \`generate\`)`,
    );
  }
  return instances;
}

/** Write text to a file, with a user-facing error. */
export async function writeOutput(path: string, text: string): Promise<void> {
  try {
    await Deno.writeTextFile(path, text);
  } catch (e) {
    throw new UserError(`Cannot write ${path}: ${(e as Error).message}`);
  }
}
