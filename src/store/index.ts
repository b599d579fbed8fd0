/**
 * The state seam's public face: the CrawlStore interface every store
 * implements, and the stores there are.
 */
export { type CounterName, type CrawlMeta, type CrawlStore, type FrontierEntry, type Lease, type MaybePromise, type OpenResult, type StoreCounts } from './crawl-store.js';
export { MemoryStore } from './memory-store.js';
export type { RobotsRecord } from '../robots/types.js';
