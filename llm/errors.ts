/**
 * Typed errors of the LLM client.
 *
 * Every error carries the endpoint and model it concerns, and its message says
 * what failed and what to do about it. None of them ever carries the API key.
 *
 * @module
 */

/** Data common to the errors about one endpoint. */
export interface LlmErrorData {
  /** Base URL of the endpoint (without credentials or query string). */
  readonly baseURL: string;
  /** Model name sent in the request. */
  readonly model: string;
  /** HTTP attempts made, retries included. */
  readonly attempts: number;
}

/** Base class of the errors raised while talking to an LLM endpoint. */
export class LlmError extends Error {
  /** Base URL of the endpoint. */
  readonly baseURL: string;
  /** Model name. */
  readonly model: string;
  /** HTTP attempts made, retries included. */
  readonly attempts: number;

  /** Build an error about an endpoint. */
  constructor(message: string, data: LlmErrorData, options?: ErrorOptions) {
    super(message, options);
    this.name = "LlmError";
    this.baseURL = data.baseURL;
    this.model = data.model;
    this.attempts = data.attempts;
  }
}

/** The endpoint could not be reached (connection refused, DNS, reset). */
export class LlmUnreachableError extends LlmError {
  /** Build the error. */
  constructor(message: string, data: LlmErrorData, options?: ErrorOptions) {
    super(message, data, options);
    this.name = "LlmUnreachableError";
  }
}

/** The endpoint accepted the connection but did not answer within the timeout. */
export class LlmTimeoutError extends LlmUnreachableError {
  /** The per-request timeout in milliseconds. */
  readonly timeoutMs: number;

  /** Build the error. */
  constructor(
    message: string,
    data: LlmErrorData & { timeoutMs: number },
    options?: ErrorOptions,
  ) {
    super(message, data, options);
    this.name = "LlmTimeoutError";
    this.timeoutMs = data.timeoutMs;
  }
}

/** The endpoint answered with an HTTP error status (after the retries). */
export class LlmHttpError extends LlmError {
  /** The HTTP status of the last attempt. */
  readonly status: number;

  /** Build the error. */
  constructor(
    message: string,
    data: LlmErrorData & { status: number },
    options?: ErrorOptions,
  ) {
    super(message, data, options);
    this.name = "LlmHttpError";
    this.status = data.status;
  }
}

/** Offline replay was requested and the request is not in the reply cache. */
export class LlmCacheMissError extends LlmError {
  /** The request hash that was looked up. */
  readonly requestHash: string;

  /** Build the error. */
  constructor(
    message: string,
    data: LlmErrorData & { requestHash: string },
  ) {
    super(message, data);
    this.name = "LlmCacheMissError";
    this.requestHash = data.requestHash;
  }
}

/** The prompt and the reply budget do not fit the model's context (local runtime). */
export class LlmContextOverflowError extends LlmError {
  /** Tokens of the rendered prompt. */
  readonly promptTokens: number;
  /** The context size in tokens. */
  readonly contextSize: number;
  /** Build the error. */
  constructor(
    message: string,
    data: LlmErrorData & { promptTokens: number; contextSize: number },
  ) {
    super(message, data);
    this.name = "LlmContextOverflowError";
    this.promptTokens = data.promptTokens;
    this.contextSize = data.contextSize;
  }
}

/** The client options are invalid (bad URL, missing API-key variable, ...). */
export class LlmConfigError extends TypeError {
  /** The option at fault, e.g. `apiKeyEnv`. */
  readonly option: string;

  /** Build the error. */
  constructor(message: string, option: string) {
    super(message);
    this.name = "LlmConfigError";
    this.option = option;
  }
}

/** No JSON value could be extracted from a reply. */
export class JsonExtractionError extends SyntaxError {
  /** Length of the reply text. */
  readonly replyLength: number;
  /** The first characters of the reply, for messages. */
  readonly excerpt: string;

  /** Build the error. */
  constructor(message: string, reply: string) {
    super(message);
    this.name = "JsonExtractionError";
    this.replyLength = reply.length;
    this.excerpt = reply.slice(0, 120);
  }
}
