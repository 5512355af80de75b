extension LivePage {
    /// The page's script: reads `/v1/devices`, `/v1/samples` and `/v1/statistics` with the token,
    /// follows `/v1/live` (Server-Sent Events read through `fetch`, so the token travels in the
    /// `Authorization` header and never in a URL), and draws the tiles and charts as inline SVG.
    static let script = #"""
'use strict';
// HealthGate live page (docs/http-api.md, "The live page"). No library, no build step.

const STALE_MS = 5000;            // a strap silent this long is stale: its bpm is no longer shown as current
const SPARK_MS = 5 * 60 * 1000;   // the sparkline's window
const HRV_MS = 60 * 1000;         // RMSSD over the RR intervals of the last minute
const TOKEN_KEY = 'healthgate.token';
const SVG = 'http://www.w3.org/2000/svg';

const state = {
  token: null,
  skew: 0,                 // server clock minus this browser's clock, ms (from the Date header)
  lastEventId: null,       // resume point of /v1/live
  straps: new Map(),       // localIdentifier -> strap
  pedometers: new Map(),   // localIdentifier -> pedometer
  workout: null,           // the workout in progress (its record with "state"), or null
  timers: {},
  running: false,
};

const $ = (id) => document.getElementById(id);
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
const pad = (n) => String(n).padStart(2, '0');
const day = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
const midnight = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate());
const toLocal = (serverMs) => Math.min(Date.now(), serverMs - state.skew);

// ---- token: asked once, kept in localStorage; ?token= is taken and removed from the address bar.
function takeTokenFromURL() {
  const params = new URLSearchParams(location.search);
  if (!params.has('token')) return;
  localStorage.setItem(TOKEN_KEY, params.get('token'));
  params.delete('token');
  const rest = params.toString();
  history.replaceState(null, '', location.pathname + (rest ? '?' + rest : ''));
}

function askForToken(message) {
  state.running = false;
  for (const t of Object.values(state.timers)) clearInterval(t);
  $('page').hidden = true;
  $('forget').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = message || '';
  $('token').focus();
}

class Unauthorized extends Error {}

async function api(path) {
  const sent = Date.now();
  const res = await fetch(path, { headers: { Authorization: 'Bearer ' + state.token }, cache: 'no-store' });
  noteClock(res, sent);
  if (res.status === 401) throw new Unauthorized();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return res.json();
}

function noteClock(res, sent) {
  const date = Date.parse(res.headers.get('Date') || '');
  if (!Number.isNaN(date)) state.skew = date + 500 - (sent + Date.now()) / 2;   // Date has 1 s resolution
}

// ---- devices
// A strap's tile by its local identifier. `name` is its name for people: the daemon's (the
// configured alias) when `given` by /v1/devices or a device event, else the samples' device name
// until the daemon says otherwise.
function strap(key, name, given = false) {
  let s = state.straps.get(key);
  if (!s) {
    s = { key, name: name || key, connected: undefined, battery: undefined, contact: undefined,
          bpm: undefined, end: 0, seen: 0, points: [], rr: [], keys: new Map(), tile: null };
    state.straps.set(key, s);
    s.tile = strapTile(s);
    $('straps').append(s.tile.root);
    $('no-straps').hidden = true;
    refreshHeartRateToday();
  }
  if (name && (given || !s.given)) { s.name = name; s.given = s.given || given; }
  return s;
}

