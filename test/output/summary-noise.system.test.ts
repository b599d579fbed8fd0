/**
 * What a crawl says on stderr about hosts it could not reach (issue 23):
 * one warning line per dead host (there were three: "retrying in 1s",
 * "retrying in 2s", "giving up"), hosts where nothing was fetched counted in
 * one summary line instead of filling the host table, and a hint to
 * --allow-private / allowNetworks when private addresses were skipped.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { memoryIo } from '../support/memory-io.js';
import { main } from '../../src/cli/cli.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

describe('a --check-links crawl with dead and private links', () => {
  it('warns once per dead host, counts unfetched hosts, hints at --allow-private', async () => {
    const dead = Array.from({ length: 25 }, (_, i) => `<a href="http://dead${i}.localhost:1/x">dead</a>`).join('');
    const priv = Array.from({ length: 3 }, (_, i) => `<a href="http://10.0.0.${i + 1}/p">private</a>`).join('');
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': `${dead}${priv}<a href="/b">b</a>`, '/b': 'b' } } } });
    const dir = await mkdtemp(join(tmpdir(), 'crawl-noise-'));
    await writeFile(join(dir, 'c.json'), JSON.stringify({ allowNetworks: ['127.0.0.0/8'] }));
    const io = memoryIo(dir);
    expect(await main(['--config', 'c.json', '--check-links', '--rate', 'unlimited', web.url('a.localhost', '/')], io)).toBe(0);
    const err = io.err().split('\n');

    const warnings = err.filter((l) => l.includes('robots.txt unavailable'));
    expect(warnings).toHaveLength(25);
    expect(new Set(warnings.map((l) => /dead\d+/.exec(l)?.[0])).size).toBe(25);

    // The table keeps rows for hosts that answered; the rest are one count.
    expect(err.filter((l) => /^ {2}dead\d+\.localhost/.test(l))).toEqual([]);
    expect(err.filter((l) => /^ {2}10\.0\.0\./.test(l))).toEqual([]);
    expect(err).toContainEqual(expect.stringMatching(/^ {2}a\.localhost:\d+ +2 +0 +0 +1/));
    expect(err).toContain('  +28 hosts with nothing fetched (25 errors, 3 skipped)');

    const skipped = err.findIndex((l) => l.startsWith('  skipped  '));
    expect(err[skipped]).toContain('private-address ×3');
    expect(err[skipped + 1]).toMatch(/private-address: .*--allow-private.*allowNetworks/);
  });

  it('says nothing about private addresses when none were skipped', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': 'nothing' } } } });
    const io = memoryIo(process.cwd());
    expect(await main(['--rate', 'unlimited', web.url('a.localhost', '/')], io)).toBe(0);
    expect(io.err()).not.toMatch(/allow-private/);
  });
});
