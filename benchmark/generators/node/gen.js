#!/usr/bin/env node
// ceiling's second generator: Node.js on the `ws` package, sharing no code
// with the server or with `ceiling load`. It keeps the GENERATOR contract
// (docs/ARCHITECTURE.md, "The generator contract"; docs/generators.md) for
// --scenario echo and --scenario fanout, closed loop only.
//
// Design, in the order a run goes:
//   1. Flags: every flag the harness appends is parsed and checked first; a
//      bad one (or one this generator does not implement: --rate, --drop,
//      other payloads, a second --url for echo) exits 2 naming it, before
//      any module loads or any connection opens. Fanout takes --url N times,
//      server i being the i-th, as load/scenario/fanout does.
//   2. Fanout preflight: a subscriber on every server subscribes to
//      ceiling-preflight, one signed event is published through each server
//      in turn, and every subscriber must hear each within 5 s (else exit 1,
//      no load applied: a wrong app, or --url servers that are no cluster).
//      Connect --connections sockets, at most --connect-concurrency at once
//      (the harness always asks for bounded, 32). Fanout subscriber i goes
//      to server i mod N and waits for connection_established and
//      subscription_succeeded on channel ceiling-((i div N) mod --channels).
//   3. The window, on process.hrtime.bigint(): open (all connected), start =
//      open + --warmup, end = start + --duration, drain = end + 2 s. At
//      start the --measure-marker file is created and process.cpuUsage()
//      read; it is read again at end.
//   4. Load, closed loop. Echo: per connection, --batch frames of
//      --record-size bytes written in one corked write, await every reply,
//      repeat; each reply's latency is from its batch's send time. Fanout:
//      --publishers REST publishers each POST one signed request of --batch
//      events, publisher p's k-th through server (p + k) mod N, await the
//      answer, repeat; every event carries its publish time, so each
//      subscriber delivery is timed publish -> deliver, and is owed to its
//      channel's subscribers on each server still connected as it is sent
//      (summary.fanout.servers counts each server's share). A sample
//      counts when its batch or event was sent inside [start, end); replies
//      and deliveries are awaited until drain (fanout counts those
//      arriving 250 ms past drain as late).
//   5. load.Result (load/result.go), schema_version 2, to --json; exit 0,
//      or 1 when nothing could be measured (a failed preflight, no
//      connection, nothing back).
//
// Percentiles come from a real HdrHistogram (hdr-histogram-js, 3
// significant digits), never from averages; --self-test checks them against
// a sorted reference.
'use strict';

const fs = require('fs');
const http = require('http');
const https = require('https');
const crypto = require('crypto');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const SCHEMA_VERSION = 2;
const DRAIN_NS = 2e9; // load.Drain
const FANOUT_LATE_NS = 250e6; // load/scenario/fanout: fanoutLate
const FANOUT_EVENT = 'ceiling-load';
const PREFLIGHT_DELIVERY_MS = 5000; // load/scenario/fanout: preflightDeliveryTimeout
const MAX_BATCH_BYTES = 64 << 20;

const mono = () => Number(process.hrtime.bigint());
const sleepUntil = (t) => new Promise((r) => setTimeout(r, Math.max(0, (t - mono()) / 1e6)));

// ---- flags ---------------------------------------------------------------

// kind: int | dur | str | bool | enum. only: the scenario that reads it.
const FLAGS = {
  scenario: { kind: 'enum', def: 'echo', values: ['echo', 'fanout'] },
  url: { kind: 'str', def: '', repeat: true }, // fanout: once per server
  connections: { kind: 'int', def: 16, min: 1 },
  batch: { kind: 'int', def: 1, min: 1 },
  'record-size': { kind: 'int', def: 256, min: 1, max: 16 << 20 },
  duration: { kind: 'dur', def: '10s', min: 1 },
  warmup: { kind: 'dur', def: '2s', min: 0 },
  'connect-strategy': { kind: 'enum', def: 'bounded', values: ['bounded', 'all-at-once'] },
  'connect-concurrency': { kind: 'int', def: 32, min: 1 },
  'measure-marker': { kind: 'str', def: '' },
  json: { kind: 'str', def: '' },
  quiet: { kind: 'bool', def: false },
  rate: { kind: 'int', def: 0, min: 0, max: 0, why: 'open loop is not implemented by the Node generator' },
  payload: { kind: 'enum', def: 'constant', values: ['constant'] },
  'app-id': { kind: 'str', def: 'app-id', only: 'fanout' },
  key: { kind: 'str', def: 'app-key', only: 'fanout' },
  secret: { kind: 'str', def: 'app-secret', only: 'fanout' },
  channels: { kind: 'int', def: 1, min: 1, only: 'fanout' },
  publishers: { kind: 'int', def: 1, min: 1, only: 'fanout' },
  'self-test': { kind: 'bool', def: false },
};
// Flags of `ceiling load` this generator refuses by name, rather than as unknown.
const UNSUPPORTED = ['drop', 'drop-probe', 'max-inflight', 'payload-seed', 'connect-stagger-ms',
  'eager-reads', 'io', 'scenario-file', 'stream', 'keys'];

