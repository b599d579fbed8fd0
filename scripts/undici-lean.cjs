/**
 * What the bundle (scripts/bundle.js) gives the code for `undici`: the names
 * src/ imports from it, each from its own module, and Dispatcher's API
 * methods (connect, request, …) as undici's index installs them, which
 * ProxyAgent and Pool use. undici's index also loads fetch, WebSocket, the
 * cache and the mocks: a third of a crawl's start-up CPU, for nothing it
 * calls. test/scripts/undici-lean.test.ts keeps this list in step with src/.
 */
'use strict';
const Dispatcher = require('undici/lib/dispatcher/dispatcher');
Object.assign(Dispatcher.prototype, require('undici/lib/api'));

module.exports = {
  Agent: require('undici/lib/dispatcher/agent'),
  Client: require('undici/lib/dispatcher/client'),
  Pool: require('undici/lib/dispatcher/pool'),
  ProxyAgent: require('undici/lib/dispatcher/proxy-agent'),
  buildConnector: require('undici/lib/core/connect'),
  errors: require('undici/lib/core/errors'),
};
