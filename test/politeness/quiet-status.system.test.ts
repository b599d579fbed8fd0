/**
 * `crawl status --config`: a host of a kept crawl that waits for its quiet
 * hours is named, with when its window opens on its zone's clock; nothing of
 * it was requested meanwhile (the server's log).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { useTempDir } from '../support/system-fixtures.js';
import { requireBuilt, startCrawl } from '../support/spawn-crawl.js';

let web: Web;
beforeAll(async () => {
  web = await startWeb({ sites: { 'night.localhost': { pages: { '/': '<title>Night</title>' } }, 'day.localhost': { pages: { '/': '<title>Day</title>' } } } });
});
afterAll(() => web?.close());

describe('crawl status with quiet hours', () => {
  const tmp = useTempDir('crawl-quiet-status-');
  beforeAll(requireBuilt);

  it('names a queued host outside its window and when the window opens; the host was not requested', async () => {
    // A one-hour window starting two hours from now, in UTC: closed for the whole test.
    const hour = (new Date().getUTCHours() + 2) % 24;
    const hh = (h: number) => String(h % 24).padStart(2, '0');
    const config = {
      allowNetworks: ['127.0.0.0/8'],
      defaults: { rate: '50/s' },
      domains: { 'night.localhost': { hours: `${hh(hour)}:00-${hh(hour + 1)}:00`, timezone: 'UTC' } },
    };
    await writeFile(join(tmp.path, 'night.json'), JSON.stringify(config));
    const seeds = [web.url('night.localhost', '/'), web.url('day.localhost', '/')];
    const run = await startCrawl(['--config', 'night.json', '--state', 'night.db', '--max-time', '2s', ...seeds], tmp.path).done;
    // Stopped by --max-time while the night host waits (a crawl waiting for a window is not done).
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('stopped at --max-time 2s');
    expect(web.requests('night.localhost')).toEqual([]);
    expect(web.requests('day.localhost').length).toBeGreaterThan(0);
    const status = await startCrawl(['status', '--state', 'night.db', '--config', 'night.json'], tmp.path).done;
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^  quiet: +night\\.localhost:\\d+ until ${hh(hour)}:00 UTC \\(\\S+Z, quiet hours\\)$`, 'm'));
    const json = await startCrawl(['status', '--state', 'night.db', '--config', 'night.json', '--json'], tmp.path).done;
    expect(JSON.parse(json.stdout).quiet).toEqual([expect.objectContaining({ opensAtLocal: `${hh(hour)}:00`, timezone: 'UTC' })]);
    // Without the config a status cannot know the window, and says nothing of it.
    const plain = await startCrawl(['status', '--state', 'night.db'], tmp.path).done;
    expect(plain.stdout).not.toContain('quiet:');
  });
});