function pedometer(key, name, given = false) {
  let p = state.pedometers.get(key);
  if (!p) {
    p = { key, name: name || key, connected: undefined, steps: undefined, tile: null };
    state.pedometers.set(key, p);
    p.tile = pedometerTile(p);
    $('pedometers').append(p.tile.root);
    $('pedometers-section').hidden = false;
    refreshSteps(p);
  }
  if (name && (given || !p.given)) { p.name = name; p.given = p.given || given; }
  return p;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function strapTile(s) {
  const t = {
    root: el('article', 'tile strap waiting'), name: el('span', 'name'), battery: el('span', 'battery'),
    value: el('span', 'value', '--'), unit: el('span', 'unit', 'bpm'), note: el('div', 'note'),
    spark: document.createElementNS(SVG, 'svg'), line: document.createElementNS(SVG, 'path'),
    contact: el('span', 'contact'), hrv: el('span', 'hrv'), age: el('span', 'age'),
  };
  t.root.dataset.device = s.key;
  t.spark.setAttribute('class', 'spark');
  t.spark.setAttribute('viewBox', '0 0 300 60');
  t.spark.setAttribute('preserveAspectRatio', 'none');
  t.spark.append(t.line);
  const head = el('div', 'head'); head.append(t.name, t.battery);
  const bpm = el('div', 'bpm'); bpm.append(t.value, t.unit);
  const foot = el('div', 'foot'); foot.append(t.contact, t.hrv, t.age);
  t.root.append(head, bpm, t.note, t.spark, foot);
  return t;
}

function pedometerTile(p) {
  const t = { root: el('article', 'tile pedometer'), name: el('span', 'name'), value: el('div', 'value', '--'), note: el('div', 'note') };
  t.root.dataset.device = p.key;
  const head = el('div', 'head'); head.append(t.name);
  t.root.append(head, t.value, t.note);
  return t;
}

// ---- what arrives
function heartRateSample(s, sample) {
  const id = sample.uuid + ':' + (sample.series ? sample.series.index : '');
  if (s.keys.has(id)) return;               // a resumed stream may send a sample again
  s.keys.set(id, true);
  if (s.keys.size > 4000) s.keys.delete(s.keys.keys().next().value);
  const end = Date.parse(sample.end);
  const local = toLocal(end);
  if (end >= s.end) { s.end = end; s.bpm = sample.value; s.seen = local; }
  s.points.push([local, sample.value]);
  if (sample.rrIntervals && sample.rrIntervals.ticks.length) {
    s.rr.push([local, sample.rrIntervals.ticks.map((t) => t * 1000 / 1024), !!sample.rrIntervals.precededByGap]);
  }
}

function onSample(sample) {
  const d = sample.device || {};
  const key = d.localIdentifier || d.name || sample.sourceIdentifier || sample.source;
  if (sample.type === 'heartRate') {
    heartRateSample(strap(key, d.name), sample);
    schedule(draw);
  } else if (sample.type === 'stepCount') {
    const p = pedometer(key, d.name);
    later('steps:' + key, () => refreshSteps(p), 1500);
    later('week', refreshWeek, 1500);
  }
}

function onDevice(e) {
  if (e.kind === 'pedometer') {
    const p = pedometer(e.localIdentifier, e.name, true);
    if (e.event === 'connected') p.connected = true;
    if (e.event === 'disconnected') p.connected = false;
  } else {
    const s = strap(e.localIdentifier, e.name, true);
    if (e.event === 'connected') s.connected = true;
    if (e.event === 'disconnected') s.connected = false;
    if (e.battery !== undefined) s.battery = e.battery;
    if (e.event === 'contact') s.contact = e.contact;
  }
  schedule(draw);
}

// ---- /v1/live: Server-Sent Events through fetch (EventSource cannot send the token in a header)
async function follow() {
  while (state.running) {
    try {
      const headers = { Authorization: 'Bearer ' + state.token };
      if (state.lastEventId) headers['Last-Event-ID'] = state.lastEventId;
      const sent = Date.now();
      const res = await fetch('/v1/live', { headers, cache: 'no-store' });
      noteClock(res, sent);
      if (res.status === 401) throw new Unauthorized();
      if (res.status === 400 || res.status === 409) state.lastEventId = null;   // start afresh
      if (!res.ok) throw new Error('HTTP ' + res.status);
      link(true);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replace(/\r\n?/g, '\n');
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          block(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch (e) {
      if (e instanceof Unauthorized) { askForToken('The gateway refused this token (unknown, revoked or expired): enter another.'); return; }
    }
    link(false);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

function block(text) {
  let id = null, event = 'message';
  const data = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (id !== null) state.lastEventId = id;
  if (!data.length) return;
  const object = JSON.parse(data.join('\n'));
  if (event === 'sample') onSample(object);
  else if (event === 'device') onDevice(object);
  else if (event === 'workout') onWorkout(object);
  else if (event === 'deleted' && object.type === 'workout') onWorkout({ uuid: object.uuid, state: 'deleted' });
  else if (event === 'deleted') { later('week', refreshWeek, 1500); later('hr', refreshHeartRateToday, 1500); }
}

// ---- the workout in progress (a token with the workout read scope; others never get the events)
function onWorkout(w) {
  if (w.state === 'running' || w.state === 'paused') state.workout = w;
  else if (state.workout && state.workout.uuid.toLowerCase() === w.uuid.toLowerCase()) state.workout = null;
  schedule(draw);
}

const activityName = (a) => (a || 'workout').replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());

function drawWorkout(now) {
  const w = state.workout, el = $('workout');
  el.hidden = !w;
  if (!w) return;
  el.className = 'workout ' + w.state;
  el.dataset.state = w.state;
  el.dataset.uuid = w.uuid.toLowerCase();
  const started = new Date(Date.parse(w.start));
  el.querySelector('.what').textContent = `${activityName(w.activity)} ${w.state === 'paused' ? 'paused' : 'in progress'}`;
  el.querySelector('.since').textContent = `since ${pad(started.getHours())}:${pad(started.getMinutes())} (${ago(now - toLocal(started.getTime())).replace(' ago', '')})`;
}

function link(up) {
  $('link').className = 'link ' + (up ? 'up' : 'down');
  $('link').textContent = up ? 'live' : 'reconnecting…';
}

// ---- drawing the tiles (on every event, and once a second for the ages)
let drawQueued = false;
function schedule(fn) {
  if (drawQueued) return;
  drawQueued = true;
  setTimeout(() => { drawQueued = false; fn(); }, 50);
}

function later(name, fn, ms) {
  if (state.timers['later:' + name]) return;
  state.timers['later:' + name] = setTimeout(() => { delete state.timers['later:' + name]; fn(); }, ms);
}

function ago(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
}

function draw() {
  const now = Date.now();
  drawWorkout(now);
  for (const s of state.straps.values()) drawStrap(s, now);
  for (const p of state.pedometers.values()) drawPedometer(p);
}

function drawStrap(s, now) {
  const t = s.tile;
  const age = s.seen ? now - s.seen : Infinity;
  const status = s.connected === false ? 'disconnected' : !s.seen ? 'waiting' : age > STALE_MS ? 'stale' : 'live';
  t.root.className = 'tile strap ' + status;
  t.root.dataset.state = status;
  t.root.dataset.end = s.end ? new Date(s.end).toISOString() : '';
  t.root.dataset.lastBpm = s.bpm === undefined ? '' : String(s.bpm);
  t.name.textContent = s.name;
  t.battery.textContent = s.battery === undefined ? '' : `battery ${s.battery}%`;
  t.battery.classList.toggle('low', s.battery !== undefined && s.battery <= 15);
  const current = status === 'live' ? String(Math.round(s.bpm)) : '--';
  t.root.dataset.bpm = status === 'live' ? String(s.bpm) : '';
  t.value.textContent = current;
  const last = s.bpm === undefined ? '' : ` (last ${Math.round(s.bpm)} bpm ${ago(age)})`;
  t.note.textContent = status === 'disconnected' ? 'disconnected' + last
    : status === 'stale' ? 'no signal' + last
    : status === 'waiting' ? (s.connected ? 'connected, waiting for data' : 'waiting for data') : '';
  t.contact.textContent = s.contact === undefined ? '' : s.contact ? 'skin contact' : 'no skin contact';
  t.contact.classList.toggle('off', s.contact === false);
  const hrv = status === 'live' ? rmssd(s, now) : undefined;   // never an old figure as current
  t.hrv.textContent = hrv === undefined ? '' : `HRV ${Math.round(hrv)} ms (RMSSD, 1 min)`;
  t.hrv.dataset.rmssd = hrv === undefined ? '' : String(hrv);
  t.age.textContent = s.seen ? ago(age) : '';
  // five minutes of heart rate; a gap of over 10 s breaks the line
  s.points = s.points.filter((p) => p[0] >= now - SPARK_MS);
  s.points.sort((a, b) => a[0] - b[0]);
  const values = s.points.map((p) => p[1]);
  const lo = Math.min(...values, 200) - 5, hi = Math.max(...values, 0) + 5;
  let d = '', previous = -Infinity;
  for (const [time, v] of s.points) {
    const x = (300 * (time - (now - SPARK_MS)) / SPARK_MS).toFixed(1);
    const y = (58 - 56 * (v - lo) / Math.max(hi - lo, 1)).toFixed(1);
    d += (time - previous > 10000 ? `M${x} ${y} h0.01 ` : `L${x} ${y} `);   // a lone point still shows as a dot
    previous = time;
  }
  t.line.setAttribute('d', d.trim());
}

// RMSSD of the RR intervals received in the last minute (successive differences, never across a
// gap the strap reports or across missed notifications; intervals outside 250–2500 ms are artefacts).
function rmssd(s, now) {
  s.rr = s.rr.filter((r) => r[0] >= now - HRV_MS);
  s.rr.sort((a, b) => a[0] - b[0]);
  let sum = 0, n = 0, previous, previousTime = -Infinity;
  for (const [time, intervals, gap] of s.rr) {
    if (gap || time - previousTime > 5000) previous = undefined;
    previousTime = time;
    for (const ms of intervals) {
      if (ms < 250 || ms > 2500) { previous = undefined; continue; }
      if (previous !== undefined) { sum += (ms - previous) ** 2; n += 1; }
      previous = ms;
    }
  }
  return n >= 5 ? Math.sqrt(sum / n) : undefined;
}

function drawPedometer(p) {
  const t = p.tile;
  t.name.textContent = p.name;
  t.value.textContent = p.steps === undefined ? '--' : Math.round(p.steps).toLocaleString('en');
  t.root.dataset.steps = p.steps === undefined ? '' : String(p.steps);
  t.root.classList.toggle('disconnected', p.connected === false);
  t.note.textContent = p.connected === false ? 'disconnected' : p.connected ? 'connected' : '';
}

// ---- statistics
function statistics(params) {
  return api('/v1/statistics?' + new URLSearchParams(params).toString());
}

async function refreshSteps(p) {
  const now = new Date();
  const r = await statistics({ type: 'stepCount', from: day(now), to: now.toISOString(), tz: zone, device: p.key });
  p.steps = r.sum === null ? 0 : r.sum;
  schedule(draw);
}

async function refreshWeek() {
  const now = new Date();
  const from = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 6);
  const buckets = await statistics({ type: 'stepCount', interval: '1d', from: day(from), to: now.toISOString(), tz: zone });
  const svg = $('steps-week');
  svg.replaceChildren();
  const max = Math.max(1, ...buckets.map((b) => b.sum || 0));
  const width = 700 / Math.max(buckets.length, 7);
  buckets.forEach((b, i) => {
    const sum = b.sum || 0;
    const h = 160 * sum / max;
    const bar = svgEl('rect', { class: 'bar', x: i * width + width * 0.15, y: 185 - h, width: width * 0.7, height: h });
    bar.dataset.start = b.start;
    bar.dataset.sum = String(sum);
    const title = svgEl('title'); title.textContent = `${b.start.slice(0, 10)}: ${sum} steps`; bar.append(title);
    const start = new Date(b.start);
    const label = svgEl('text', { x: i * width + width / 2, y: 205, 'text-anchor': 'middle' });
    label.textContent = start.toLocaleDateString('en', { weekday: 'short', day: 'numeric' });
    const value = svgEl('text', { class: 'bar-value', x: i * width + width / 2, y: 180 - h, 'text-anchor': 'middle' });
    value.textContent = Math.round(sum).toLocaleString('en');
    svg.append(bar, label, value);
  });
  svg.dataset.ready = 'true';
}

async function refreshHeartRateToday() {
  if (!state.running) return;
  later('hr', async () => {
    const now = new Date();
    const start = midnight(now).getTime();
    const span = 24 * 3600 * 1000;
    const series = [];
    for (const s of state.straps.values()) {
      const buckets = await statistics({ type: 'heartRate', options: 'discreteAverage', interval: '1min', from: day(now),
                                         to: now.toISOString(), tz: zone, device: s.key });
      series.push([s, buckets.filter((b) => b.average !== null)]);
    }
    const all = series.flatMap(([, b]) => b.map((x) => x.average));
    const lo = Math.min(50, ...all) - 5, hi = Math.max(180, ...all) + 5;
    const svg = $('hr-today');
    svg.replaceChildren();
    const y = (v) => 195 - 190 * (v - lo) / (hi - lo);
    for (let v = Math.ceil(lo / 40) * 40; v <= hi; v += 40) {
      svg.append(svgEl('line', { class: 'grid', x1: 0, x2: 720, y1: y(v), y2: y(v) }));
      const label = svgEl('text', { x: 4, y: y(v) - 3 }); label.textContent = String(v); svg.append(label);
    }
    for (let h = 3; h < 24; h += 3) {
      const x = 720 * h / 24;
      svg.append(svgEl('line', { class: 'grid', x1: x, x2: x, y1: 0, y2: 200 }));
      const label = svgEl('text', { x: x + 3, y: 196 }); label.textContent = `${h}:00`; svg.append(label);
    }
    const legend = $('hr-legend');
    legend.replaceChildren();
    series.forEach(([s, buckets], i) => {
      let d = '', previous = -Infinity;
      for (const b of buckets) {
        const t = Date.parse(b.start);
        const point = (720 * (t - start) / span).toFixed(2) + ' ' + y(b.average).toFixed(1);
        d += t - previous > 60000 ? `M${point} h0.01 ` : `L${point} `;
        previous = t;
      }
      svg.append(svgEl('path', { class: 'c' + (i % 8), d: d.trim() }));
      const item = el('span'); item.append(el('i', 'c' + (i % 8)), s.name); legend.append(item);
    });
  }, 500);
}

function svgEl(tag, attributes = {}) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, String(v));
  return e;
}

// ---- start
async function start() {
  state.running = true;
  $('login').hidden = true;
  $('page').hidden = false;
  $('forget').hidden = false;
  try {
    const devices = await api('/v1/devices');
    const now = Date.now();
    for (const d of devices) {
      const c = d.connection;
      if (!c) continue;
      if (c.kind === 'pedometer') {
        pedometer(d.localIdentifier, c.name, true).connected = c.connected;
        continue;
      }
      const s = strap(d.localIdentifier, c.name, true);
      s.connected = c.connected;
      s.battery = c.battery;
      s.contact = c.contact;
      if (c.lastSample && c.heartRate !== undefined) {
        s.end = Date.parse(c.lastSample);
        s.bpm = c.heartRate;
        s.seen = toLocal(s.end);
      }
    }
    const recent = await api('/v1/samples?' + new URLSearchParams({ type: 'heartRate', from: new Date(now + state.skew - SPARK_MS).toISOString(), sort: 'end', limit: '20000' }));
    for (const sample of recent) {
      const d = sample.device || {};
      heartRateSample(strap(d.localIdentifier || d.name || sample.source, d.name), sample);
    }
    // A workout started before the page opened (an empty list without the workout scope).
    const workouts = await api('/v1/workouts?' + new URLSearchParams({ from: new Date(now + state.skew - 86400000).toISOString() }));
    for (const w of workouts) if (w.state === 'running' || w.state === 'paused') state.workout = w;
    draw();
    follow();
    refreshWeek();
    refreshHeartRateToday();
    state.timers.draw = setInterval(draw, 1000);
    state.timers.charts = setInterval(() => {
      refreshWeek();
      refreshHeartRateToday();
      for (const p of state.pedometers.values()) refreshSteps(p);
    }, 60000);
  } catch (e) {
    if (e instanceof Unauthorized) askForToken('The gateway refused this token (unknown, revoked or expired): enter another.');
    else { link(false); $('link').textContent = 'gateway unreachable'; setTimeout(() => location.reload(), 10000); }
  }
}

window.addEventListener('unhandledrejection', (e) => {
  if (e.reason instanceof Unauthorized) askForToken('The gateway refused this token (unknown, revoked or expired): enter another.');
});

document.addEventListener('DOMContentLoaded', () => {
  $('login').addEventListener('submit', (e) => {
    e.preventDefault();
    localStorage.setItem(TOKEN_KEY, $('token').value.trim());
    location.reload();
  });
  $('forget').addEventListener('click', () => { localStorage.removeItem(TOKEN_KEY); location.reload(); });
  takeTokenFromURL();
  state.token = localStorage.getItem(TOKEN_KEY);
  if (state.token) start(); else askForToken('');
});
"""#
}
