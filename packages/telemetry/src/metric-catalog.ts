import { def, type MetricDef } from './metric-def.js';

export type { MetricDef, MetricKind } from './metric-def.js';

/** The labels of one ack lane: the sink's id, its role, and the stream within the sink. */
const LANE = ['sink', 'role', 'stream'] as const;

/**
 * Every metric thalweg exports. Per-lane metrics are labelled by
 * `{sink, role, stream}`, so no two lanes share a label set (a stalled
 * secondary can neither hide in raw's series nor delay them). Names follow
 * Prometheus's conventions: base units, `_total` on counters.
 */
export const METRICS = {
  // The ack lane of each sink stream (ADR 0060's runbook signals).
  coalesce: def(
    'thalweg_ack_lane_coalesce_batches',
    'histogram',
    '{batch}',
    LANE,
    'Batches made durable by one wait (coalesce ratio); a steady 1 means the lane does not pipeline.',
  ),
  pending: def(
    'thalweg_ack_lane_pending_batches',
    'gauge',
    '{batch}',
    LANE,
    'Batches submitted to the lane and not yet delivered (submitted - delivered).',
  ),
  saturation: def(
    'thalweg_ack_lane_saturation_ratio',
    'gauge',
    '1',
    LANE,
    "Fill of the lane's bounded queue, 0..1; at 1 a submit waits.",
  ),
  deliveryLatency: def(
    'thalweg_ack_lane_delivery_latency_seconds',
    'histogram',
    's',
    LANE,
    'Time from a batch accepted to its durable confirmation.',
  ),
  retries: def(
    'thalweg_ack_lane_retries_total',
    'counter',
    '{attempt}',
    LANE,
    'Durability attempts retried after a transient failure (the lane went on).',
  ),
  poisoned: def(
    'thalweg_ack_lane_poisoned_total',
    'counter',
    '{lane}',
    LANE,
    'Permanent failures that ended the lane: the cause signal.',
  ),
  consecutiveFailures: def(
    'thalweg_ack_lane_consecutive_failures',
    'gauge',
    '{attempt}',
    LANE,
    'Durability attempts failed in a row; 0 once a write is durable again.',
  ),
  confirmFailures: def(
    'thalweg_ack_lane_confirm_failures_total',
    'counter',
    '{batch}',
    LANE,
    'Durable batches whose confirmation target failed (lag, not loss).',
  ),
  submitted: def(
    'thalweg_ack_lane_submitted_batches_total',
    'counter',
    '{batch}',
    LANE,
    'Batches the lane accepted: the submitted watermark.',
  ),
  delivered: def(
    'thalweg_ack_lane_delivered_batches_total',
    'counter',
    '{batch}',
    LANE,
    'Batches the lane settled durably (or set aside): the delivered watermark.',
  ),

  // Per sink, as the pipeline sees it.
  sinkDeliveredRecords: def(
    'thalweg_sink_delivered_records_total',
    'counter',
    '{record}',
    ['sink', 'role'] as const,
    'Records the sink confirmed durable.',
  ),
  sinkShedBatches: def(
    'thalweg_sink_shed_batches_total',
    'counter',
    '{batch}',
    ['sink'] as const,
    "Batches a secondary's lane dropped (full or failed): coverage gaps recovery replays.",
  ),
  sinkShedRecords: def(
    'thalweg_sink_shed_records_total',
    'counter',
    '{record}',
    ['sink'] as const,
    "Records in the batches a secondary's lane dropped.",
  ),
  sinkQueuedBatches: def(
    'thalweg_sink_queued_batches',
    'gauge',
    '{batch}',
    ['sink'] as const,
    "Batches waiting in the pipeline's lane in front of a secondary.",
  ),
  coverageLag: def(
    'thalweg_coverage_lag_records',
    'gauge',
    '{record}',
    ['sink'] as const,
    'Offsets raw holds that the sink does not (its coverage gaps), as last measured.',
  ),

  // Recovery.
  recoveryUnclaimedWindows: def(
    'thalweg_recovery_unclaimed_windows',
    'gauge',
    '{window}',
    [] as const,
    'Windows of the last recovery plan that no lease held: the recovery backlog.',
  ),
  recoveryMaxLag: def(
    'thalweg_recovery_max_lag_records',
    'gauge',
    '{record}',
    [] as const,
    'The lag of the furthest-behind secondary.',
  ),
  rawUnread: def(
    'thalweg_raw_unread_records',
    'gauge',
    '{record}',
    [] as const,
    'Offsets raw acknowledged that its reads do not show yet (a lakehouse raw: its Iceberg metadata trailing its commits); recovery replays them once they show.',
  ),
  recoveryWindows: def(
    'thalweg_recovery_windows_total',
    'counter',
    '{window}',
    ['outcome'] as const,
    'Recovery windows by outcome (replayed, lost, timed-out, failed, trimmed, unread: raw did not give it back whole yet).',
  ),
  recoveryRecords: def(
    'thalweg_recovery_records_replayed_total',
    'counter',
    '{record}',
    [] as const,
    'Records recovery replayed into secondaries.',
  ),

  // Flow control.
  budgetSaturation: def(
    'thalweg_flow_budget_saturation_ratio',
    'gauge',
    '1',
    [] as const,
    'Byte budget in flight over what may be granted now, 0..1.',
  ),
  budgetInFlight: def(
    'thalweg_flow_budget_in_flight_bytes',
    'gauge',
    'By',
    [] as const,
    'Bytes admitted and not yet released by raw.',
  ),
  budgetLimit: def(
    'thalweg_flow_budget_limit_bytes',
    'gauge',
    'By',
    [] as const,
    'Bytes the budget may grant now (a fraction of it while warming up).',
  ),
  bottleneck: def(
    'thalweg_flow_bottleneck',
    'gauge',
    '1',
    ['diagnosis'] as const,
    '1 for the current bottleneck diagnosis (none, sink-bottleneck), 0 for the others.',
  ),
  backpressure: def(
    'thalweg_flow_backpressure_state',
    'gauge',
    '1',
    ['state'] as const,
    '1 for the current backpressure state (normal, degraded, critical, recovery), 0 for the others.',
  ),
  batchFactor: def(
    'thalweg_flow_batch_factor',
    'gauge',
    '1',
    [] as const,
    'The batch-size factor backpressure applies, 0..1.',
  ),
  stuck: def(
    'thalweg_flow_stuck_level',
    'gauge',
    '1',
    ['level'] as const,
    '1 for the stuck detector level (ok, warn, unhealthy, exit-requested), 0 for the others.',
  ),
  sourcePaused: def(
    'thalweg_flow_source_paused',
    'gauge',
    '1',
    [] as const,
    '1 while flow control holds the source paused.',
  ),
  channelFill: def(
    'thalweg_flow_channel_fill_ratio',
    'gauge',
    '1',
    [] as const,
    "The fuller of raw's queue and the source's prefetch, 0..1.",
  ),

  // Quarantine.
  quarantined: def(
    'thalweg_quarantine_records_total',
    'counter',
    '{record}',
    ['reason'] as const,
    'Records refused and sent to the quarantine lane, by reason (raw still holds them).',
  ),
  quarantineShed: def(
    'thalweg_quarantine_shed_total',
    'counter',
    '{record}',
    ['reason'] as const,
    'Quarantine entries dropped because the lane was full (raw still holds them).',
  ),
  quarantineDepth: def(
    'thalweg_quarantine_lane_depth',
    'gauge',
    '{record}',
    [] as const,
    'Entries waiting in the quarantine lane.',
  ),

  // The source and its position.
  sourceRecords: def(
    'thalweg_source_records_total',
    'counter',
    '{record}',
    [] as const,
    'Records read from the source.',
  ),
  sourceBytes: def(
    'thalweg_source_bytes_total',
    'counter',
    'By',
    [] as const,
    'Record bytes read from the source.',
  ),
  sourceLag: def(
    'thalweg_source_lag_records',
    'gauge',
    '{record}',
    ['topic', 'partition'] as const,
    "The partition's log end minus the committed position.",
  ),
  sourceLossWindow: def(
    'thalweg_source_loss_window_records',
    'gauge',
    '{record}',
    [] as const,
    'For a source that can neither rewind nor resume: records read and not yet durable in raw, lost if the process died now. Absent for every other source.',
  ),
  // Content dedup per source stream (ADR 0036): measure the rate before recommending it.
  dedupChecked: def(
    'thalweg_dedup_checked_records_total',
    'counter',
    '{record}',
    ['stream'] as const,
    'Records looked up against the content-dedup seen-set (live and in recovery replays).',
  ),
  dedupDropped: def(
    'thalweg_dedup_dropped_records_total',
    'counter',
    '{record}',
    ['stream'] as const,
    'Upstream duplicates kept from the secondaries (raw holds every one of them).',
  ),
  dedupSkipped: def(
    'thalweg_dedup_skipped_records_total',
    'counter',
    '{record}',
    ['stream'] as const,
    'Records that went on with dedup off because the seen-set failed or timed out.',
  ),
  dedupRate: def(
    'thalweg_dedup_duplicate_ratio',
    'gauge',
    '1',
    ['stream'] as const,
    'Dropped over checked, 0..1: the duplicate rate of the stream.',
  ),
  // The coordination tier (ADR 0035), when the topology has one.
  coordinationUp: def(
    'thalweg_coordination_up',
    'gauge',
    '1',
    ['mode'] as const,
    'Whether the coordination tier commits writes: 1 with a quorum (or mode 1), 0 without one (leases wait out their TTL, content dedup is off). Absent without a coordination tier or in mode 0.',
  ),
  coordinationMembers: def(
    'thalweg_coordination_members',
    'gauge',
    '{member}',
    [] as const,
    'Members of the etcd cluster (modes 3, 5 and 7).',
  ),
  coordinationReachable: def(
    'thalweg_coordination_members_reachable',
    'gauge',
    '{member}',
    [] as const,
    'Members of the etcd cluster that answered the last health check (modes 3, 5 and 7).',
  ),
  coordinationBackup: def(
    'thalweg_coordination_last_backup_timestamp_seconds',
    'gauge',
    's',
    [] as const,
    'Mode 1: when the last backup to object storage was taken, in seconds since the epoch; what a loss of the node costs is the state since then. Absent before the first backup.',
  ),
  commits: def(
    'thalweg_position_commits_total',
    'counter',
    '{commit}',
    [] as const,
    'Source positions committed after raw was durable.',
  ),
  commitFailures: def(
    'thalweg_position_commit_failures_total',
    'counter',
    '{commit}',
    [] as const,
    'Position commits that failed (the position lags until the next one).',
  ),
  coverageRecorded: def(
    'thalweg_coverage_recorded_total',
    'counter',
    '{receipt}',
    [] as const,
    'Durable receipts written to the coverage store.',
  ),
  coverageFailures: def(
    'thalweg_coverage_write_failures_total',
    'counter',
    '{write}',
    [] as const,
    'Coverage store writes that failed (coverage lags until retried).',
  ),

  // Health.
  live: def(
    'thalweg_health_live',
    'gauge',
    '1',
    [] as const,
    '1 while the liveness probe passes (it fails only on a genuine deadlock).',
  ),
  ready: def(
    'thalweg_health_ready',
    'gauge',
    '1',
    [] as const,
    '1 while the readiness probe passes.',
  ),
} as const satisfies Readonly<Record<string, MetricDef>>;

export type MetricKey = keyof typeof METRICS;

/** Every metric definition, in catalog order. */
export const METRIC_DEFS: readonly MetricDef[] = Object.values(METRICS);
