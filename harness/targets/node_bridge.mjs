// ahp-fuzz Node bridge: serves JavaScript/TypeScript reducers over the adapter protocol.
//
//   node node_bridge.mjs --module FILE [--module FILE ...] [--tsx TSX_ESM_API_FILE]
//                        [--name NAME] [--protocol-version X.Y.Z] [--log-warnings]
//
// Each --module is imported (TypeScript through tsx's tsImport when --tsx is given) and its
// exports are searched for one reducer per state kind, by the names in KIND_EXPORTS, or an
// exported object `reducers` ({kind: fn}). A reducer is called as fn(state, action, log).
// During every call Date.now() and `new Date()` return the request's `now` (ms). A `reduce`
// request with "observeClock": true is answered with "clockReads": how many times the reducer
// read the clock (Date.now() or a no-argument `new Date()`) during the call.
// Protocol reference: docs/adapters.md. Both forms: reduce | load, step, read, drop.

import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

// Most replies written per write(): small enough that the harness starts on them early.
const FLUSH_EVERY = 64;

const KIND_EXPORTS = {
  root: 'rootReducer',
  session: 'sessionReducer',
  chat: 'chatReducer',
  terminal: 'terminalReducer',
  changeset: 'changesetReducer',
  annotations: 'annotationsReducer',
  resourceWatch: 'resourceWatchReducer',
};

function parseArgs(argv) {
  const opts = { modules: [], tsx: null, name: null, protocolVersion: null, logWarnings: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--module') opts.modules.push(argv[++i]);
    else if (a === '--tsx') opts.tsx = argv[++i];
    else if (a === '--name') opts.name = argv[++i];
    else if (a === '--protocol-version') opts.protocolVersion = argv[++i];
    else if (a === '--log-warnings') opts.logWarnings = true;
    else fail(`unknown argument ${a}`);
  }
  if (opts.modules.length === 0) fail('give at least one --module FILE');
  return opts;
}

function fail(message) {
  process.stderr.write(`node_bridge: ${message}\n`);
  process.exit(2);
}

// ---- the injected clock ---------------------------------------------------------------------

const RealDate = Date;
let fixedNow = null;
let clockReads = 0; // clock reads during the current call (counted for every call)
class BridgeDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) {
      clockReads++;
      super(fixedNow !== null ? fixedNow : RealDate.now());
    } else super(...args);
  }
  static now() {
    clockReads++;
    return fixedNow !== null ? fixedNow : RealDate.now();
  }
}
globalThis.Date = BridgeDate;

// ---- loading ----------------------------------------------------------------------------------

async function loadReducers(opts) {
  let tsImport = null;
  if (opts.tsx) {
    try {
      ({ tsImport } = await import(pathToFileURL(resolve(opts.tsx)).href));
    } catch (e) {
      fail(`cannot load tsx from ${opts.tsx}: ${e && e.message}`);
    }
  }
  const reducers = {};
  const origin = {};
  for (const file of opts.modules) {
    const url = pathToFileURL(resolve(file)).href;
    let mod;
    try {
      mod = tsImport && /\.[cm]?tsx?$/.test(file) ? await tsImport(url, import.meta.url) : await import(url);
    } catch (e) {
      fail(`cannot load ${file}: ${(e && e.stack) || e}`);
    }
    const table = mod.reducers ?? (mod.default && mod.default.reducers) ?? {};
    for (const [kind, name] of Object.entries(KIND_EXPORTS)) {
      if (reducers[kind]) continue;
      const fn = typeof mod[name] === 'function' ? mod[name] : table[kind];
      if (typeof fn === 'function') {
        reducers[kind] = fn;
        origin[kind] = file;
      }
    }
  }
  if (Object.keys(reducers).length === 0) {
    fail(
      `no reducer exports found in ${opts.modules.join(', ')} ` +
        `(looked for ${Object.values(KIND_EXPORTS).join(', ')} and an exported 'reducers' object)`,
    );
  }
  return { reducers, origin };
}

// ---- change lists (compare by identity; see docs/adapters.md) --------------------------------

const hasOwn = Object.prototype.hasOwnProperty;
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function diff(oldState, newState) {
  const out = [];
  walk(oldState, newState, [], out);
  return out;
}

function walk(a, b, path, out) {
  if (a === b) return;
  if (Array.isArray(a) && Array.isArray(b)) walkArray(a, b, path, out);
  else if (isObject(a) && isObject(b)) walkObject(a, b, path, out);
  else out.push({ path, value: b === undefined ? null : b });
}

// The child diff of a container is replaced by the whole container when it is no smaller.
function collapse(out, start, size, path, value) {
  const n = out.length - start;
  if (path.length > 0 && n > 1 && n >= size) {
    out.length = start;
    out.push({ path, value });
  }
}

function walkObject(a, b, path, out) {
  const start = out.length;
  let size = 0;
  let common = 0;
  for (const k in b) {
    const v = b[k];
    if (v === undefined) continue; // undefined is absent on the wire
    size++;
    const old = hasOwn.call(a, k) ? a[k] : undefined;
    if (old === undefined) {
      out.push({ path: path.concat([k]), value: v });
      continue;
    }
    common++;
    if (old !== v) walk(old, v, path.concat([k]), out);
  }
  let before = 0;
  for (const k in a) if (a[k] !== undefined) before++;
  if (before > common) {
    for (const k in a) {
      if (a[k] !== undefined && (!hasOwn.call(b, k) || b[k] === undefined)) out.push({ path: path.concat([k]), delete: true });
    }
  }
  collapse(out, start, size, path, b);
}

