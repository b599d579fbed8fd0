/**
 * A connect timeout that fires when it says. undici's connector times the
 * connect (name lookup, TCP and TLS) on its 499 ms "fast timer" tick, so a
 * 1500 ms limit fired at up to ~2500 ms and a sub-second one at ~1 s (see
 * phase-deadlines.ts). This wraps any undici connector with a timer on the
 * injected clock; the inner connector keeps its own timeout as a backstop.
 */
import { errors, type buildConnector } from 'undici';
import type { Clock, Timer } from '../clock.js';

export function timedConnector(inner: buildConnector.connector, timeoutMs: number, clock: Clock): buildConnector.connector {
  return (options, callback) => {
    let settled = false;
    let timer: Timer | undefined;
    const socket = inner(options, (err, sock) => {
      if (settled) return;
      settled = true;
      if (timer) clock.clearTimer(timer);
      // undici's callback type is a union of (err, null) and (null, socket).
      (callback as (e: Error | null, s: typeof sock) => void)(err, sock);
    });
    if (!settled) {
      timer = clock.setTimer(() => {
        if (settled) return;
        settled = true;
        const error = new errors.ConnectTimeoutError(`connect timed out (limit ${timeoutMs} ms)`);
        // Destroying with the error lets the inner connector clean up (its callback is ignored now).
        (socket as { destroy?: (e: Error) => void } | undefined)?.destroy?.(error);
        callback(error, null);
      }, timeoutMs);
    }
    return socket;
  };
}
