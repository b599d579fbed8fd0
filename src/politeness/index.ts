/**
 * Politeness as the crawl loop sees it: one record per host key (HostTable),
 * server feedback that classifies outcomes and changes those records, and
 * the backoff policy retries use. The limiter and the pure policies behind
 * them are imported from their own modules by whoever tests or tunes them.
 */
export { HostTable, type HostSaved, type HostState, type Job, type JobContext } from './host-state.js';
export { HostFeedback, RETRYABLE_CODES, type Action } from './server-feedback.js';
export { backoffDelay } from './backoff.js';
