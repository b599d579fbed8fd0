/**
 * A catalogue with pagination, crawled like a scraper would: the listing
 * pages are walked by their "Next" link, each product page is visited with
 * what its listing knew about it (its category), and one item comes out per
 * product. Nothing else of the site is fetched: the handler follows only
 * what it enqueues (`follow: false`), never the nav, the footer or the cart.
 *
 *   node examples/catalogue.mjs                      # against the bundled demo shop
 *   crawl --handler examples/catalogue.mjs --items-only https://shop.example/catalogue/page-1.html
 *
 * Items go out as JSON lines: {"type":"item","url":…,"label":"product","data":{…}}.
 */
import { pathToFileURL } from 'node:url';

/** @type {import('polite-crawler').HandlerRouter} */
export const handle = {
  // Unlabelled pages: the seed, and each listing page it leads to.
  default(page, ctx) {
    const $ = page.$();
    $('li.product').each((_, li) => {
      const href = $(li).find('a').attr('href');
      if (href) ctx.enqueue(href, { label: 'product', userData: { category: $(li).attr('data-category') ?? null, listing: page.url } });
    });
    const next = $('a[rel=next]').attr('href');
    if (next) ctx.enqueue(next);
    return { follow: false };
  },

  // A product page: one item, with what the listing said about it.
  product(page, ctx) {
    const $ = page.$();
    const data = /** @type {{ category: string | null, listing: string }} */ (page.userData);
    ctx.push({
      name: $('h1').first().text().trim(),
      price: Number($('.price').first().text().replace(/[^0-9.]/g, '')),
      category: data.category,
      listing: data.listing,
    });
    return { follow: false };
  },
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { crawlDemo } = await import('./demo-web.mjs');
  process.exitCode = await crawlDemo(import.meta.url, 'shop.localhost', '/catalogue/page-1.html', ['--items-only']);
}
