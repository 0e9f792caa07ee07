import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const PIPELINE_ERROR_CODES = [
  'TWG_PIPELINE_TOPOLOGY_INVALID',
  'TWG_PIPELINE_RAW_FAILED',
  'TWG_PIPELINE_COMMIT_FAILED',
  /** The coverage store refused a write in a way no retry can fix (fatal-config). */
  'TWG_PIPELINE_COVERAGE_FAILED',
  'TWG_PIPELINE_STUCK',
  'TWG_PIPELINE_STATE',
  /** Raw lacks, below where the source resumes, a range its coverage recorded (raw-hole-guard.ts). */
  'TWG_PIPELINE_RAW_HOLE',
  /** A dq-audit file line other than the last fails its checksum or does not parse (ADR 0026). */
  'TWG_PIPELINE_DQ_AUDIT_CORRUPT',
  /** An entry handed to a dq-audit store that no store may hold (a field named). */
  'TWG_PIPELINE_DQ_AUDIT_INVALID',
] as const;

export type PipelineErrorCode = (typeof PIPELINE_ERROR_CODES)[number];

const CLASS_OF: Record<PipelineErrorCode, ErrorClass> = {
  TWG_PIPELINE_TOPOLOGY_INVALID: 'fatal-config',
  TWG_PIPELINE_RAW_FAILED: 'fatal-config',
  TWG_PIPELINE_COMMIT_FAILED: 'fatal-config',
  TWG_PIPELINE_COVERAGE_FAILED: 'fatal-config',
  TWG_PIPELINE_STUCK: 'fatal-config',
  TWG_PIPELINE_STATE: 'fatal-config',
  TWG_PIPELINE_RAW_HOLE: 'fatal-config',
  TWG_PIPELINE_DQ_AUDIT_CORRUPT: 'fatal-config',
  TWG_PIPELINE_DQ_AUDIT_INVALID: 'fatal-config',
};

/**
 * A pipeline-level failure. Every one of them stops the pipeline: the
 * gating path (source -> raw -> position) cannot carry on past any of them
 * without risking a position that leads what raw holds.
 */
export class PipelineError extends ThalwegError<PipelineErrorCode> {
  constructor(code: PipelineErrorCode, message: string, cause?: unknown) {
    super({ code, errorClass: CLASS_OF[code], message, cause });
  }
}
