/**
 * The `perIp` field of the config file: limits over every host on one IP
 * address together (shared hosting, a CDN edge), on top of each host's own
 * policy. Absent: off. It is one budget per address, not per host, so it
 * has no `domains` form. `--ip-rate` and `--ip-concurrency` set it from the
 * command line (settings.ts).
 */
import { z } from 'zod';
import { comment, fieldSchemas, once } from './fields.js';
import type { IpPolicy } from './settings-types.js';

const { rate, integer } = fieldSchemas;

export const PER_IP_TEXT = {
  perIp:
    'Per-IP limits: every host whose name resolves to one address shares them, on top of its own rate and concurrency ' +
    '(a host is counted under the first address its name resolves to; hosts reached through a proxy are not counted). Default none (off).',
  rate: 'Minimum gap between request starts to one address, all its hosts together: "5/s", "500ms" or "unlimited". Default "unlimited".',
  concurrency: 'Requests in flight at once to one address, all its hosts together (1-1000). Default: no cap of its own.',
} as const;

export const perIpSchema = once(() =>
  z
    .strictObject({
      $comment: comment(),
      rate: rate().optional().describe(PER_IP_TEXT.rate),
      concurrency: integer(1, 1000).optional().describe(PER_IP_TEXT.concurrency),
    })
    .transform((v): IpPolicy => ({ intervalMs: v.rate?.intervalMs ?? 0, rateLabel: v.rate?.label ?? 'unlimited', concurrency: v.concurrency ?? Infinity })),
);

/** The file's `perIp` with `--ip-rate` / `--ip-concurrency` over it; either flag alone turns the limits on. Null: off. */
export function mergePerIp(file: IpPolicy | undefined, flags: { rate?: { intervalMs: number; label: string }; concurrency?: number }): IpPolicy | null {
  if (file === undefined && flags.rate === undefined && flags.concurrency === undefined) return null;
  const base: IpPolicy = file ?? { intervalMs: 0, rateLabel: 'unlimited', concurrency: Infinity };
  return {
    intervalMs: flags.rate?.intervalMs ?? base.intervalMs,
    rateLabel: flags.rate?.label ?? base.rateLabel,
    concurrency: flags.concurrency ?? base.concurrency,
  };
}