class UsageError extends Error {}

function parseDuration(s) {
  // A Go duration: 1.5s, 300ms, 1m30s, 2h, 10us, 0.
  if (s === '0') return 0;
  const unit = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let ns = 0, m;
  if (!s) return NaN;
  for (re.lastIndex = 0; re.lastIndex < s.length;) {
    if (!(m = re.exec(s))) return NaN;
    ns += parseFloat(m[1]) * unit[m[2]];
  }
  return Math.round(ns);
}

function parseFlags(argv) {
  const v = {}, given = new Set();
  for (const [k, f] of Object.entries(FLAGS)) v[k] = f.kind === 'dur' ? parseDuration(f.def) : f.def;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!/^--?[a-z]/.test(a)) throw new UsageError(`unexpected argument ${JSON.stringify(a)}`);
    let [name, val] = a.replace(/^--?/, '').split(/=(.*)/s);
    if (UNSUPPORTED.includes(name)) throw new UsageError(`--${name}: not supported by the Node generator (docs/generators.md)`);
    const f = FLAGS[name];
    if (!f) throw new UsageError(`unknown flag --${name}`);
    if (given.has(name) && !f.repeat) throw new UsageError(`--${name} given twice`);
    if (f.kind === 'bool') {
      if (val !== undefined && val !== 'true' && val !== 'false') throw new UsageError(`--${name}=${val}: want true or false`);
      v[name] = val !== 'false';
    } else {
      if (val === undefined) {
        if (i + 1 >= argv.length) throw new UsageError(`--${name} needs a value`);
        val = argv[++i];
      }
      if (f.kind === 'int') {
        if (!/^\d+$/.test(val)) throw new UsageError(`--${name} ${val}: want a whole number`);
        v[name] = Number(val);
      } else if (f.kind === 'dur') {
        v[name] = parseDuration(val);
        if (Number.isNaN(v[name])) throw new UsageError(`--${name} ${val}: want a duration such as 10s or 500ms`);
      } else if (f.kind === 'enum' && !f.values.includes(val)) {
        throw new UsageError(`--${name} ${val}: want one of ${f.values.join(', ')}${name === 'payload' ? ' (the Node generator sends constant payloads only)' : ''}`);
      } else if (f.repeat) {
        if (!given.has(name)) v[name + 's'] = [];
        v[name + 's'].push(val);
        if (!given.has(name)) v[name] = val; // the first
      } else v[name] = val;
    }
    given.add(name);
  }
  for (const [name, f] of Object.entries(FLAGS)) {
    const x = v[name];
    if (f.min !== undefined && x < f.min) throw new UsageError(`--${name} ${x}: must be at least ${f.min}`);
    if (f.max !== undefined && x > f.max) throw new UsageError(`--${name} ${x}: ${f.why || 'must be at most ' + f.max}`);
    if (f.only && given.has(name) && v.scenario !== f.only) throw new UsageError(`--${name} is for --scenario ${f.only} only`);
  }
  if (v.batch * v['record-size'] > MAX_BATCH_BYTES) throw new UsageError(`--batch ${v.batch} x --record-size ${v['record-size']}: over 64 MiB per batch`);
  if (given.has('connect-concurrency') && v['connect-strategy'] !== 'bounded') throw new UsageError('--connect-concurrency is read only with --connect-strategy bounded');
  if (v.scenario === 'fanout') {
    if (!v['app-id'] || !v.key || !v.secret) throw new UsageError('--app-id, --key and --secret must not be empty for --scenario fanout');
    if (v.channels > v.connections) throw new UsageError(`--channels ${v.channels} exceeds --connections ${v.connections}: a channel without subscribers has nothing to deliver`);
  }
  if (!given.has('url')) v.urls = [v.scenario === 'echo' ? 'ws://127.0.0.1:6001/echo' : 'ws://127.0.0.1:6001'];
  v.url = v.urls[0];
  if (v.urls.length > 1 && v.scenario !== 'fanout') throw new UsageError(`--url given ${v.urls.length} times: --scenario ${v.scenario} drives one server`);
  for (const u of v.urls) if (!/^wss?:\/\/[^/]/.test(u)) throw new UsageError(`--url ${u}: want ws://host:port[/path]`);
  return v;
}

