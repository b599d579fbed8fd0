/**
 * Waiting in a command that a signal may end (a seedless worker waiting for
 * its crawl, `crawl status --watch`): sleeps that SIGINT/SIGTERM cut short,
 * and the exit code the signal calls for. One listener pair for the whole
 * wait, removed by `dispose()`.
 */
import { EXIT, type Io } from './flags.js';

export interface InterruptibleWait {
  /** Resolves after `ms`, or at once when a signal arrives. */
  sleep(ms: number): Promise<void>;
  /** 130 after SIGINT, 143 after SIGTERM, undefined while none came. */
  signalExit(): number | undefined;
  dispose(): void;
}

export function interruptibleWait(io: Pick<Io, 'signals'>): InterruptibleWait {
  let signal: 'SIGINT' | 'SIGTERM' | undefined;
  let wake: (() => void) | undefined;
  const onInt = () => ((signal = 'SIGINT'), wake?.());
  const onTerm = () => ((signal = 'SIGTERM'), wake?.());
  io.signals.on('SIGINT', onInt);
  io.signals.on('SIGTERM', onTerm);
  return {
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        if (signal) return resolve();
        const timer = setTimeout(resolve, ms);
        wake = () => (clearTimeout(timer), resolve());
      }),
    signalExit: () => (signal === undefined ? undefined : signal === 'SIGINT' ? EXIT.interrupted : EXIT.terminated),
    dispose: () => {
      io.signals.off('SIGINT', onInt);
      io.signals.off('SIGTERM', onTerm);
    },
  };
}
