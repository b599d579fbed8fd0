/**
 * Options written before a subcommand (`crawl --config c.json check URL`).
 * The program parses with positional options, so commander hands them to
 * the crawl's option set, not the subcommand's, where they were silently
 * ignored. A subcommand that has the same option takes the value (its own,
 * written after the subcommand, wins); any other option given before it is
 * a usage error naming it, rather than a setting quietly dropped.
 *
 * Light on imports: cli.ts loads it for every run.
 */
import type { Command } from 'commander';

/** A usage error the CLI boundary prints as one line (exit 2). */
function usage(message: string): Error {
  return Object.assign(new Error(message), { code: 'USAGE' });
}

/**
 * `own` (the subcommand's parsed options) with the values of options given
 * on the command line before the subcommand merged in. Throws a USAGE error
 * naming the first option the subcommand does not take.
 */
export function withParentOptions<T extends object>(parent: Command, sub: Command, own: T): T {
  const merged: Record<string, unknown> = { ...(own as Record<string, unknown>) };
  const takes = new Set(sub.options.map((o) => o.attributeName()));
  for (const option of parent.options) {
    const key = option.attributeName();
    if (parent.getOptionValueSource(key) !== 'cli') continue;
    const flag = option.negate ? option.long! : (option.long ?? option.short!);
    if (!takes.has(key)) {
      throw usage(`${flag} does not apply to \`crawl ${sub.name()}\` (see crawl ${sub.name()} --help for the options it takes)`);
    }
    if (sub.getOptionValueSource(key) !== 'cli') merged[key] = parent.getOptionValue(key);
  }
  return merged as T;
}