function walkArray(a, b, path, out) {
  if (b.length < a.length) {
    out.push({ path, value: b });
    return;
  }
  const start = out.length;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] === undefined ? null : a[i];
    const y = b[i] === undefined ? null : b[i];
    if (x !== y) walk(x, y, path.concat([i]), out);
  }
  for (let i = a.length; i < b.length; i++) out.push({ path: path.concat([i]), value: b[i] === undefined ? null : b[i] });
  collapse(out, start, b.length, path, b);
}

// ---- requests ------------------------------------------------------------------------------

class BadRequest extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function main(opts, reducers) {
  const handles = new Map();
  const noLog = () => {};
  const log = opts.logWarnings ? (msg) => process.stderr.write(`[reducer] ${msg}\n`) : noLog;

  const reducerFor = (kind) => {
    const fn = reducers[kind];
    if (!fn) {
      throw new BadRequest(
        'unknownKind',
        `no reducer for kind ${JSON.stringify(kind)}: the modules export no ${KIND_EXPORTS[kind] ?? 'reducer for it'} ` +
          `(available: ${Object.keys(reducers).join(', ')})`,
      );
    }
    return fn;
  };
  const nowOf = (req) => {
    if (!Number.isInteger(req.now)) throw new BadRequest('badRequest', 'now must be an integer (ms since the epoch)');
    return req.now;
  };
  const call = (fn, state, action, now) => {
    fixedNow = now;
    clockReads = 0;
    try {
      return fn(state, action, log);
    } finally {
      fixedNow = null;
    }
  };
  const handleOf = (req) => {
    const h = handles.get(req.handle);
    if (!h) throw new BadRequest('unknownHandle', `no state loaded under handle ${JSON.stringify(req.handle)}`);
    return h;
  };
  const checkResult = (next) => {
    if (!isObject(next)) throw new TypeError(`reducer returned ${next === null ? 'null' : typeof next}, not a state object`);
    return next;
  };
  const checkState = (state, op) => {
    if (!isObject(state)) throw new BadRequest('badRequest', `${op} needs a state object`);
    return state;
  };

  const ops = {
    reduce(req) {
      const fn = reducerFor(req.kind);
      const state = checkResult(call(fn, checkState(req.state, 'reduce'), req.action, nowOf(req)));
      return req.observeClock === true ? { state, clockReads } : { state };
    },
    load(req) {
      reducerFor(req.kind);
      handles.set(req.handle, { kind: req.kind, state: checkState(req.state, 'load') });
      return {};
    },
    step(req) {
      const h = handleOf(req);
      const now = nowOf(req);
      const next = checkResult(call(reducerFor(h.kind), h.state, req.action, now));
      const changes = diff(h.state, next);
      h.state = next;
      return { changes };
    },
    read(req) {
      return { state: handleOf(req).state };
    },
    drop(req) {
      handles.delete(req.handle);
      return {};
    },
  };

  const handleLine = (line) => {
    let req;
    try {
      req = JSON.parse(line);
    } catch (e) {
      return JSON.stringify({ id: null, error: { message: `request is not JSON: ${e.message}`, code: 'badRequest' } });
    }
    if (!isObject(req)) return JSON.stringify({ id: null, error: { message: 'request is not an object', code: 'badRequest' } });
    const id = req.id;
    const name = req.op || 'reduce';
    const op = hasOwn.call(ops, name) ? ops[name] : null;
    if (!op) return JSON.stringify({ id, error: { message: `unknown op ${JSON.stringify(req.op)}`, code: 'unsupportedOp' } });
    try {
      return JSON.stringify({ id, ...op(req) });
    } catch (e) {
      const err =
        e instanceof BadRequest
          ? { message: e.message, code: e.code }
          : { message: `${(e && e.name) || 'Error'}: ${e && e.message}`, type: (e && e.name) || typeof e, code: 'reducerError', stack: e && e.stack };
      return JSON.stringify({ id, error: err });
    }
  };

  let pending = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    pending += chunk;
    if (chunk.indexOf('\n') < 0) return;
    const lines = pending.split('\n');
    pending = lines.pop();
    let replies = [];
    for (const line of lines) {
      if (!line.trim()) continue;
      replies.push(handleLine(line));
      if (replies.length >= FLUSH_EVERY) {
        process.stdout.write(replies.join('\n') + '\n');
        replies = [];
      }
    }
    if (replies.length) process.stdout.write(replies.join('\n') + '\n');
  });
  process.stdin.on('end', () => process.exit(0));
}

const opts = parseArgs(process.argv.slice(2));
const { reducers, origin } = await loadReducers(opts);
const announcement = {
  ahpAdapter: 1,
  name: opts.name ?? `node ${opts.modules.join(' ')}`,
  forms: ['simple', 'fast'],
  kinds: Object.keys(reducers),
  reducers: origin,
  runtime: `node ${process.version}`,
  observesClock: true,
};
if (opts.protocolVersion) announcement.protocolVersion = opts.protocolVersion;
process.stdout.write(JSON.stringify(announcement) + '\n');
main(opts, reducers);