// ---- measurement -----------------------------------------------------------

let hdr, WebSocket;

const newHistogram = () => hdr.build({ bitBucketSize: 'packed', numberOfSignificantValueDigits: 3, autoResize: true, useWebAssembly: false });

// latency is load.Latency: percentiles of an HdrHistogram, all zero when empty.
function latency(h) {
  if (h.totalCount === 0) return { count: 0, min: 0, mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 };
  const p = (q) => h.getValueAtPercentile(q);
  return { count: h.totalCount, min: h.minNonZeroValue, mean: h.mean, p50: p(50), p90: p(90), p99: p(99), p999: p(99.9), max: h.maxValue };
}

// A Recorder as load.Recorder: what one scenario measured inside the window.
function recorder() {
  return {
    hist: newHistogram(), ops: 0, ok: 0, messages: 0, bytes: 0, dropped: 0, late: 0, errors: {},
    error(reason, n = 1) { this.errors[reason] = (this.errors[reason] || 0) + n; },
  };
}

// errReason maps a socket or HTTP error to load.Reason's stable keys.
function errReason(err) {
  if (!err) return 'other';
  if (err.name === 'TimeoutError' || err.name === 'AbortError' || err.code === 'ETIMEDOUT') return 'timeout';
  if (/^E[A-Z]+$/.test(err.code || '')) return err.code;
  const m = /Unexpected server response: (\d+)/.exec(err.message || '');
  return m ? 'handshake_' + m[1] : 'other';
}

// ---- connecting --------------------------------------------------------------

// connectAll opens n connections with at most `limit` in flight; it returns
// them (null where one failed) and counts failures in rec.
async function connectAll(n, limit, open, rec) {
  const conns = new Array(n).fill(null);
  let next = 0;
  async function worker() {
    while (next < n) {
      const i = next++;
      try { conns[i] = await open(i); } catch (e) { rec.error('connect_' + errReason(e)); }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
  return conns;
}

function dial(url) {
  return new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: 30000 });
}

// watch counts a connection's unplanned end: close_<code> for a close
// frame, else the socket error's reason or EOF; dropped (and onDrop called)
// when inside the window.
function watch(ws, w, rec, isDone, onDrop) {
  let lastErr = null;
  ws.on('error', (e) => { lastErr = e; });
  ws.on('close', (code) => {
    if (isDone()) return;
    rec.error(code !== 1005 && code !== 1006 ? 'close_' + code : lastErr ? errReason(lastErr) : 'EOF');
    if (mono() < w.end) {
      rec.dropped++;
      if (onDrop) onDrop();
    }
  });
}

// ---- echo --------------------------------------------------------------------

function echo(cfg) {
  const rec = recorder();
  const payload = Buffer.alloc(cfg['record-size'], 'x');
  let conns = [];
  const waiting = new Set(); // connections awaiting replies
  let finished = false;
  let allDone;
  const done = new Promise((r) => { allDone = r; });

  function run(ws, w) {
    let t0 = 0, pending = 0, measured = false;
    const settle = () => { waiting.delete(ws); if (waiting.size === 0) allDone(); };
    function sendBatch() {
      const now = mono();
      if (now >= w.end) return settle();
      t0 = now; measured = now >= w.start; pending = cfg.batch;
      // One write per batch, as `ceiling load` frames a batch into one write.
      ws._socket.cork();
      for (let j = 0; j < cfg.batch; j++) ws.send(payload, { binary: false });
      ws._socket.uncork();
    }
    ws.on('message', (data) => {
      const now = mono();
      if (data.length !== cfg['record-size']) rec.error('echo_size_mismatch');
      else if (measured) { rec.hist.recordValue(now - t0); rec.messages++; rec.bytes += data.length; }
      if (--pending === 0) {
        if (measured) { rec.ops++; rec.ok++; }
        sendBatch();
      }
    });
    watch(ws, w, rec, () => finished);
    ws.on('close', settle);
    waiting.add(ws);
    sendBatch();
  }

  return {
    rec,
    async connect() {
      conns = await connectAll(cfg.connections, cfg.limit, () => new Promise((resolve, reject) => {
        const ws = dial(cfg.url);
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      }), rec);
      return conns.filter(Boolean).length;
    },
    start(w) { for (const ws of conns) if (ws) run(ws, w); if (waiting.size === 0) allDone(); },
    async finish(w) {
      await Promise.race([done, sleepUntil(w.drain)]);
      finished = true;
      if (waiting.size > 0) rec.error('no_reply_by_drain', waiting.size);
      for (const ws of conns) if (ws) ws.terminate();
    },
    blocks() { return {}; },
    params() { return { io: 'node-ws' }; },
  };
}

