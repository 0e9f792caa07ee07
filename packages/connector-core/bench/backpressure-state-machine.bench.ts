import {
  BackpressureStateMachine,
  classifyPressure,
  parseBackpressureConfig,
  type PressureSignals,
} from '@thalweg/connector-core';
import { emit, opsPerSecond } from './measure.js';

// One evaluation per sample, as the embedder's flow-control cadence runs it.
// `mixed` walks through runs of calm, elevated, severe and fragmented samples
// one simulated second apart, so every transition and the hold timers are
// exercised; `steady` is the common case of an untroubled pipeline. The
// in-run baseline is the classification alone.
const config = parseBackpressureConfig({});
const levels: PressureSignals[] = [
  { memoryRatio: 0.4, channelFill: 0.3, consecutiveWriteFailures: 0 },
  { memoryRatio: 0.85, channelFill: 0.3, consecutiveWriteFailures: 0 },
  { memoryRatio: 0.5, channelFill: 0.95, consecutiveWriteFailures: 0 },
  { memoryRatio: 0.95, channelFill: 0.01, consecutiveWriteFailures: 0 },
  { memoryRatio: 0.4, channelFill: 0.2, consecutiveWriteFailures: 2 },
];
const mixed: PressureSignals[] = [];
let seed = 7;
while (mixed.length < 4096) {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  const run = 1 + (seed % 90);
  const s = levels[seed % levels.length]!;
  for (let i = 0; i < run && mixed.length < 4096; i++) mixed.push(s);
}

const nsPer = (opsPerS: number) => Number((1e9 / opsPerS).toFixed(1));

const machine = new BackpressureStateMachine(config);
let i = 0;
let t = 0;
let transitions = 0;
const evalOps = opsPerSecond(() => {
  t += 1_000;
  if (machine.evaluate(mixed[i++ & 4095]!, t).kind === 'transition') transitions += 1;
});

const steadyMachine = new BackpressureStateMachine(config);
const calm = levels[0]!;
let ts = 0;
const steadyOps = opsPerSecond(() => steadyMachine.evaluate(calm, (ts += 1_000)));

let j = 0;
const classifyOps = opsPerSecond(() => classifyPressure(mixed[j++ & 4095]!, config));

emit({
  bench: 'state-machine',
  ns_per_eval: nsPer(evalOps),
  ns_per_eval_steady: nsPer(steadyOps),
  ns_per_classify: nsPer(classifyOps),
  transitions_per_1000_evals: Number(((transitions * 1000) / i).toFixed(1)),
});
