// A topology over one non-resumable Arrow IPC stream, run by consent to its
// loss window, in a process of its own so that loss-window.int.test.ts can
// SIGKILL it mid-stream. The test runs its build (dist-test/test/, by
// `tsc -b`), which imports the built packages (dist/), as a user's process
// would. Every few milliseconds it prints one JSON line: the pipeline's
// `stats().source` and raw's `durableRecords`.
//
//   node dist-test/test/loss-window-driver.js <raw dir> <producer port> <topic>
import { openTopology } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { ipcStream } from '@thalweg/source-ipc-stream';

const [dir, port, topic] = process.argv.slice(2);
if (dir === undefined || port === undefined || topic === undefined) {
  console.error('usage: loss-window-driver.js <raw dir> <producer port> <topic>');
  process.exit(2);
}
const job = await openTopology({
  source: ipcStream({ connection: { kind: 'tcp', host: '127.0.0.1', port: Number(port) }, topic }),
  raw: rawSegments({ dir }),
  config: { acceptLossWindow: 'records-received-not-yet-durable-in-raw' },
  log: (line) => console.error(line),
});
const report = () => {
  const stats = job.stats();
  process.stdout.write(
    `${JSON.stringify({ source: stats.source, durableRecords: stats.raw.durableRecords })}\n`,
  );
};
const every = setInterval(report, 5);
try {
  await job.run();
} finally {
  clearInterval(every);
  report();
}
