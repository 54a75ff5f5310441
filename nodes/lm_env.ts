/**
 * The Python environment of the LM trainer (`lm/`): a venv created from the
 * hash-pinned `lm/requirements.txt` by `deno task setup:lm`, checked before
 * anything runs in it.
 *
 * The venv lives in `.envsmith/lm-venv` (or `$ENVSMITH_LM_VENV`). A stamp
 * file in it records the sha256 of the requirements it was built from, so a
 * changed requirements file is an incomplete environment, not a silent
 * mismatch.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import { UserError } from "@envsmith/engine";

/**
 * The pinned requirements. (Named as a file, not the `lm/` folder: a node
 * kind importing this module has the file in its code digest, never the
 * folder's `__pycache__`.)
 */
export const LM_REQUIREMENTS: string = resolve(
  new URL("../lm/requirements.txt", import.meta.url).pathname,
);
/** The folder of the Python trainer (`lm/`). */
export const LM_DIR: string = dirname(LM_REQUIREMENTS);
/** The command that creates the environment. */
export const SETUP_LM_COMMAND = "deno task setup:lm";
const _STAMP = "envsmith-requirements.sha256";

/** Where the venv is: `$ENVSMITH_LM_VENV`, else `.envsmith/lm-venv`. */
export function lmVenvDir(
  env: (k: string) => string | undefined = Deno.env.get,
): string {
  return resolve(env("ENVSMITH_LM_VENV") ?? ".envsmith/lm-venv");
}

/** sha256 of the requirements file. */
export function requirementsDigest(path = LM_REQUIREMENTS): string {
  return createHash("sha256").update(Deno.readFileSync(path)).digest("hex");
}

/**
 * The venv's python, or a {@linkcode UserError} naming the command that
 * creates (or completes) the environment.
 */
export function lmPython(venv = lmVenvDir()): string {
  const python = join(venv, "bin", "python");
  try {
    Deno.statSync(python);
  } catch {
    throw new UserError(
      `The LM trainer's Python environment ${venv} is missing; create it with \`${SETUP_LM_COMMAND}\`.`,
    );
  }
  let stamp = "";
  try {
    stamp = Deno.readTextFileSync(join(venv, _STAMP)).trim();
  } catch {
    // no stamp: an interrupted setup
  }
  if (stamp !== requirementsDigest()) {
    throw new UserError(
      `The LM trainer's Python environment ${venv} is incomplete or was built from other requirements than lm/requirements.txt; run \`${SETUP_LM_COMMAND}\` again.`,
    );
  }
  return python;
}

/** Create (or complete) the venv from the pinned requirements; returns its python. */
export async function setupLmEnv(
  venv = lmVenvDir(),
  log: (line: string) => void = console.error,
): Promise<string> {
  const run = async (cmd: string, args: string[]) => {
    log(`$ ${cmd} ${args.join(" ")}`);
    const st = await new Deno.Command(cmd, {
      args,
      stdout: "inherit",
      stderr: "inherit",
    })
      .spawn().status;
    if (!st.success) {
      throw new UserError(
        `\`${cmd} ${
          args.join(" ")
        }\` failed (exit ${st.code}); see its output above (is python3 with venv and pip on PATH, and the package index reachable?)`,
      );
    }
  };
  const python = join(venv, "bin", "python");
  try {
    Deno.statSync(python);
  } catch {
    await run("python3", ["-m", "venv", venv]);
  }
  await run(python, [
    "-m",
    "pip",
    "install",
    "--require-hashes",
    "--no-deps",
    "-r",
    LM_REQUIREMENTS,
  ]);
  Deno.writeTextFileSync(join(venv, _STAMP), requirementsDigest() + "\n");
  log(`LM environment ready: ${venv}`);
  return python;
}

if (import.meta.main) {
  try {
    await setupLmEnv();
  } catch (e) {
    if (e instanceof UserError) {
      console.error(e.message);
      Deno.exit(2);
    }
    throw e;
  }
}
