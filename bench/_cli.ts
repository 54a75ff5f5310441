/**
 * The command line as the engine benchmarks run it: a subprocess with the
 * engine's fixture kinds, and the experiment on those kinds that the kill
 * benchmarks interrupt.
 *
 * @module
 */

/**
 * `deno run -A cli.ts --kinds engine/testdata/kinds.ts ARGS` in the
 * repository root, with `CI=1` added to `env`; output goes where `io` says.
 */
export function fixtureKindsCli(
  args: string[],
  io: {
    env?: Record<string, string>;
    stdout: "null" | "piped";
    stderr: "null" | "piped";
  },
): Deno.Command {
  const cli = ["run", "-A", "cli.ts", "--kinds", "engine/testdata/kinds.ts"];
  return new Deno.Command(Deno.execPath(), {
    args: [...cli, ...args],
    cwd: new URL("..", import.meta.url).pathname,
    env: { ...io.env, CI: "1" },
    stdout: io.stdout,
    stderr: io.stderr,
  });
}

/**
 * The YAML of the experiment the kill benchmarks interrupt, on the fixture
 * kinds: `groups` groups of a sleep (100 + `msStep` x i ms, 3 steps), a blob
 * written and one reading it, and a spin over both, then one node over every
 * spin (4 x `groups` + 1 nodes).
 */
export function killExperimentYaml(groups: number, msStep: number): string {
  const nodes: string[] = [];
  for (let i = 0; i < groups; i++) {
    nodes.push(
      `  s${i}: { kind: test.sleep, with: { ms: ${
        100 + msStep * i
      }, steps: 3, value: ${i} } }`,
      `  b${i}: { kind: test.blob, with: { size: ${50000 + i} } }`,
      `  r${i}: { kind: test.blob, with: { read: $b${i}.blob } }`,
      `  h${i}: { kind: test.spin, with: { n: ${
        2_000_000 + i
      }, input: [$s${i}, $r${i}] } }`,
    );
  }
  nodes.push(
    `  all: { kind: test.add, with: { a: 0, note: [${
      Array.from({ length: groups }, (_, i) => `$h${i}`).join(", ")
    }] } }`,
  );
  return `experiment: kill\nseed: 1\nnodes:\n${nodes.join("\n")}\n`;
}
