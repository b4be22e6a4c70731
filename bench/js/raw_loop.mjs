// Reducer-only throughput in Node, no bridge: node raw_loop.mjs WORKLOAD.json SECONDS
// WORKLOAD.json = {"state": {...}, "actions": [...]} (written by bench_targets.py).
import { readFileSync } from 'node:fs';
import { chatReducer } from './chat_reducer.mjs';

const { state, actions } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const budget = Number(process.argv[3] ?? 1) * 1000;
let steps = 0;
const t0 = performance.now();
while (performance.now() - t0 < budget) {
  let s = state;
  for (const a of actions) s = chatReducer(s, a);
  steps += actions.length;
}
console.log(JSON.stringify({ stepsPerSecond: steps / ((performance.now() - t0) / 1000) }));
