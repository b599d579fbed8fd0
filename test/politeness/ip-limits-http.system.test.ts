/**
 * Per-IP limits over real HTTP: several `*.localhost` names, which all
 * resolve to 127.0.0.1, served by one local server, with the gap measured
 * from the server's log across hosts. And what `crawl check` says of them.
 */
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { minGap, startWeb, type Web } from '../../fixtures/web.js';
import { explain } from '../../src/index.js';
import { main } from '../../src/cli/cli.js';
import { loadConfigFile, validateConfig } from '../../src/config/settings.js';
import { crawl } from '../support/crawl-harness.js';
import { memoryIo } from '../support/memory-io.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const HOSTS = ['a.localhost', 'b.localhost', 'c.localhost'];

describe('per-IP limits over real HTTP', () => {
  it('keeps the per-IP gap across hosts on one address, as the server sees it', async () => {
    web = await startWeb({ sites: Object.fromEntries(HOSTS.map((h, i) => [h, { generate: { pages: 4, linksPerPage: 2, seed: i + 1 } }])) });
    const seeds = HOSTS.map((h) => web!.url(h, '/'));
    const run = await crawl(seeds, { concurrency: 8, defaults: { rate: '100/s', concurrency: 2 }, perIp: { rate: '20/s' } });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(3 * 5);
    expect(web.requests()).toHaveLength(3 * 6); // robots.txt too: every request to the address pays its gap
    // Judged as the requests were written (run.written), every one the server saw among them.
    expect(run.written).toHaveLength(3 * 6);
    // The hosts' own 100/s would allow 10 ms; the address allows one start per 50 ms.
    expect(minGap(run.written.map((w) => w.at))).toBeGreaterThanOrEqual(50);
  });

  it('leaves hosts on one address to their own limits by default', async () => {
    web = await startWeb({ sites: Object.fromEntries(HOSTS.map((h, i) => [h, { generate: { pages: 2, linksPerPage: 2, seed: i + 1 } }])) });
    await crawl(
      HOSTS.map((h) => web!.url(h, '/')),
      { concurrency: 8, defaults: { rate: '5/s' } },
    );
    // Three hosts start at once: their robots.txt requests arrive together.
    expect(minGap(web.requests().map((r) => r.at))).toBeLessThan(50);
  });
});

describe('crawl check: per-IP limits', () => {
  it('shows the per-IP limits and the address the host is counted under', async () => {
    const io = memoryIo(tmpdir());
    expect(await main(['check', '--no-robots', '--ip-rate', '5/s', '--ip-concurrency', '4', 'http://shop.localhost:8080/a'], io)).toBe(0);
    expect(io.out()).toMatch(
      /^per-ip: +rate 5\/s, 4 at once per address, all its hosts together; counted under 127\.0\.0\.1 \(the first address shop\.localhost resolves to\)$/m,
    );

    const off = memoryIo(tmpdir());
    expect(await main(['check', '--no-robots', 'http://shop.localhost:8080/a'], off)).toBe(0);
    expect(off.out()).toMatch(/^per-ip: +off \(no perIp in the config/m);

    const literal = await explain('http://192.0.2.7/x', { robots: { enabled: false }, perIp: { concurrency: 2 } });
    expect(literal.perIp).toEqual({
      policy: { intervalMs: 0, rateLabel: 'unlimited', concurrency: 2 },
      address: '192.0.2.7',
      explanation: 'no gap, 2 at once per address, all its hosts together; counted under 192.0.2.7',
    });
    const proxied = await explain('http://shop.localhost/x', {
      robots: { enabled: false },
      perIp: { rate: '1/s' },
      defaults: { proxy: 'http://127.0.0.1:3128' },
    });
    expect(proxied.perIp).toMatchObject({ address: null, explanation: expect.stringContaining('not applied: requests go through a proxy') });
  });

  it('refuses a bad per-IP value with one line naming it', async () => {
    expect(() => validateConfig({ perIp: { rate: 'fast', concurrency: 0, burst: 1 } }, 'c.json')).toThrow(
      /c\.json: perIp\.rate: expected a rate[^\n]*\nc\.json: perIp\.concurrency: expected an integer from 1 to 1000, got 0\nc\.json: perIp\.burst: unknown key/,
    );
    const io = memoryIo(tmpdir());
    expect(await main(['http://a.localhost/', '--ip-concurrency', '0'], io)).toBe(2);
    expect(io.err().trim().split('\n')).toEqual(['crawl: --ip-concurrency: expected an integer from 1 to 1000, got 0']);
  });

  it('the example config shows perIp', async () => {
    const file = await loadConfigFile(new URL('../../crawler.config.example.json', import.meta.url).pathname);
    expect(file.perIp).toEqual({ intervalMs: 20, rateLabel: '50/s', concurrency: 16 });
  });
});
