/**
 * What the benchmark scripts share: their command-line flags and the median
 * they report.
 *
 * @module
 */

/** The value after `--name` on the command line, or `fallback` without one. */
export function arg(name: string, fallback: string): string {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1]! : fallback;
}

/** The middle of `xs` (the upper one of the two for an even count). */
export const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/**
 * Removes `name` and the value after it from `args` and returns that value
 * (undefined without `name`), so that what is left are the other arguments.
 */
export function takeFlag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
}
