/**
 * Rendering's settings: `render` per host (defaults, domains, the top-level
 * shorthand, `--render`), `renderOptions` and its flags, their problems
 * worded like every other field's, and a crawl that would render with no
 * browser refused before it starts (library and CLI alike). No browser runs.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crawl } from '../../src/api/crawl.js';
import { buildSettings, ConfigError, validateConfig } from '../../src/config/settings.js';
import { BrowserMissingError, findBrowser } from '../../src/render/browser-path.js';
import { main } from '../../src/cli/cli.js';
import { memoryIo } from '../support/memory-io.js';

const settings = (file: unknown, flags = {}) => buildSettings(validateConfig(file), flags);

describe('render settings', () => {
  it('renders nothing by default, and needs no browser then', () => {
    const s = settings({});
    expect(s.render).toMatchObject({
      enabled: false,
      concurrency: 4,
      timeoutMs: 30_000,
      block: ['image', 'media', 'font'],
      recycleAfter: 50,
      cacheBytes: 64 * 1024 * 1024,
      browser: null,
    });
    expect(s.policyFor('a.example').render).toBe(false);
  });

  it('takes render per host: a domains entry wins over defaults, --render and the top-level shorthand set defaults', () => {
    const file = { defaults: { render: 'auto' }, domains: { 'app.example': { render: true }, 'static.example': { render: false } } };
    const s = settings(file);
    expect(s.render!.enabled).toBe(true);
    expect([s.policyFor('app.example').render, s.policyFor('static.example').render, s.policyFor('other.example').render]).toEqual([true, false, 'auto']);
    const flagged = settings(file, { render: true });
    expect([flagged.policyFor('static.example').render, flagged.policyFor('other.example').render]).toEqual([false, true]);
    expect(settings({ render: 'auto' }).policyFor('x.example').render).toBe('auto');
    // Only a domain renders: the browser is still needed.
    expect(settings({ domains: { 'app.example': { render: 'auto' } } }).render!.enabled).toBe(true);
  });

  it('reads the flags: --render-concurrency, --render-timeout (bare seconds), --render-block (or none), --browser', () => {
    const s = settings({}, { render: 'auto', renderConcurrency: '2', renderTimeout: '5', renderBlock: 'image,xhr', browser: '/opt/chrome' });
    expect(s.render).toMatchObject({ enabled: true, concurrency: 2, timeoutMs: 5000, block: ['image', 'xhr'], browser: '/opt/chrome' });
    expect(settings({}, { renderBlock: 'none' }).render!.block).toEqual([]);
  });

  it.each([
    [{ render: 'yes' }, {}, 'config: render: expected true, false or "auto", got "yes"'],
    [{ domains: { 'a.example': { render: 1 } } }, {}, 'config: domains["a.example"].render: expected true, false or "auto", got 1'],
    [{ renderOptions: { concurrency: 0 } }, {}, 'config: renderOptions.concurrency'],
    [{ renderOptions: { block: ['pictures'] } }, {}, 'renderOptions.block[0]: expected resource types among'],
    [{ renderOptions: { timeot: '1s' } }, {}, 'config: renderOptions.timeot: unknown key (did you mean "timeout"?)'],
    [{}, { renderTimeout: 'soon' }, '--render-timeout'],
    [{}, { render: 'maybe' }, '--render: expected true, false or "auto", got "maybe"'],
  ])('refuses %j %j, saying where', (file, flags, message) => {
    let error: unknown;
    try {
      settings(file, flags);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(message);
  });
});

describe('finding the browser', () => {
  it('takes a named path, else CRAWL_BROWSER, else PATH; a named path that is not there is an error, not a fallback', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-browser-'));
    const fake = join(dir, 'chromium');
    await writeFile(fake, '#!/bin/sh\n', { mode: 0o755 });
    expect(findBrowser(null, { PATH: dir })).toBe(fake);
    expect(findBrowser(null, { PATH: '', CRAWL_BROWSER: fake })).toBe(fake);
    expect(findBrowser(fake, { PATH: '' })).toBe(fake);
    expect(() => findBrowser(join(dir, 'nope'), { PATH: dir })).toThrow(/--browser ".*nope" is not an executable file/);
    expect(() => findBrowser(null, { PATH: dir, CRAWL_BROWSER: join(dir, 'nope') })).toThrow(/CRAWL_BROWSER/);
    expect(() => findBrowser(null, { PATH: join(dir, 'empty') })).toThrow(/none was found on PATH .*apt-get install chromium/);
  });

  it('the library refuses a rendering crawl without a browser when crawl() is called, before anything runs', () => {
    let error: unknown;
    try {
      crawl({ seeds: ['http://a.localhost/'], render: true, renderOptions: { browser: '/no/such/browser' } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BrowserMissingError);
    expect((error as BrowserMissingError).code).toBe('BROWSER_MISSING');
  });
});

describe('crawl check --render', () => {
  it('says whether the page would be rendered, and how to list what its browser would fetch', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-check-render-'));
    await writeFile(join(dir, 'robots.txt'), '');
    const check = async (...args: string[]) => {
      const io = memoryIo(dir);
      expect(await main(['check', '--robots-file', 'robots.txt', ...args, 'https://app.example/'], io)).toBe(0);
      return io
        .out()
        .split('\n')
        .find((l) => l.startsWith('render:'));
    };
    expect(await check()).toMatch(/^render: {2}not rendered: render is false for this host/);
    expect(await check('--render')).toMatch(
      /^render: {2}rendered in a browser if it is 2xx HTML \(render true\).*crawl --render -v --max-pages 1 https:\/\/app\.example\/$/,
    );
    expect(await check('--render', 'auto')).toMatch(/^render: {2}rendered only if its HTML looks like an application shell/);
  });
});