// ---- fanout --------------------------------------------------------------------

// sign is Pusher's REST signature (pusher/sign.go): the query's auth_*
// parameters and body_md5, sorted by key, signed as "POST\nPATH\nQUERY"
// with HMAC-SHA256 of the secret.
function sign(method, pth, key, secret, body, ts) {
  const q = { auth_key: key, auth_timestamp: String(ts), auth_version: '1.0' };
  if (body.length > 0) q.body_md5 = crypto.createHash('md5').update(body).digest('hex');
  const raw = Object.keys(q).sort().map((k) => `${k}=${q[k]}`).join('&');
  q.auth_signature = crypto.createHmac('sha256', secret).update(`${method.toUpperCase()}\n${pth}\n${raw}`).digest('hex');
  return Object.keys(q).map((k) => `${k}=${encodeURIComponent(q[k])}`).join('&');
}

// bodyReason is a 2xx body that still says the request failed (as
// pusherclient.bodyError): "code" >= 400 or a non-empty "error".
function bodyReason(text) {
  let o;
  try { o = JSON.parse(text); } catch { return ''; }
  if (!o || typeof o !== 'object' || Array.isArray(o)) return '';
  if (typeof o.code === 'number' && o.code >= 400) return 'body_code_' + Math.trunc(o.code);
  const e = o.error;
  const empty = e === undefined || e === null || e === '' || e === false ||
    (typeof e === 'object' && Object.keys(e).length === 0);
  return empty ? '' : 'body_error';
}

