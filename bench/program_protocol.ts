/**
 * Overhead of the program protocol: requests per second through
 * `callProgram` (asynchronous, what the program node kinds use) and
 * `callProgramSync` (a worker while the caller waits, what a program
 * family's synchronous hooks use), against the bare process start of the
 * same interpreter, and the example family's own requests.
 *
 * ```sh
 * deno run -A bench/program_protocol.ts [REQUESTS]
 * ```
 *
 * @module
 */
import { callProgram, callProgramSync } from "@envsmith/engine/run";

const N = Number(Deno.args[0] ?? "20");
const dir = await Deno.makeTempDir({ prefix: "envsmith-protocol-bench-" });
const echo = `${dir}/echo.py`;
await Deno.writeTextFile(
  echo,
  "import json, sys\njson.dump(json.load(sys.stdin), sys.stdout)\n",
);
const lake = new URL("../examples/python_family/lake.py", import.meta.url)
  .pathname;
const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin" };

async function rate(
  label: string,
  once: () => unknown,
  n = N,
): Promise<void> {
  await once(); // warm
  const times: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await once();
    times.push(n / ((performance.now() - t0) / 1000));
  }
  times.sort((a, b) => a - b);
  console.log(
    `| ${label} | ${times[1]!.toFixed(1)} | ${
      times.map((x) => x.toFixed(1)).join(", ")
    } |`,
  );
}

console.log("| path | requests/s (median) | repetitions |");
console.log("|---|---:|---|");
await rate("bare `python3 -c pass` start (Deno.Command)", async () => {
  await new Deno.Command("python3", {
    args: ["-c", "pass"],
    env,
    clearEnv: true,
  })
    .output();
});
await rate(
  "`callProgram`, an echo program",
  () => callProgram(["python3", echo], { envsmith: 1, request: "x" }, { env }),
);
await rate(
  "`callProgramSync`, an echo program",
  () =>
    callProgramSync(["python3", echo], { envsmith: 1, request: "x" }, { env }),
);
await rate(
  "`callProgram`, lake.py `describe`",
  () =>
    callProgram(["python3", lake], { envsmith: 1, request: "describe" }, {
      env,
    }),
);
await rate(
  "`callProgram`, lake.py `generate` of 64 7x7 lakes",
  () =>
    callProgram(["python3", lake], {
      envsmith: 1,
      request: "generate",
      config: { size: 7, holes: 0.2, slip: 0.1 },
      seed: 1,
      count: 64,
    }, { env }),
);
await Deno.remove(dir, { recursive: true });
