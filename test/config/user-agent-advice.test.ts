/** A User-Agent that does not say who crawls gets one line of advice; the default one says who and where, on a page that exists. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { userAgentAdvice } from '../../src/config/user-agent-advice.js';
import { DEFAULT_USER_AGENT } from '../../src/config/file-schema.js';

describe('User-Agent advice', () => {
  it.each(['mybot/1.0 (+https://example.com/bot)', 'ShopIndexer/2 (https://shop.example/crawler; ops@shop.example)'])('has nothing to say about %j', (ua) => {
    expect(userAgentAdvice(ua)).toBeUndefined();
  });

  it('names a generic token and a missing URL, in one line', () => {
    expect(userAgentAdvice('Mozilla/5.0 (X11; Linux x86_64)')).toMatch(
      /^User-Agent "Mozilla\/5.0 \(X11; Linux x86_64\)": its product token "mozilla" is generic and it has no URL explaining the crawler, so site owners cannot tell who is crawling; give a token of your own and a contact URL, like "mybot\/1.0 \(\+https:\/\/example.com\/bot\)"$/,
    );
    expect(userAgentAdvice('curl/8.5 (+https://example.com/)')).toMatch(/its product token "curl" is generic, so/);
    expect(userAgentAdvice('mybot/1.0')).toMatch(/"mybot\/1.0": it has no URL explaining the crawler, so/);
    expect(userAgentAdvice('mybot/1.0')).not.toContain('\n');
  });

  it("the default names the package's README on the npm registry, and needs no advice", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string };
    expect(DEFAULT_USER_AGENT).toMatch(new RegExp(`^crawl/\\S+ \\(\\+https://www\\.npmjs\\.com/package/${pkg.name}\\)$`));
    expect(userAgentAdvice(DEFAULT_USER_AGENT)).toBeUndefined();
  });
});
