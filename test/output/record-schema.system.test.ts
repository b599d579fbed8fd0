/**
 * record.schema.json: generated from src/output/record-schema.ts, every
 * record a real crawl writes validates against the committed file, and the
 * records page (docs/records.md) documents every field.
 */
import net from 'node:net';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startWeb, type Web } from '../../fixtures/web.js';
import { main } from '../../src/cli/cli.js';
import { renderRecordJsonSchema } from '../../src/output/record-schema.js';
import { memoryIo } from '../support/memory-io.js';

const rootFile = (name: string) => fileURLToPath(new URL(`../../${name}`, import.meta.url));
const committed = async () => JSON.parse(await readFile(rootFile('record.schema.json'), 'utf8')) as { oneOf: Array<{ properties: Record<string, unknown> }> };

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

describe('record.schema.json', () => {
  it('is what the zod definition generates (regenerate: npx tsc -p tsconfig.json && node dist/config/schema-gen.js)', async () => {
    expect(await readFile(rootFile('record.schema.json'), 'utf8')).toBe(renderRecordJsonSchema());
  });

  it('validates every record of a real crawl of the fixtures, and refuses a record with an undocumented field', async () => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const deadPort = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    web = await startWeb({
      sites: {
        'a.localhost': {
          robots: 'User-agent: *\nDisallow: /private\n',
          generate: { pages: 6, linksPerPage: 2 },
          pages: {
            '/': `<title>Home</title><a href="/p/0">0</a> <a href="/private/x">p</a> <a href="/gone">g</a> <a href="/moved">m</a> <a href="/big">b</a> <a href="/img.png">i</a> <a href="mailto:x@y">m</a> <a href="http://127.0.0.1:${deadPort}/dead">dead</a> <a href="{{origin:b.localhost}}/">b</a>`,
            '/gone': { status: 404 },
            '/moved': { status: 301, headers: { location: '/p/1' } },
            '/big': `<title>Big</title>${'x'.repeat(5000)}`,
            '/img.png': { headers: { 'content-type': 'image/png', 'content-length': '3' }, body: 'png' },
          },
        },
        'b.localhost': { robots: { status: 500 }, pages: { '/': 'b' } },
      },
    });
    const dir = await mkdtemp(join(tmpdir(), 'crawl-records-'));
    await writeFile(join(dir, 'c.json'), JSON.stringify({ robots: { unavailableRetries: 0 } }));
    const io = memoryIo(dir);
    const args = [
      '-q',
      '--config',
      'c.json',
      '--rate',
      'unlimited',
      '--scope',
      'any',
      '--allow-private',
      '--links',
      '--emit-skipped',
      '--emit-robots',
      '--max-body',
      '2KiB',
      '--max-depth',
      '3',
    ];
    await main([...args, web.url('a.localhost', '/')], io);
    const records = io
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const validator = z.fromJSONSchema((await committed()) as Parameters<typeof z.fromJSONSchema>[0]);
    for (const record of records) {
      const result = validator.safeParse(record);
      expect(result.success, `${JSON.stringify(record)}\n${result.error?.message}`).toBe(true);
    }
    // What the crawl covered: the schema was checked against these shapes.
    const seen = (pred: (r: Record<string, unknown>) => boolean) => records.some(pred);
    expect(seen((r) => r.type === 'page' && r.status === 200 && Array.isArray(r.linkList))).toBe(true);
    expect(seen((r) => r.status === 404)).toBe(true);
    expect(seen((r) => r.status === 301 && typeof r.location === 'string')).toBe(true);
    expect(seen((r) => r.truncated === true)).toBe(true);
    expect(seen((r) => r.type === 'page' && (r.error as { code?: string } | undefined)?.code === 'CONNECTION_REFUSED')).toBe(true);
    expect(seen((r) => r.reason === 'robots')).toBe(true);
    expect(seen((r) => r.reason === 'robots-unavailable')).toBe(true);
    expect(seen((r) => r.type === 'robots')).toBe(true);
    expect(validator.safeParse({ ...records.find((r) => r.type === 'page'), surprise: 1 }).success).toBe(false);
    // One time convention: every instant is an ISO 8601 UTC string with milliseconds (durations are numbers named …Ms).
    const instants = records.flatMap((r) => (['fetchedAt', 'startedAt', 'pausedUntil'] as const).flatMap((k) => (r[k] === undefined ? [] : [r[k]])));
    expect(instants.length).toBeGreaterThan(records.length);
    for (const t of instants) expect(t).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const page = records.find((r) => r.type === 'page' && r.startedAt !== undefined)!;
    expect(validator.safeParse({ ...page, startedAt: Date.parse(page.startedAt as string) }).success).toBe(false);
  });

  it('every record field is documented in docs/records.md', async () => {
    const readme = await readFile(rootFile('docs/records.md'), 'utf8');
    const fields = new Set((await committed()).oneOf.flatMap((branch) => Object.keys(branch.properties)));
    const missing = [...fields].filter((field) => !readme.includes(`\`${field}\``));
    expect(missing).toEqual([]);
  });
});
