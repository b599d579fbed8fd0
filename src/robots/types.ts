/**
 * The shapes robots handling shares: what robots.txt says about an origin,
 * why a URL is (dis)allowed, and the part of a response robots code reads.
 * Its own module so the cache, the rules and the gate import it without
 * importing each other.
 */
import type { UsageSource } from '../usage/page-usage.js';
import type { TdmrepFile } from '../usage/tdmrep.js';

/** Why a URL is (dis)allowed: the deciding line of the robots.txt, for skip records and `crawl check`. */
export interface RobotsExplanation {
  allowed: boolean;
  /** The deciding rule as written, e.g. "Disallow: /private"; null when no rule matched (allowed by default). */
  rule: string | null;
  /** 1-based line number of `rule` in the robots.txt; null when no line decided. */
  line: number | null;
  /** The user-agent line of the group used, e.g. "User-agent: mybot"; null when no group applies. */
  group: string | null;
}

/** What robots.txt says about one origin. */
export type RobotsState =
  | {
      kind: 'rules';
      /** Clock time (`Clock.now()`) the rules were fetched. */
      fetchedAt: number;
      /** Clock time after which the rules are stale and refetched. */
      expiresAt: number;
      /**
       * Whether our product token may fetch `url`. Only the path and query are
       * matched: the caller picks the state for the URL's origin.
       */
      isAllowed(url: string): boolean;
      explain(url: string): RobotsExplanation;
      /**
       * What the file's Content-Usage and Content-Signal rules for our group
       * state about `url`'s content (usage/robots-usage.ts); empty when none
       * applies or the URL is disallowed. Needs the RFC 9651 parser loaded
       * (`loadUsageParser`) when the file has such rules (`mentionsUsage`).
       */
      usage(url: string): UsageSource[];
      /** Crawl-delay of the chosen group in milliseconds; null if absent or invalid. */
      crawlDelayMs: number | null;
      /** The robots.txt URL whose body was parsed (the last hop of a redirect chain). */
      source: string;
      /** Its `Sitemap:` lines as absolute URLs, in file order (whatever group they stand in). */
      sitemaps: string[];
      /**
       * Set when the file was longer than the cap: the cap in bytes. Rules
       * past it were not read (RFC 9309 §2.5 allows that), which the crawl
       * and `crawl check` say rather than keep quiet.
       */
      truncatedAt?: number;
      /** The origin's tdmrep.json, fetched with robots.txt when a declared purpose needs it (usage/tdmrep.ts); absent when not fetched. */
      tdmrep?: TdmrepFile;
    }
  | {
      kind: 'allow-all';
      fetchedAt: number;
      expiresAt: number;
      /** e.g. "robots.txt answered 404". */
      reason: string;
      tdmrep?: TdmrepFile;
    }
  | {
      /** RFC 9309 §2.3.1.4 "unreachable": the whole origin is disallowed until a retry succeeds. */
      kind: 'unavailable';
      reason: string;
      /** Clock time of the next attempt; null once the retries are used up (given up for this crawl). */
      retryAt: number | null;
      /** Failed fetch attempts so far, the first one included. */
      attempts: number;
      /**
       * Set when the host could not be connected to at all (refused, no DNS
       * answer, connect timeout, TLS failure): the transport error of the last
       * attempt. Once given up, the host's URLs get page records with this
       * error instead of `robots-unavailable` skips: nothing of the host was
       * fetched either way, and a dead link is reported as one.
       */
      connectError?: { code: string; message: string };
    };

/**
 * The part of the fetcher's `FetchResult` that robots handling reads. Declared
 * structurally so the fetcher's result type satisfies it without an import.
 */
export interface RobotsResponse {
  /** The URL requested (redirects are not followed by the fetcher). */
  url: string;
  status: number;
  /** The raw Location header, possibly relative; null if absent. */
  location: string | null;
  /** Decoded body text; null when there is none. */
  body: string | null;
  /** The body was cut at the fetcher's byte cap. */
  truncated: boolean;
}

/**
 * What robots.txt said about an origin as plain, JSON-safe data, for stores
 * that keep it across a restart or share it between processes. Rules are kept
 * as the (capped) text they were parsed from and parsed again when loaded.
 */
export type RobotsRecord =
  | { kind: 'rules'; source: string; text: string; fetchedAt: number; expiresAt: number; truncatedAt?: number; tdmrep?: TdmrepFile }
  | { kind: 'allow-all'; reason: string; fetchedAt: number; expiresAt: number; tdmrep?: TdmrepFile }
  | { kind: 'unavailable'; reason: string; retryAt: number | null; attempts: number; connectError?: { code: string; message: string } };

/** Where a RobotsCache keeps its records beyond this process (a CrawlStore does). */
export interface RobotsRecordStore {
  getRobots(origin: string): RobotsRecord | undefined | Promise<RobotsRecord | undefined>;
  putRobots(origin: string, record: RobotsRecord): void | Promise<void>;
  /** A shared store: the right to fetch `origin`'s robots.txt for `ttlMs` (false: another worker has it; wait for its record). */
  lockRobots?(origin: string, ttlMs: number): Promise<boolean>;
}
