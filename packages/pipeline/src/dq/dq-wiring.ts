import { PipelineError } from '../errors.js';
import type { PipelineSpec, SecondarySpec } from '../topology.js';
import { dqChecksOf } from './dq-check.js';
import { DqAuditRecorder } from './dq-audit-recorder.js';

/**
 * The pipeline's dq-audit recorder over the spec's store. A secondary that
 * declares checks needs a store: the trail is the authoritative record of
 * their outcomes (the quarantine sheds under pressure), so a topology that
 * would keep it nowhere is refused at open, naming the secondary.
 */
export function dqAuditFor(spec: PipelineSpec, log: (line: string) => void): DqAuditRecorder {
  if (spec.dqAudit === undefined) {
    const i = (spec.secondaries ?? []).findIndex((s) => dqChecksOf(s.derive).length > 0);
    const s = spec.secondaries?.[i];
    if (s !== undefined) {
      throw new PipelineError(
        'TWG_PIPELINE_TOPOLOGY_INVALID',
        `secondaries[${i}] declares dq checks (${dqChecksOf(s.derive).join(', ')}) ` +
          'but the spec has no dqAudit store to record their outcomes in',
      );
    }
  }
  return new DqAuditRecorder(spec.dqAudit ?? null, (line) => log(line));
}

/**
 * The secondaries with each derivation reporting its checks' outcomes to
 * `dq` under the sink's name (`name(i)`, asked as each batch is derived):
 * the live lanes and recovery derive through these, so a replay reports too.
 */
export function auditedSecondaries(
  specs: readonly SecondarySpec<unknown>[],
  dq: DqAuditRecorder,
  name: (i: number) => string,
): SecondarySpec<unknown>[] {
  return specs.map((s, i) => ({ ...s, derive: dq.audited(s.derive, () => name(i)) }));
}
