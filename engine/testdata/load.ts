/**
 * Timing bounds for tests on a shared machine (a test fixture, like the
 * kinds beside it, so every test of the project may import it): a bound
 * checks that something takes milliseconds, not minutes; when other work
 * takes the cores, the same code takes longer, so the bound grows with the
 * load average over the cores.
 *
 * @module
 */

/**
 * How much slower than on an idle machine a test should allow, from the
 * load average over the cores (at least 1): a bound of `ms` on a 2-core
 * machine at load 14 becomes 7 × `ms`.
 */
export function loadFactor(): number {
  let load = 0;
  try {
    load = Deno.loadavg()[0] ?? 0;
  } catch { /* not available: assume idle */ }
  const cores = navigator.hardwareConcurrency || 1;
  return Math.max(1, load / cores);
}

/** `ms` scaled to the machine's load ({@linkcode loadFactor}). */
export function scaledMs(ms: number): number {
  return ms * loadFactor();
}
