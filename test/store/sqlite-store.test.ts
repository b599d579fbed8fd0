import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/store/crawl-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { describeStoreContract } from '../support/store-contract.js';

describeStoreContract('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
  const path = join(dir, 'state.db');
  return { store: new SqliteStore(path), reopen: async () => new SqliteStore(path), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

describe('state file format', () => {
  it('resumes a format-1 file (before entries had `extra`): the column is added, the queue kept', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
    const path = join(dir, 'state.db');
    try {
      const store = new SqliteStore(path);
      await store.open({ seeds: ['http://a.example/'], configFingerprint: 'f' });
      await store.add('http://a.example/1', 'a', { url: 'http://a.example/1', depth: 1, parent: null, hops: 0, attempt: 0 });
      store.close();
      // What the previous release wrote: no `extra` column, format 1.
      const Driver = createRequire(import.meta.url)('better-sqlite3');
      const db = new Driver(path);
      db.exec("ALTER TABLE urls DROP COLUMN extra; UPDATE meta SET value = '1' WHERE key = 'schema';");
      db.close();
      const again = new SqliteStore(path);
      expect((await again.open({ seeds: ['http://a.example/'], configFingerprint: 'f' })).resumed).toBe(true);
      const lease = again.claim('a', 0) as Lease;
      expect(lease.entry).toEqual({ url: 'http://a.example/1', depth: 1, parent: null, hops: 0, attempt: 0 });
      await again.release(lease, { ...lease.entry, extra: { kind: 'sitemap' } });
      expect((again.claim('a', 0) as Lease).entry.extra).toEqual({ kind: 'sitemap' });
      again.close();
      expect(new Driver(path, { readonly: true }).prepare("SELECT value FROM meta WHERE key = 'schema'").get().value).toBe('2');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
