/**
 * The state seam's public face: the CrawlStore interface every store
 * implements, and the stores there are.
 */
export {
  type ClaimWait,
  type Cleared,
  type CounterName,
  type CrawlMeta,
  type CrawlStore,
  type EntryExtra,
  type FrontierEntry,
  type Lease,
  type MaybePromise,
  type OpenResult,
  type StoreCounts,
  type Survey,
} from './crawl-store.js';
export { MemoryStore } from './memory-store.js';
export { MemoryHistory, type PageHistory, type PageHistoryStore } from './page-history.js';
// The SQLite and Redis stores load their drivers: import them from their own modules where they are used.
export type { RobotsRecord } from '../robots/types.js';