// fanout is load/scenario/fanout over N = len(--url) servers of one cluster
// (N = 1: one server). Subscriber i is on server i mod N, channel
// ceiling-((i div N) mod --channels); publisher p's k-th request goes
// through server (p + k) mod N. Each event is owed to its channel's
// subscribers on each server still connected when it is published
// (live counts them, by server and channel); deliveries are counted by the
// receiving subscriber's server.
function fanout(cfg) {
  const rec = recorder(); // deliveries (subscribers) and publish requests
  const pubHist = newHistogram();
  const N = cfg.urls.length;
  const servers = cfg.urls.map((u) => {
    const base = new URL(u.replace(/^ws/, 'http'));
    const client = base.protocol === 'https:' ? https : http;
    return {
      url: u, base, client,
      prefix: base.pathname.replace(/\/+$/, ''),
      wsURL: u.replace(/\/+$/, '') + `/app/${cfg.key}?protocol=7`,
      agent: new client.Agent({ keepAlive: true, maxSockets: cfg.publishers }),
      connections: 0, dropped: 0, publishes: 0, failures: 0, expected: 0, delivered: 0,
    };
  });
  const channels = Array.from({ length: cfg.channels }, (_, c) => `ceiling-${c}`);
  const nch = channels.length;
  const live = new Array(N * nch).fill(0); // live[s*nch+c]: channel c's subscribers on server s still connected
  const serverOf = (i) => i % N;
  const channelOf = (i) => Math.floor(i / N) % nch;
  const st = { events: 0, rateLimited: 0, httpFailures: {} };
  const on = (s) => (N === 1 ? '' : ` on ${servers[s].url}`);
  let conns = [];
  let finished = false;

  // handshake opens a subscriber on server s and subscribes it to ch; it
  // rejects on an error, a pusher:error or the deadline (ms since the epoch).
  function handshake(s, ch, deadline) {
    return new Promise((resolve, reject) => {
      const ws = dial(servers[s].wsURL);
      const timer = setTimeout(() => { ws.terminate(); reject(Object.assign(new Error('subscribe'), { code: 'ETIMEDOUT' })); }, Math.max(1, deadline - Date.now()));
      const fail = (e) => { clearTimeout(timer); ws.terminate(); reject(e); };
      ws.on('error', fail);
      ws.on('message', function handshaking(data) {
        let m;
        try { m = JSON.parse(data); } catch { return; }
        if (m.event === 'pusher:error') fail(new Error('pusher:error ' + JSON.stringify(m.data)));
        else if (m.event === 'pusher:connection_established') ws.send(JSON.stringify({ event: 'pusher:subscribe', data: { channel: ch } }));
        else if (m.event === 'pusher_internal:subscription_succeeded' && m.channel === ch) {
          clearTimeout(timer);
          ws.off('error', fail);
          ws.off('message', handshaking);
          ws.on('error', () => {}); // until watched: a close follows
          resolve(ws);
        }
      });
    });
  }

  const subscribe = (i) => handshake(serverOf(i), channels[channelOf(i)], Date.now() + 30000);

  // deliver accounts one message a subscriber of server s received at now.
  function deliver(ws, s, data, now, w) {
    let m;
    try { m = JSON.parse(data); } catch { return; }
    if (m.event === 'pusher:ping') return ws.send('{"event":"pusher:pong","data":{}}');
    if (m.event === 'pusher:error') return rec.error('pusher_error');
    if (m.event !== FANOUT_EVENT) return;
    let ts;
    try { ts = JSON.parse(m.data).ceiling_ts; } catch { /* counted below */ }
    if (typeof ts !== 'number') return rec.error('delivery_without_timestamp');
    if (ts < w.start || ts >= w.end) return;
    if (now >= w.drain) { rec.late++; return; }
    rec.hist.recordValue(now - ts);
    rec.messages++;
    rec.bytes += JSON.stringify(m.data).length - 2; // the data as escaped on the wire
    servers[s].delivered++;
  }

  // post sends a signed request through server s's REST API; it resolves
  // to a failure reason ('' when accepted) and the answer's body.
  function post(s, pth, body, deadline) {
    const sv = servers[s];
    const query = sign('POST', sv.prefix + pth, cfg.key, cfg.secret, body, Math.floor(Date.now() / 1000));
    return new Promise((resolve) => {
      const req = sv.client.request({
        hostname: sv.base.hostname, port: sv.base.port, path: `${sv.prefix}${pth}?${query}`, method: 'POST', agent: sv.agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': body.length },
        signal: AbortSignal.timeout(Math.max(1, Math.ceil((deadline - mono()) / 1e6))),
      }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          if (res.statusCode < 200 || res.statusCode > 299) resolve({ reason: 'status_' + res.statusCode, status: res.statusCode, text });
          else resolve({ reason: bodyReason(text), status: res.statusCode, text });
        });
        res.on('error', (e) => resolve({ reason: errReason(e), err: e }));
      });
      req.on('error', (e) => resolve({ reason: errReason(e), err: e }));
      req.end(body);
    });
  }

  // preflight proves delivery end to end before any load, as
  // load/scenario/fanout's Preflight: a subscriber on every server, one
  // signed event published through each server in turn, and every
  // subscriber must receive each within 5 s. It resolves to '' or why not.
  async function preflight() {
    const ch = 'ceiling-preflight';
    const deadline = Date.now() + 10000;
    const subs = [];
    const heard = []; // per subscriber: nonces received, and the waiter
    try {
      for (let s = 0; s < N; s++) {
        let ws;
        try { ws = await handshake(s, ch, deadline); } catch (e) {
          const key = e.code === 'ETIMEDOUT' || /^pusher:error/.test(e.message) ? ' (check --key)' : '';
          return `preflight subscriber${on(s)}: ${e.message || e.code}${key}`;
        }
        subs.push(ws);
        const h = { nonces: new Set(), wake: null, err: '' };
        heard.push(h);
        const poke = () => { if (h.wake) h.wake(); };
        ws.on('message', (data) => {
          let m;
          try { m = JSON.parse(data); } catch { return; }
          if (m.event === 'pusher:error') h.err = 'pusher:error ' + JSON.stringify(m.data);
          else if (m.event === FANOUT_EVENT && m.channel === ch) {
            const n = /"preflight"\s*:\s*(\d+)/.exec(typeof m.data === 'string' ? m.data : JSON.stringify(m.data));
            if (n) h.nonces.add(n[1]);
          } else return;
          poke();
        });
        ws.on('close', () => { if (!h.err) h.err = 'EOF'; poke(); });
      }
      for (let via = 0; via < N; via++) {
        const nonce = String(process.hrtime.bigint());
        const body = Buffer.from(JSON.stringify({ name: FANOUT_EVENT, channel: ch, data: `{"preflight":${nonce}}` }));
        const r = await post(via, `/apps/${cfg['app-id']}/events`, body, mono() + Math.max(1, deadline - Date.now()) * 1e6);
        if (r.reason) {
          const what = r.err ? `pusher REST: ${r.err.message || r.reason}`
            : r.status >= 200 && r.status <= 299 ? `pusher REST: HTTP ${r.status} with an error in the body: ${r.text.trim()}`
              : `pusher REST: HTTP ${r.status}: ${r.text.trim()}`;
          const creds = !r.err && (r.reason.startsWith('body_') || [401, 403, 404].includes(r.status));
          return `${what}${on(via)}${creds ? ' (check --app-id, --key and --secret)' : ''}`;
        }
        for (let s = 0; s < N; s++) {
          const h = heard[s];
          const until = Date.now() + PREFLIGHT_DELIVERY_MS;
          while (!h.nonces.has(nonce) && !h.err && Date.now() < until) {
            await new Promise((resolve) => {
              const t = setTimeout(resolve, until - Date.now());
              h.wake = () => { clearTimeout(t); resolve(); };
            });
            h.wake = null;
          }
          if (h.nonces.has(nonce)) continue;
          const hint = N > 1
            ? `published through ${servers[via].url}, not heard by the subscriber on ${servers[s].url}: are the --url servers nodes of one cluster? (check --app-id too)`
            : 'the server accepts publishes it does not deliver (check --app-id, and that REST and WebSocket reach the same server)';
          return `nothing delivered: the signed publish to ${ch} was accepted, but the event did not reach its subscriber within ${PREFLIGHT_DELIVERY_MS / 1000}s (${h.err || 'timeout'}): ${hint}`;
        }
      }
      return '';
    } finally {
      for (const ws of subs) ws.terminate();
    }
  }

  // publisher p: closed loop, one request of --batch events at a time, the
  // k-th through server (p + k) mod N.
  async function publisher(p, w) {
    const data = 'x'.repeat(cfg['record-size']);
    const scratch = new Array(N);
    let seq = p * 2 ** 32;
    for (let k = 0; ; k++) {
      const ts = mono();
      if (ts >= w.end) return;
      const via = (p + k) % N;
      scratch.fill(0);
      const events = [];
      for (let j = 0; j < cfg.batch; j++) {
        const c = (p + (k * cfg.batch + j) * cfg.publishers) % nch;
        for (let s = 0; s < N; s++) scratch[s] += live[s * nch + c];
        events.push({ name: FANOUT_EVENT, channel: channels[c], data: `{"ceiling_ts":${ts},"ceiling_seq":${++seq},"payload":"${data}"}` });
      }
      const single = cfg.batch === 1;
      const body = Buffer.from(JSON.stringify(single ? events[0] : { batch: events }));
      const { reason } = await post(via, `/apps/${cfg['app-id']}/${single ? 'events' : 'batch_events'}`, body, w.drain);
      const now = mono();
      if (ts < w.start) continue;
      rec.ops++;
      if (reason) {
        if (reason === 'status_429') st.rateLimited++;
        st.httpFailures[reason] = (st.httpFailures[reason] || 0) + 1;
        servers[via].failures++;
        rec.error('publish_' + reason);
        continue;
      }
      rec.ok++;
      pubHist.recordValue(now - ts);
      st.events += cfg.batch;
      servers[via].publishes++;
      for (let s = 0; s < N; s++) servers[s].expected += scratch[s];
    }
  }

  const closeAgents = () => { for (const sv of servers) sv.agent.destroy(); };
  let publishing;
  return {
    rec,
    preflight,
    async connect() {
      conns = await connectAll(cfg.connections, cfg.limit, subscribe, rec);
      return conns.filter(Boolean).length;
    },
    start(w) {
      conns.forEach((ws, i) => {
        if (!ws) return;
        const s = serverOf(i), slot = s * nch + channelOf(i);
        servers[s].connections++;
        if (ws.readyState !== WebSocket.OPEN) { // lost before the window: owed nothing
          rec.error('EOF');
          rec.dropped++;
          servers[s].dropped++;
          return;
        }
        live[slot]++;
        let gone = false;
        const lost = () => { if (!gone) { gone = true; live[slot]--; } };
        ws.on('close', lost);
        ws.on('error', lost);
        ws.on('message', (data) => deliver(ws, s, data, mono(), w));
        watch(ws, w, rec, () => finished || mono() >= w.drain, () => { servers[s].dropped++; });
      });
      publishing = Promise.all(Array.from({ length: cfg.publishers }, (_, p) => publisher(p, w)));
    },
    async finish(w) {
      await publishing;
      await sleepUntil(w.drain + FANOUT_LATE_NS);
      finished = true;
      for (const ws of conns) if (ws) ws.terminate();
      closeAgents();
    },
    abort() { closeAgents(); },
    blocks() {
      const expected = servers.reduce((a, sv) => a + sv.expected, 0);
      const duplicates = Math.max(0, rec.messages - expected);
      return {
        fanout: {
          events_published: st.events, deliveries_expected: expected, delivered: rec.messages, duplicates,
          delivered_pct: expected > 0 ? (100 * (rec.messages - duplicates)) / expected : 0,
          late: rec.late, grace_ns: DRAIN_NS, http_failures: st.httpFailures, rate_limited_429: st.rateLimited,
          publish_latency_ns: latency(pubHist),
          servers: servers.map((sv) => ({
            url: sv.url, connections: sv.connections, dropped: sv.dropped,
            publishes: sv.publishes, publish_failures: sv.failures,
            expected: sv.expected, delivered: sv.delivered,
            delivered_pct: sv.expected > 0 ? (100 * Math.min(sv.delivered, sv.expected)) / sv.expected : null,
          })),
        },
      };
    },
    params() { return { app_id: cfg['app-id'], key: cfg.key, channels: cfg.channels, publishers: cfg.publishers }; },
  };
}

