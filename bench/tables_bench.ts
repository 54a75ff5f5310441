/**
 * `./envsmith tables` on every shipped experiment, this tree against an older
 * commit, alternating runs so both see the same machine load; reports wall
 * time and CPU time (user + sys, from /usr/bin/time) per run and the ratios
 * of the medians.
 *
 * ```sh
 * deno run -A bench/tables_bench.ts [BASE_COMMIT] [ROUNDS]
 * ```
 *
 * The base tree is `git archive BASE_COMMIT` in a temporary directory. Each
 * tree gets its own cache directory with the shipped bundle imported once
 * before timing, so every timed run is the daily `tables` (the bundle's
 * entries already present) and prints the same tables it would print.
 *
 * @module
 */
import { join } from "node:path";

const base = Deno.args[0] ?? "3a146d0";
const rounds = Number(Deno.args[1] ?? 5);
const here = new URL("..", import.meta.url).pathname;
const tmp = Deno.makeTempDirSync({ prefix: "tables-bench-" });
const baseTree = join(tmp, "base");
Deno.mkdirSync(baseTree);

function sh(cmd: string, cwd: string): string {
  const out = new Deno.Command("bash", { args: ["-c", cmd], cwd }).outputSync();
  if (!out.success) {
    throw new Error(`${cmd}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stderr);
}

sh(`git archive ${base} | tar -x -C ${baseTree}`, here);
const trees = [{ name: `base ${base}`, dir: baseTree }, {
  name: "this tree",
  dir: here,
}];
const tables = (cache: string) =>
  `deno run -A cli.ts --cache ${cache} tables --import results/tables.esb.gz --out ${
    join(tmp, "out")
  } > /dev/null`;
for (const [i, t] of trees.entries()) {
  sh(tables(join(tmp, `cache${i}`)), t.dir); // import once, warm up
}
const wall: number[][] = [[], []], cpu: number[][] = [[], []];
for (let r = 0; r < rounds; r++) {
  for (const [i, t] of trees.entries()) {
    const err = sh(
      `/usr/bin/time -f "TIME %e %U %S" ${tables(join(tmp, `cache${i}`))}`,
      t.dir,
    );
    const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+)/.exec(err)!;
    wall[i]!.push(Number(m[1]));
    cpu[i]!.push(Number(m[2]) + Number(m[3]));
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
for (const [i, t] of trees.entries()) {
  console.log(
    `${t.name}: wall ${wall[i]!.map((x) => x.toFixed(2)).join(" ")} s (median ${
      median(wall[i]!).toFixed(2)
    }); cpu ${cpu[i]!.map((x) => x.toFixed(2)).join(" ")} s (median ${
      median(cpu[i]!).toFixed(2)
    })`,
  );
}
console.log(
  `ratio this/base: wall ${
    (median(wall[1]!) / median(wall[0]!)).toFixed(2)
  }, cpu ${
    (median(cpu[1]!) / median(cpu[0]!)).toFixed(2)
  } (${rounds} alternating rounds; load ${
    Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ")
  })`,
);
Deno.removeSync(tmp, { recursive: true });
