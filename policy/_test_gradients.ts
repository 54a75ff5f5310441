// Test utility: gradients checked against finite differences.

/**
 * The central difference `(loss(x + h) - loss(x - h)) / 2h` of `loss` in
 * `params[i]` (x its value); `params[i]` is restored afterwards.
 */
export function centralDifference(
  params: Float32Array,
  i: number,
  h: number,
  loss: () => number,
): number {
  const old = params[i]!;
  params[i] = old + h;
  const lp = loss();
  params[i] = old - h;
  const lm = loss();
  params[i] = old;
  return (lp - lm) / (2 * h);
}
