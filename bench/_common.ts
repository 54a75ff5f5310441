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
