/**
 * The Python environments of the LM trainer (`lm/`): venvs created from
 * hash-pinned requirements by `deno task setup:lm`, checked before anything
 * runs in them.
 *
 * Two of them, one per device, so a node's results follow the requirements
 * its key covers: `device: cpu` nodes run in `.envsmith/lm-venv` (or
 * `$ENVSMITH_LM_VENV`) built from `lm/requirements.txt`; `device: cuda`
 * nodes in `.envsmith/lm-venv-cuda` (or `$ENVSMITH_LM_CUDA_VENV`) built from
 * `lm/requirements-cuda.txt` (`deno task setup:lm --cuda`). A stamp file in
 * each records the sha256 of the requirements it was built from, so a
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
/**
 * The pinned requirements of `device: cuda` (torch's CUDA build and its
 * libraries). Joined, not named as a data file: the `device: cuda` nodes
 * name it in their code digest (`lm_cuda.ts`), the CPU nodes do not.
 */
export const LM_CUDA_REQUIREMENTS: string = join(
  LM_DIR,
  "requirements-cuda.txt",
);
/** The command that creates the environment. */
export const SETUP_LM_COMMAND = "deno task setup:lm";
/** The command that creates the environment of `device: cuda`. */
export const SETUP_LM_CUDA_COMMAND = "deno task setup:lm --cuda";
const _STAMP = "envsmith-requirements.sha256";

/** Where the LM nodes of a device run. */
export type LmDevice = "cpu" | "cuda";

/**
 * Where the venv of a device is: `$ENVSMITH_LM_VENV`, else
 * `.envsmith/lm-venv` (cpu); `$ENVSMITH_LM_CUDA_VENV`, else
 * `.envsmith/lm-venv-cuda` (cuda).
 */
export function lmVenvDir(
  env: (k: string) => string | undefined = (k) => Deno.env.get(k),
  device: LmDevice = "cpu",
): string {
  return device === "cuda"
    ? resolve(env("ENVSMITH_LM_CUDA_VENV") ?? ".envsmith/lm-venv-cuda")
    : resolve(env("ENVSMITH_LM_VENV") ?? ".envsmith/lm-venv");
}

/** The requirements file of a device. */
export function requirementsOf(device: LmDevice): string {
  return device === "cuda" ? LM_CUDA_REQUIREMENTS : LM_REQUIREMENTS;
}

/** The command that creates the venv of a device. */
export function setupCommandOf(device: LmDevice): string {
  return device === "cuda" ? SETUP_LM_CUDA_COMMAND : SETUP_LM_COMMAND;
}

/** sha256 of the requirements file. */
export function requirementsDigest(path = LM_REQUIREMENTS): string {
  return createHash("sha256").update(Deno.readFileSync(path)).digest("hex");
}

/** Whether the venv of a device exists and matches its requirements. */
export function lmEnvState(
  device: LmDevice = "cpu",
  venv = lmVenvDir(undefined, device),
): "missing" | "stale" | "ready" {
  try {
    Deno.statSync(join(venv, "bin", "python"));
  } catch {
    return "missing";
  }
  let stamp = "";
  try {
    stamp = Deno.readTextFileSync(join(venv, _STAMP)).trim();
  } catch {
    // no stamp: an interrupted setup
  }
  return stamp === requirementsDigest(requirementsOf(device))
    ? "ready"
    : "stale";
}

/**
 * What is wrong with the venv of a device (one line naming the command
 * that creates or completes it), or null when it is ready.
 */
export function lmEnvProblem(
  device: LmDevice = "cpu",
  venv = lmVenvDir(undefined, device),
): string | null {
  const fix = setupCommandOf(device);
  const req = `lm/${
    device === "cuda" ? "requirements-cuda.txt" : "requirements.txt"
  }`;
  switch (lmEnvState(device, venv)) {
    case "missing":
      return `The LM trainer's Python environment ${venv} is missing; create it with \`${fix}\`.`;
    case "stale":
      return `The LM trainer's Python environment ${venv} is incomplete or was built from other requirements than ${req}; run \`${fix}\` again.`;
    default:
      return null;
  }
}

/**
 * The venv's python, or a {@linkcode UserError} naming the command that
 * creates (or completes) the environment.
 */
export function lmPython(
  venv = lmVenvDir(),
  device: LmDevice = "cpu",
): string {
  const problem = lmEnvProblem(device, venv);
  if (problem !== null) throw new UserError(problem);
  return join(venv, "bin", "python");
}

/** Create (or complete) the venv of a device from its pinned requirements; returns its python. */
export async function setupLmEnv(
  venv = lmVenvDir(),
  log: (line: string) => void = console.error,
  device: LmDevice = "cpu",
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
    requirementsOf(device),
  ]);
  Deno.writeTextFileSync(
    join(venv, _STAMP),
    requirementsDigest(requirementsOf(device)) + "\n",
  );
  log(`LM environment ready: ${venv}`);
  return python;
}

if (import.meta.main) {
  try {
    const device: LmDevice = Deno.args.includes("--cuda") ? "cuda" : "cpu";
    const unknown = Deno.args.filter((a) => a !== "--cuda");
    if (unknown.length > 0) {
      throw new UserError(
        `setup:lm: unknown argument ${
          unknown[0]
        }; \`${SETUP_LM_COMMAND}\` builds the CPU environment, \`${SETUP_LM_CUDA_COMMAND}\` the CUDA one`,
      );
    }
    await setupLmEnv(lmVenvDir(undefined, device), undefined, device);
  } catch (e) {
    if (e instanceof UserError) {
      console.error(e.message);
      Deno.exit(2);
    }
    throw e;
  }
}
