/**
 * `crawl --log-format json` (issue 21), the real binary: stderr is JSON lines
 * only, from the first message to the summary, and a usage error at the
 * boundary is one JSON line with its code.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

let web: Web | undefined;
let dir = '';

beforeAll(requireBuilt);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-log-json-'));
});
afterEach(async () => {
  await web?.close();
  web = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('crawl --log-format json', () => {
  it('writes only JSON lines on stderr; the summary is one object equal to --stats', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 6, linksPerPage: 2 } } } });
    const done = await startCrawl(['--log-format', 'json', '--rate', '20/s', '--stats', 'stats.json', '-o', 'out.jsonl', web.url('a.localhost', '/')], dir)
      .done;
    expect(done.code, done.stderr).toBe(0);
    const lines = jsonLines(done.stderr);
    for (const l of lines) {
      expect(['info', 'warn', 'error', 'debug']).toContain(l.level);
      expect(typeof l.message).toBe('string');
      expect(new Date(l.time as string).toISOString()).toBe(l.time);
    }
    expect(lines[0].message).toMatch(/^crawling 1 seed/);
    const last = lines.at(-1)!;
    expect(last.message).toBe('finished');
    expect(lines.filter((l) => l.summary !== undefined)).toHaveLength(1);
    expect(last.summary).toEqual(JSON.parse(await readFile(join(dir, 'stats.json'), 'utf8')));
  }, 20_000);

  it('a usage error is one JSON line with its code, exit 2', async () => {
    const done = await startCrawl(['--log-format', 'json', '--metrics', 'nope', 'http://a.localhost:9/'], dir).done;
    expect(done.code).toBe(2);
    const [line, ...rest] = jsonLines(done.stderr);
    expect(rest).toEqual([]);
    expect(line).toMatchObject({
      level: 'error',
      code: 'USAGE',
      message: '--metrics expects [HOST:]PORT, e.g. 9464 or 0.0.0.0:9464 (port 0 to 65535), got "nope"',
    });
  }, 10_000);
});
