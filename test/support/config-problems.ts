import { expect } from 'vitest';
import { ConfigError } from '../../src/config/settings.js';

/** The problems a ConfigError carries, or a failure if `fn` does not throw one. */
export function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
    expect((error as ConfigError).message).toBe((error as ConfigError).problems.join('\n'));
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}