// ---- the result document ---------------------------------------------------------

function gitRef() {
  try {
    const dir = __dirname;
    const head = execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    return dirty ? head + '-dirty' : head;
  } catch { return 'unknown'; }
}

function affinity() {
  try {
    const list = /Cpus_allowed_list:\s*(\S+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1];
    return list.split(',').flatMap((r) => {
      const [a, b = a] = r.split('-').map(Number);
      return Array.from({ length: b - a + 1 }, (_, i) => a + i);
    });
  } catch { return []; }
}

function meta(argv, started) {
  const cpus = os.cpus();
  const wsVersion = require('ws/package.json').version;
  const redacted = argv.map((a, i) => (argv[i - 1] === '--secret' ? '[redacted]' : a.replace(/^(--?secret=).*/s, '$1[redacted]')));
  return {
    command: [process.argv0, path.basename(__filename), ...redacted],
    git_ref: gitRef(),
    version: `node-ws (node ${process.version}, ws ${wsVersion})`,
    started_at: started.toISOString(),
    hardware: {
      cpu_model: cpus.length ? cpus[0].model : '', logical_cpus: cpus.length, memory_bytes: os.totalmem(),
      kernel: os.release(), os: process.platform, arch: { x64: 'amd64', ia32: '386' }[process.arch] || process.arch,
      go_version: '', gomaxprocs: 1, // one JavaScript thread carries the load
      cpu_affinity: affinity(),
    },
  };
}

