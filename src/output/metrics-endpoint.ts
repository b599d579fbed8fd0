/**
 * The `--metrics [HOST:]PORT` endpoint: Prometheus text at GET /metrics.
 *
 * Contract:
 * - Listens on 127.0.0.1 unless a host is given: the numbers name the hosts
 *   a crawl visits, which is nobody else's business unless asked for.
 * - `openMetricsEndpoint` resolves only once the port is bound, and rejects
 *   with one `MetricsError` line (code USAGE: exit 2) when it cannot be (in
 *   use, not allowed, no such address), so the crawl never starts without
 *   the endpoint it was asked for.
 * - `close()` stops listening and drops open connections: the endpoint ends
 *   with the crawl.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CrawlMetrics } from './metrics.js';

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

export interface MetricsEndpoint {
  /** e.g. http://127.0.0.1:9464/metrics, with the port actually bound. */
  readonly url: string;
  close(): Promise<void>;
}

const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the port is already in use',
  EACCES: 'not allowed to listen there (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'that address is not one of this machine\'s',
  ENOTFOUND: 'that host name does not resolve',
  EAI_AGAIN: 'that host name does not resolve',
};

export async function openMetricsEndpoint(address: MetricsAddress, metrics: CrawlMetrics, flag = '--metrics'): Promise<MetricsEndpoint> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('crawl: metrics are at /metrics\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`crawl: metrics failed: ${(err as Error).message}\n`),
    );
  });
  // A scraper that never reads must not keep the crawl's process alive or hold sockets forever.
  server.keepAliveTimeout = 5_000;
  server.requestTimeout = 10_000;
  const where = address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why = LISTEN_ERRORS[err.code ?? ''] ?? err.message;
      reject(new MetricsError(`${flag} ${where}: cannot listen: ${why}`, { cause: err }));
    });
    server.listen(address.port, address.host, () => resolve());
  });
  server.unref(); // the crawl decides when the process ends, not a scraper
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${host}:${bound.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
