import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { describeStoreContract } from './support/store-contract.js';

describeStoreContract('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
  const path = join(dir, 'state.db');
  return { store: new SqliteStore(path), reopen: async () => new SqliteStore(path), cleanup: () => rm(dir, { recursive: true, force: true }) };
});
