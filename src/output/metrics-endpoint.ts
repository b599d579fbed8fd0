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
 * - It answers only requests whose `Host` names it: an IP address, `localhost`,
 *   or the host given to `--metrics`. A page in a browser on this machine
 *   could otherwise read it through a name of its own that resolves here
 *   (DNS rebinding); such a request gets 421.
 * - A client gets HEADERS_TIMEOUT_MS to send its request's headers and
 *   REQUEST_TIMEOUT_MS for the whole request, checked every second, and at
 *   most MAX_CONNECTIONS connections are open at once: a client that opens
 *   sockets and sends half a request cannot hold them.
 */
import { createServer, type Server } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import type { CrawlMetrics } from './metrics.js';
import { MetricsError, type MetricsAddress } from '../config/metrics-address.js';

export { MetricsError, parseMetricsAddress, type MetricsAddress } from '../config/metrics-address.js';

export interface MetricsEndpoint {
  /** e.g. http://127.0.0.1:9464/metrics, with the port actually bound. */
  readonly url: string;
  close(): Promise<void>;
}

/** How long a client may take to send a request's headers, and the whole request (ms). */
const HEADERS_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** Connections open at once; more are closed as they arrive. */
const MAX_CONNECTIONS = 64;

/** Whether a request's Host header names this endpoint (see the contract): an IP literal, localhost, or the host it was given. */
export function hostAllowed(header: string | undefined, given: string): boolean {
  if (header === undefined) return false;
  const host = header
    .trim()
    .toLowerCase()
    .replace(/:\d*$/, '')
    .replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost' || host === given.toLowerCase() || isIP(host) !== 0) return true;
  return false;
}

const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the port is already in use',
  EACCES: 'not allowed to listen there (ports below 1024 need privileges)',
  EADDRNOTAVAIL: "that address is not one of this machine's",
  ENOTFOUND: 'that host name does not resolve',
  EAI_AGAIN: 'that host name does not resolve',
};

export async function openMetricsEndpoint(address: MetricsAddress, metrics: CrawlMetrics, flag = '--metrics'): Promise<MetricsEndpoint> {
  const server: Server = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1_000 },
    (req, res) => {
      if (!hostAllowed(req.headers.host, address.host)) {
        res.writeHead(421, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end('crawl: this endpoint answers only to its own address\n');
        return;
      }
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
    },
  );
  // A scraper that never reads must not keep the crawl's process alive or hold sockets forever.
  server.keepAliveTimeout = 5_000;
  server.maxConnections = MAX_CONNECTIONS;
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
