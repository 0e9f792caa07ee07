// `pnpm --filter @thalweg/source-kafka bench`: one JSON object per line.
// Needs a Kafka: THALWEG_KAFKA_BROKERS (eval "$(pnpm services:up)").
//
// Produces RECORDS values of VALUE_BYTES to a fresh 4-partition topic, then
// reads it back in the same run, alternately with a bare kafkajs eachBatch
// consumer (the baseline) and with KafkaGroupSource.batches() over each
// client (kafkajs; @platformatic/kafka where the runtime can run it, Node
// 22+), each in a fresh group, twice each; the best of each side is
// compared. `pnpm bench` runs this on the machine's Node and on Node 24 LTS.
import { Kafka, logLevel } from 'kafkajs';
import {
  benchLine,
  kafkaBrokers,
  readFields,
  round,
  uniqueName,
  type ConsumeMeasure,
} from '@thalweg/test-services';
import { measureBareConsumer } from './bare-consumer.js';
import { produceFixture } from './fixture.js';
import { platformaticConsumer, platformaticSupported } from '@thalweg/source-kafka';
import { measureGroupSource } from './source-consumer.js';

const RECORDS = 300_000;
const VALUE_BYTES = 256;
const PARTITIONS = 4;
const ROUNDS = 2;

const line = benchLine;
const fields = (reader: string, m: ConsumeMeasure, run: number) =>
  readFields('kafka-read', reader, m, run);

let brokers: string[];
try {
  brokers = kafkaBrokers();
} catch (error) {
  process.stderr.write(
    `source-kafka bench: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
}

const kafka = new Kafka({ clientId: 'thalweg-bench', brokers, logLevel: logLevel.NOTHING });
const admin = kafka.admin();
const producer = kafka.producer();
await Promise.all([admin.connect(), producer.connect()]);
const topic = uniqueName('twg-bench');
try {
  const produced = await produceFixture(admin, producer, topic, PARTITIONS, RECORDS, VALUE_BYTES);
  line({
    bench: 'kafka-produce',
    records: RECORDS,
    value_bytes: VALUE_BYTES,
    partitions: PARTITIONS,
    ms: round(produced.ms),
    records_per_s: round(produced.recordsPerSec),
  });
  let bare = 0;
  let source = 0;
  let platformatic = 0;
  for (let run = 1; run <= ROUNDS; run++) {
    const b = await measureBareConsumer({
      brokers,
      topic,
      records: RECORDS,
      groupId: uniqueName('twg-bench-bare'),
    });
    line(fields('kafkajs-eachBatch', b, run));
    bare = Math.max(bare, b.recordsPerSec);
    const s = await measureGroupSource({
      brokers,
      topic,
      records: RECORDS,
      groupId: uniqueName('twg-bench-source'),
    });
    line({ ...fields('KafkaGroupSource', s, run), queue_pauses: s.queuePauses });
    source = Math.max(source, s.recordsPerSec);
    if (!platformaticSupported()) continue;
    const p = await measureGroupSource({
      brokers,
      topic,
      records: RECORDS,
      groupId: uniqueName('twg-bench-platformatic'),
      kafka: platformaticConsumer,
    });
    line({ ...fields('KafkaGroupSource-platformatic', p, run), queue_pauses: p.queuePauses });
    platformatic = Math.max(platformatic, p.recordsPerSec);
  }
  line({
    bench: 'kafka-read-ratio',
    baseline: 'kafkajs-eachBatch',
    best_bare_records_per_s: round(bare),
    best_source_records_per_s: round(source),
    source_over_bare: round(source / bare, 2),
  });
  line({
    bench: 'kafka-clients',
    node: process.versions.node,
    records: RECORDS,
    kafkajs_source_records_per_s: round(source),
    ...(platformaticSupported()
      ? {
          platformatic_source_records_per_s: round(platformatic),
          platformatic_over_kafkajs: round(platformatic / source, 2),
        }
      : { platformatic: 'not run: @platformatic/kafka needs Node 22+' }),
  });
} finally {
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await Promise.all([admin.disconnect(), producer.disconnect()]);
}
