/**
 * `[HOST:]PORT` for the metrics endpoint (`--metrics`, the config file's
 * `metrics`, the library's `metrics`), parsed without loading the endpoint:
 * the config file is checked on every start, the endpoint opened only when
 * asked for.
 */

/** A bad or unusable --metrics address: a usage error (exit 2), one line. */
export class MetricsError extends Error {
  readonly code = 'USAGE';
}

export interface MetricsAddress {
  host: string;
  port: number;
}

/**
 * `9464`, `0.0.0.0:9464`, `localhost:9464`, `[::1]:9464` → host and port.
 * Port 0 asks the system for a free one (the URL is logged).
 */
export function parseMetricsAddress(text: string, flag = '--metrics'): MetricsAddress {
  const m = /^(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) {
    throw new MetricsError(`${flag} expects [HOST:]PORT, e.g. 9464 or 0.0.0.0:9464 (port 0 to 65535), got ${JSON.stringify(text)}`);
  }
  const host = m[1] === undefined ? '127.0.0.1' : m[1].replace(/^\[|\]$/g, '');
  return { host, port };
}

/** What is wrong with `text` as an address, worded to follow a field's name; undefined when it is fine. */
export function metricsAddressProblem(text: string): string | undefined {
  try {
    parseMetricsAddress(text, 'metrics');
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/^metrics /, '');
  }
}
