import { describe, expect, it } from 'vitest';
import { classifyZerobusError, type ErrorSite } from '../src/classify-error.js';
import type { ZerobusFailure } from '../src/errors.js';

const cases: [string, ErrorSite, ZerobusFailure][] = [
  ['Failed to extract workspace_id from endpoint', 'create', 'fatal-config'],
  ['UC table name is invalid: foo', 'create', 'fatal-config'],
  ['Arrow schema does not match the target table', 'submit', 'fatal-config'],
  ['status: PermissionDenied, message: "no access"', 'create', 'fatal-config'],
  ['Failed to ingest batch: Invalid argument: column x', 'submit', 'poison-batch'],
  ['Token fetch failed: connection refused', 'create', 'transient'],
  ['status: Unavailable, message: "try again"', 'wait', 'transient'],
  ['deadline has elapsed', 'wait', 'transient'],
  ['status: InvalidArgument, message: "bad offset"', 'wait', 'poison-stream'],
  ['status: OutOfRange', 'wait', 'poison-stream'],
  ['something nobody has seen before', 'wait', 'poison-stream'],
];

describe('classifyZerobusError', () => {
  it.each(cases)('%s at %s is %s', (message, site, expected) => {
    expect(classifyZerobusError(new Error(message), site)).toBe(expected);
  });

  it('classifies non-Error values by their string form', () => {
    expect(classifyZerobusError('Unavailable', 'submit')).toBe('transient');
  });
});