function writeAtomic(file, text) {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

// ---- self-test ---------------------------------------------------------------------

// selfTest checks the histogram's percentiles against a sorted reference:
// every reported percentile within 0.1% (3 significant digits) of the exact one.
function selfTest() {
  const h = newHistogram();
  const xs = [];
  let seed = 1;
  for (let i = 0; i < 100000; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const x = 1000 + Math.floor(Math.exp((seed / 2 ** 31) * 16)); // 1 µs .. 9 ms, log-spread
    xs.push(x);
    h.recordValue(x);
  }
  xs.sort((a, b) => a - b);
  const got = latency(h);
  const exact = (q) => xs[Math.max(0, Math.ceil((q / 100) * xs.length) - 1)];
  const bad = [];
  for (const [k, q] of [['p50', 50], ['p90', 90], ['p99', 99], ['p999', 99.9], ['max', 100]]) {
    const rel = Math.abs(got[k] - exact(q)) / exact(q);
    if (rel > 0.001) bad.push(`${k}: histogram ${got[k]}, exact ${exact(q)}`);
  }
  if (got.count !== xs.length || Math.abs(got.min - xs[0]) / xs[0] > 0.001) bad.push(`count/min: ${got.count}/${got.min}`);
  if (bad.length) { console.error('self-test FAILED:\n  ' + bad.join('\n  ')); return 1; }
  console.error(`self-test ok: ${xs.length} samples, p50/p99/p999 within 0.1% of the sorted reference`);
  return 0;
}

// ---- main --------------------------------------------------------------------------

async function main() {
  const argv = process.argv.slice(2);
  let cfg;
  try { cfg = parseFlags(argv); } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`node generator: ${e.message}`);
    return 2;
  }
  try { WebSocket = require('ws'); hdr = require('hdr-histogram-js'); } catch (e) {
    console.error(`node generator: ${e.message}\n(install the dependencies: npm ci --prefix ${path.relative(process.cwd(), __dirname) || '.'})`);
    return 1;
  }
  if (cfg['self-test']) return selfTest();
  cfg.limit = cfg['connect-strategy'] === 'bounded' ? cfg['connect-concurrency'] : cfg.connections;
  const say = (s) => { if (!cfg.quiet) console.error(s); };
  const marker = cfg['measure-marker'];
  if (marker) fs.rmSync(marker, { force: true });
  const started = new Date();
  const m = meta(argv, started);
  const sc = cfg.scenario === 'echo' ? echo(cfg) : fanout(cfg);

  let failure = '', cpu = null, open = 0;
  if (sc.preflight) {
    const why = await sc.preflight();
    if (why) {
      failure = `preflight against ${cfg.url} failed, no load applied: ${why}`;
      sc.rec.error('preflight');
      sc.abort();
    }
  }
  if (!failure) {
    say(`connecting ${cfg.connections} to ${cfg.urls.join(', ')}`);
    open = await sc.connect();
    if (open === 0) failure = 'no connection opened';
  }
  if (!failure) {
    const t = mono();
    const w = { open: t, start: t + cfg.warmup, end: t + cfg.warmup + cfg.duration, drain: t + cfg.warmup + cfg.duration + DRAIN_NS };
    say(`${open} open; warm-up ${cfg.warmup / 1e9}s, window ${cfg.duration / 1e9}s`);
    sc.start(w);
    await sleepUntil(w.start);
    const c0 = process.cpuUsage(), t0 = mono();
    if (marker) writeAtomic(marker, '');
    await sleepUntil(w.end);
    const c1 = process.cpuUsage(c0), t1 = mono();
    cpu = { user: c1.user / 1e6, system: c1.system / 1e6, window: (t1 - t0) / 1e9 };
    await sc.finish(w);
    if (sc.rec.messages === 0) failure = `nothing arrived: no reply or delivery to ${sc.rec.ops} operations in the window`;
  }

  const r = sc.rec;
  const secs = cfg.duration / 1e9;
  const errors = Object.values(r.errors).reduce((a, b) => a + b, 0);
  const zero = latency(newHistogram());
  const config = {
    scenario: cfg.scenario, url: cfg.url, ...(cfg.urls.length > 1 ? { urls: cfg.urls } : {}), connections: cfg.connections, batch: cfg.batch, record_size: cfg['record-size'],
    duration_ns: cfg.duration, warmup_ns: cfg.warmup, rate: 0, max_inflight: 0, payload: 'constant', payload_seed: 0,
    connect_strategy: cfg['connect-strategy'], connect_concurrency: cfg.limit, connect_stagger_ms: 0,
    params: sc.params(),
  };
  if (marker) config.measure_marker = marker;
  const res = {
    schema_version: SCHEMA_VERSION,
    meta: m,
    config,
    summary: {
      scenario: cfg.scenario, mode: 'closed', requested_ops_per_s: null,
      attempted_ops_per_s: r.ops / secs, achieved_ops_per_s: r.ok / secs,
      throughput_per_s: r.messages / secs, bytes_per_s: r.bytes / secs, messages: r.messages,
      measured_ns: failure && open === 0 ? 0 : cfg.duration,
      errors, errors_by_reason: r.errors, ...(failure ? { failure } : {}),
      dropped: r.dropped, reconnects: 0, saturated: false,
      connections_requested: cfg.connections, connections_open: open,
      latency_ns: latency(r.hist),
      ...sc.blocks(),
    },
    generator: {
      cpu_cores: cpu ? (cpu.user + cpu.system) / cpu.window : 0, cpu_user_s: cpu ? cpu.user : 0, cpu_system_s: cpu ? cpu.system : 0,
      schedule_lag_ns: zero, schedule_lag_p99_ns: 0, late_sends_fraction: 0, goroutine_runnable_p99_ns: 0,
      os_run_delay_ns: 0, read_syscalls: 0, messages_per_read: 0, engine: 'node-ws', io_pattern: 'eager',
    },
  };
  if (cfg.json) writeAtomic(cfg.json, JSON.stringify(res, null, 2) + '\n');
  const s = res.summary;
  if (failure && cfg.quiet) console.error(`node generator: ${failure}`);
  say(`${s.throughput_per_s.toFixed(0)} msg/s, ${s.messages} messages, p50 ${(s.latency_ns.p50 / 1e3).toFixed(0)} µs, p99 ${(s.latency_ns.p99 / 1e3).toFixed(0)} µs, ${errors} errors, generator ${res.generator.cpu_cores.toFixed(2)} cores${failure ? '; FAILED: ' + failure : ''}`);
  return failure ? 1 : 0;
}

main().then((code) => process.exit(code), (e) => { console.error(`node generator: ${e.stack || e}`); process.exit(1); });
