/**
 * The report's own script, inlined after uPlot: draws the charts from the
 * embedded JSON and makes the failures table filterable. Plain ES2017, no
 * modules, no network. Each chart container gets `data-points` (the number
 * of x values it drew) once drawn, which the browser test reads.
 */
export const CLIENT_SCRIPT = String.raw`
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var duration = data.durationS > 0 ? data.durationS : 1;

  function pad(n) { return (n < 10 ? '0' : '') + n; }
  function elapsed(s) {
    if (s == null) return '–';
    if (duration < 60) return s.toFixed(duration < 10 ? 1 : 0) + ' s';
    var t = Math.round(s), h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60);
    return (h > 0 ? h + ':' + pad(m) : String(m)) + ':' + pad(t % 60);
  }
  function bytes(n) {
    if (n == null) return '–';
    var u = ['B', 'KiB', 'MiB', 'GiB'], i = 0;
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i === 0 ? Math.round(n) : n.toFixed(1)) + ' ' + u[i];
  }
  function ms(n) {
    if (n == null) return '–';
    return n < 1000 ? Math.round(n) + ' ms' : (n / 1000).toFixed(n < 10000 ? 2 : 1) + ' s';
  }
  function num(d) { return function (u, v) { return v == null ? '–' : v.toFixed(d); }; }

  var xAxis = { label: 'time since the first request', values: function (u, vals) { return vals.map(elapsed); }, size: 40 };
  var xSeries = { label: 'time', value: function (u, v) { return elapsed(v); } };

  function width(el) { return Math.max(280, el.clientWidth || 600); }

  function draw(el, opts, series) {
    opts.width = width(el);
    var plot = new uPlot(opts, series, el);
    el.setAttribute('data-points', String(series[0].length));
    el.__plot = plot;
    return plot;
  }

  var plots = [];
  var tp = data.throughput;
  var stepped = uPlot.paths && uPlot.paths.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined;
  var empty = tp.t.length === 0;

  var el = document.getElementById('chart-throughput');
  if (el && !empty) plots.push(draw(el, {
    height: 240,
    scales: { x: { time: false, range: [0, duration] }, bytes: {} },
    axes: [xAxis, { label: 'pages/s', size: 56 }, { scale: 'bytes', side: 1, label: 'bytes/s', size: 84, labelGap: 4, grid: { show: false }, values: function (u, v) { return v.map(bytes); } }],
    series: [xSeries,
      { label: 'pages/s', stroke: '#2563eb', fill: 'rgba(37,99,235,0.12)', width: 1.5, paths: stepped, value: num(2) },
      { label: 'bytes/s', scale: 'bytes', stroke: '#16a34a', width: 1, paths: stepped, value: function (u, v) { return bytes(v); } }]
  }, [tp.t, tp.pagesPerSecond, tp.bytesPerSecond]));

  el = document.getElementById('chart-load');
  if (el && !empty) plots.push(draw(el, {
    height: 240,
    scales: { x: { time: false, range: [0, duration] }, rate: {} },
    axes: [xAxis, { label: 'in flight', size: 50 }, { scale: 'rate', side: 1, label: 'per second', size: 56, grid: { show: false } }],
    series: [xSeries,
      { label: 'in flight (avg)', stroke: '#7c3aed', fill: 'rgba(124,58,237,0.10)', width: 1.5, paths: stepped, value: num(2) },
      { label: 'errors/s', scale: 'rate', stroke: '#dc2626', width: 1.5, paths: stepped, value: num(2) },
      { label: '4xx/s', scale: 'rate', stroke: '#f59e0b', width: 1, paths: stepped, value: num(2) },
      { label: '5xx/s', scale: 'rate', stroke: '#9f1239', width: 1, paths: stepped, value: num(2) },
      { label: '429/503/s', scale: 'rate', stroke: '#0891b2', width: 1, dash: [4, 3], paths: stepped, value: num(2) }]
  }, [tp.t, tp.inFlight, tp.errorsPerSecond, tp.http4xxPerSecond, tp.http5xxPerSecond, tp.throttledPerSecond]));

  data.charts.forEach(function (c, i) {
    var host = document.getElementById('chart-host-' + i);
    if (!host) return;
    var floor = function (v) { return v == null ? null : Math.max(1, v); };
    var conf = c.t.map(function () { return c.configuredMs == null ? null : Math.max(1, c.configuredMs); });
    var perSecond = c.starts.map(function (n) { return n * 1000 / c.widthMs; });
    host.setAttribute('data-pauses', String(c.pauses.length));
    host.setAttribute('data-robots', String(c.robots.length));
    plots.push(draw(host, {
      height: 190,
      legend: { show: false },
      hooks: { drawClear: [function (u) { marks(u, c); }] },
      scales: { x: { time: false, range: [0, duration] }, y: { distr: 3 }, rate: { range: function (u, lo, hi) { return [0, Math.max(1, hi * 1.1)]; } } },
      axes: [xAxis, { label: 'gap between starts', size: 62, values: function (u, v) { return v.map(ms); } }, { scale: 'rate', side: 1, label: 'starts/s', size: 46, grid: { show: false } }],
      series: [xSeries,
        { label: 'starts/s', scale: 'rate', stroke: 'rgba(100,116,139,0.45)', fill: 'rgba(100,116,139,0.10)', width: 1, paths: stepped, value: num(2) },
        { label: 'shortest gap', stroke: '#2563eb', width: 1.5, points: { show: true, size: 4 }, value: function (u, v) { return ms(v); } },
        { label: 'longest gap', stroke: '#f97316', width: 1, points: { show: true, size: 3 }, value: function (u, v) { return ms(v); } },
        { label: 'configured gap', stroke: '#dc2626', width: 1.5, dash: [6, 4], points: { show: false }, value: function (u, v) { return ms(v); } }]
    }, [c.t, perSecond, c.minGapMs.map(floor), c.maxGapMs.map(floor), conf]));
  });

  // A host's pauses after 429/503 (shaded, from the records' throttle events) and its robots.txt requests (ticks).
  function marks(u, c) {
    var ctx = u.ctx, b = u.bbox, dpr = b.width / Math.max(1, u.width);
    ctx.save();
    ctx.beginPath();
    ctx.rect(b.left, b.top, b.width, b.height);
    ctx.clip();
    ctx.fillStyle = 'rgba(8,145,178,0.3)';
    c.pauses.forEach(function (p) {
      var x0 = u.valToPos(p[0], 'x', true), x1 = u.valToPos(p[1], 'x', true);
      ctx.fillRect(x0, b.top, Math.max(2 * dpr, x1 - x0), b.height);
    });
    ctx.fillStyle = '#9333ea';
    c.robots.forEach(function (r) {
      // A request at the very start stays inside the plot.
      var x = Math.max(b.left + dpr, u.valToPos(r[0], 'x', true));
      ctx.fillRect(x - dpr, b.top, 2 * dpr, b.height);
    });
    ctx.restore();
  }

  var resizeTimer = null;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      plots.forEach(function (p) { p.setSize({ width: width(p.root.parentNode), height: p.height }); });
    }, 150);
  });

  // Failures: a text filter over URL, host, kind and message, and a kind menu.
  var filter = document.getElementById('failure-filter');
  var kind = document.getElementById('failure-kind');
  var count = document.getElementById('failure-count');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#failures tbody tr'));
  function apply() {
    var words = (filter.value || '').toLowerCase().split(/\s+/).filter(Boolean);
    var k = kind.value;
    var shown = 0;
    rows.forEach(function (tr) {
      var text = tr.getAttribute('data-search');
      var ok = (k === '' || tr.getAttribute('data-kind') === k) && words.every(function (w) { return text.indexOf(w) !== -1; });
      tr.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = shown.toLocaleString('en-US') + ' of ' + rows.length.toLocaleString('en-US') + ' rows shown';
  }
  if (filter && kind && count) {
    filter.addEventListener('input', apply);
    kind.addEventListener('change', apply);
    apply();
  }
  document.documentElement.setAttribute('data-ready', '1');
})();
`;
