// A topology over one Arrow IPC stream, in a process of its own so that the
// crash tests (killed-topology.ts) can SIGKILL it mid-stream: non-resumable,
// run by consent to its loss window, or with `--resume` over the resume
// handshake. The test runs its build (dist-test/test/, by
// `tsc -b`), which imports the built packages (dist/), as a user's process
// would. Every few milliseconds it prints one JSON line: the pipeline's
// `stats().source`, raw's `durableRecords` and the positions committed.
//
//   node dist-test/test/topology-driver.js <raw dir> <producer port> <topic> [--resume]
import { openTopology } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { ipcStream } from '@thalweg/source-ipc-stream';

const [dir, port, topic, mode] = process.argv.slice(2);
const resume = mode === '--resume';
if (dir === undefined || port === undefined || topic === undefined) {
  console.error('usage: topology-driver.js <raw dir> <producer port> <topic> [--resume]');
  process.exit(2);
}
const job = await openTopology({
  source: ipcStream({
    connection: { kind: 'tcp', host: '127.0.0.1', port: Number(port) },
    topic,
    resume,
  }),
  raw: rawSegments({ dir }),
  config: resume ? {} : { acceptLossWindow: 'records-received-not-yet-durable-in-raw' },
  log: (line) => console.error(line),
});
const report = () => {
  const stats = job.stats();
  process.stdout.write(
    `${JSON.stringify({
      source: stats.source,
      durableRecords: stats.raw.durableRecords,
      commits: stats.positions.commits,
    })}\n`,
  );
};
const every = setInterval(report, 5);
try {
  await job.run();
} finally {
  clearInterval(every);
  report();
}
