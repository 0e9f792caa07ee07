import type { ConsumerFactory } from './consumer-port.js';
import { platformaticConsumerWith } from './platformatic-port.js';

/**
 * @platformatic/kafka (maintained, pure JS, Node 22+) adapted to
 * `ConsumerPort`. Its stream pauses and resumes as a whole, so this adapter
 * keeps its own fetch loop on the client's lower calls: `joinGroup` (the
 * client heartbeats and rejoins by itself and reports both), `fetch` per
 * leader from positions this adapter keeps, `commit`, `listOffsets` and
 * `listCommittedOffsets`.
 *
 * - Group mode joins `groupId` with the client's assigner; a partition
 *   starts at its committed offset, else the earliest or latest one.
 * - Assigned mode joins no group at all (this client can fetch any
 *   partition), reports the configured partitions as its one join, and
 *   commits nothing.
 * - Reads committed records only; aborted transactions and control records
 *   are dropped here (platformatic-records.ts) and still move the position.
 * - A position outside the log (records deleted before they were read)
 *   ends the source with `TWG_KAFKA_POSITION_LOST`, never a silent jump.
 * - A failed fetch round or offset listing is tried again, backing off from
 *   100 ms to 5 s; after a minute of failures in a row the source ends with
 *   `TWG_KAFKA_CONSUMER_FAILED`, naming the last cause (outage-bound.ts).
 */
export const platformaticConsumer: ConsumerFactory = (settings, emit) =>
  platformaticConsumerWith(() => import('@platformatic/kafka'))(settings, emit);
