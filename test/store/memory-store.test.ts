import { MemoryStore } from '../../src/store/memory-store.js';
import { describeStoreContract } from '../support/store-contract.js';

describeStoreContract('memory', async () => ({ store: new MemoryStore() }));
