// Test utility: small networks and their gradients checked against finite
// differences.
import type { Activation, MlpSpec } from "./mlp.ts";

/** The spec of a 5-action network: `inputSize` inputs, `hidden` layers. */
export function fiveActionSpec(
  inputSize: number,
  hidden: number[],
  activation: Activation = "tanh",
): MlpSpec {
  return { inputSize, hidden, actions: 5, activation };
}

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
