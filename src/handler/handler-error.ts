/**
 * The error a crawl run with `handlerErrors: "stop"` (`--handler-errors
 * stop`) fails with: the first page handler that threw, after its page's
 * record was written. Its own module, so the package entry can export it
 * without loading the handler step.
 */
export class HandlerError extends Error {
  readonly code = 'HANDLER_ERROR';
  constructor(
    /** The page whose handler threw. */
    readonly url: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`the page handler failed at ${url}: ${message}`, options);
    this.name = 'HandlerError';
  }
}
