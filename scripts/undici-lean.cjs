/**
 * What the bundle (scripts/bundle.js) gives the code for `undici`: the names
 * src/ imports from it, each from its own module. undici's index also loads
 * fetch, WebSocket, the cache and the mocks: a third of a crawl's start-up
 * CPU, for nothing it calls. test/scripts/undici-lean.test.ts keeps this
 * list in step with src/.
 *
 * ProxyAgent comes with Dispatcher's API methods (connect, request, …), as
 * undici's index installs them: its tunnels call `connect` on a Pool to the
 * proxy (src/fetch/proxy-tunnel.ts), and nothing else here calls them. Both
 * load when a crawl first uses a proxy, not at every start (~7 ms before the
 * first request, BENCHMARKS.md).
 */
'use strict';
let proxyAgent;

module.exports = {
  Agent: require('undici/lib/dispatcher/agent'),
  Client: require('undici/lib/dispatcher/client'),
  Pool: require('undici/lib/dispatcher/pool'),
  get ProxyAgent() {
    if (proxyAgent === undefined) {
      const Dispatcher = require('undici/lib/dispatcher/dispatcher');
      Object.assign(Dispatcher.prototype, require('undici/lib/api'));
      proxyAgent = require('undici/lib/dispatcher/proxy-agent');
    }
    return proxyAgent;
  },
  buildConnector: require('undici/lib/core/connect'),
  errors: require('undici/lib/core/errors'),
};
