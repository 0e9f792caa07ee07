// Compiled against the packed packages installed with npm (strict, nodenext,
// skipLibCheck false) and run: files -> raw segments on disk -> coverage in
// LevelDB, read back after a reopen, with no service. Every public entry is loaded, so a runtime
// dependency missing from a package.json fails here too.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as cli from '@thalweg/cli';
import * as core from '@thalweg/connector-core';
import * as contracts from '@thalweg/contracts';
import * as coordination from '@thalweg/coordination';
import * as flight from '@thalweg/flight';
import * as iceberg from '@thalweg/iceberg';
import * as icebergS3 from '@thalweg/iceberg/s3';
import * as otel from '@thalweg/otel';
import * as offsets from '@thalweg/offset-store';
import * as leveldb from '@thalweg/offset-store/leveldb';
import * as postgres from '@thalweg/offset-store/postgres';
import * as s3 from '@thalweg/offset-store/s3';
import * as pipeline from '@thalweg/pipeline';
import * as sinkFiles from '@thalweg/sink-files';
import * as sinkParquet from '@thalweg/sink-parquet';
import * as sinkPostgres from '@thalweg/sink-postgres';
import * as zerobus from '@thalweg/sink-zerobus';
import * as databricks from '@thalweg/sink-zerobus/databricks';
import * as sourceFiles from '@thalweg/source-files';
import * as kafka from '@thalweg/source-kafka';
import * as sourceIpcStream from '@thalweg/source-ipc-stream';
import * as sourcePulsar from '@thalweg/source-pulsar';
import * as arrow from '@thalweg/stream-arrow';
import * as telemetry from '@thalweg/telemetry';
import * as compression from '@thalweg/wire-compression';

const entries: Record<string, object> = {
  cli,
  core,
  contracts,
  coordination,
  flight,
  iceberg,
  icebergS3,
  offsets,
  leveldb,
  postgres,
  s3,
  pipeline,
  sinkFiles,
  sinkParquet,
  sinkPostgres,
  zerobus,
  databricks,
  sourceFiles,
  kafka,
  sourceIpcStream,
  sourcePulsar,
  arrow,
  compression,
  telemetry,
  otel,
};
for (const [name, entry] of Object.entries(entries)) {
  if (Object.keys(entry).length === 0) throw new Error(`entry ${name} exports nothing`);
}

const RECORDS = 250;
const dir = await mkdtemp(join(tmpdir(), 'twg-consumer-'));
try {
  await writeFile(
    join(dir, 'in.ndjson'),
    Array.from({ length: RECORDS }, (_, i) => JSON.stringify({ i }) + '\n').join(''),
  );
  const RAW = core.sinkId('raw');
  const source = await sourceFiles.FileSetSource.open({
    files: { kind: 'paths', paths: [join(dir, 'in.ndjson')] },
    format: 'ndjson',
    topic: 'in',
  });
  const location = join(dir, 'coverage');
  const coverage: offsets.CoverageStore = await leveldb.LevelDbCoverage.open({
    location,
    sinks: [RAW],
  });
  const run = await pipeline.Pipeline.open({
    source,
    coverage,
    log: () => undefined,
    config: { maxBatchRecords: 64 },
    primaryRaw: (confirm) =>
      sinkFiles.RawSegmentSink.open({
        id: RAW,
        dir: join(dir, 'raw'),
        cluster: source.cluster,
        confirm,
        log: () => undefined,
      }),
    secondaries: [],
  });
  const stats = await run.run();
  // The pipeline closed the store when it stopped: read what it left on disk.
  const reopened = await leveldb.LevelDbCoverage.open({ location, sinks: [RAW] });
  const covered = (await reopened.covered({ sink: RAW, topic: 'in', partition: 0 })).ranges();
  await reopened.close();
  const want = JSON.stringify([{ start: 0, end: RECORDS }]);
  if (stats.raw.durableRecords !== RECORDS || JSON.stringify(covered) !== want) {
    throw new Error(
      `raw durable ${stats.raw.durableRecords}, coverage ${JSON.stringify(covered)}: want ${RECORDS}, ${want}`,
    );
  }
  console.log(JSON.stringify({ consumer: 'full', records: RECORDS, covered }));
} finally {
  await rm(dir, { recursive: true, force: true });
}
