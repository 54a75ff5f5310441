/**
 * Typed errors of the policy library.
 *
 * @module
 */

/**
 * An ONNX policy file that cannot be used: corrupt bytes, or a graph whose
 * inputs/outputs do not follow the policy contract (see `onnx_export.ts`).
 * Carries where the file came from and what was expected.
 */
export class PolicyContractError extends TypeError {
  /** Where the model came from (a path, a blob hash, or `<bytes>`). */
  readonly source: string;
  /** The expected contract, in words. */
  readonly expected: string;

  /** Build an error; the message names the source, the problem and the contract. */
  constructor(source: string, problem: string, expected: string) {
    super(`Cannot use ONNX policy ${source}: ${problem}. Expected ${expected}`);
    this.name = "PolicyContractError";
    this.source = source;
    this.expected = expected;
  }
}
