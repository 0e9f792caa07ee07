import type { DeliveryPressure } from '@thalweg/connector-core';
import { check } from './errors.js';
import type { SinkContractCase } from './sink-cases.js';
import { contractSpans, submitSpan, withSubject } from './sink-steps.js';

/**
 * A sink that reports its pressure (`Sink.pressure`, the channel and
 * write-failure signals of flow control) reports a fill in [0, 1] and a
 * count of failures, and reads an empty queue with no failures once a
 * flush has confirmed everything. A sink without it has nothing to check.
 */
export const pressureReported: SinkContractCase = {
  name: 'reports its queue fill and failing writes in range, and an empty queue after a flush',
  applies: () => true,
  run: (factory) =>
    withSubject(factory, async (subject, target) => {
      const read = subject.sink.pressure?.bind(subject.sink);
      if (read === undefined) return;
      const clause = 'pressure() reads a fill in [0, 1] and a non-negative count of failures';
      const inRange = (when: string, p: DeliveryPressure): void => {
        check(
          p.queueFill >= 0 && p.queueFill <= 1,
          clause,
          () => `${when}: queueFill ${p.queueFill}`,
        );
        check(
          Number.isSafeInteger(p.consecutiveFailures) && p.consecutiveFailures >= 0,
          clause,
          () => `${when}: consecutiveFailures ${p.consecutiveFailures}`,
        );
      };
      inRange('at open', read());
      for (const span of contractSpans(3)) {
        await submitSpan(factory, subject, target, span);
        inRange('after a submit', read());
      }
      await subject.sink.flush();
      const after = read();
      check(
        after.queueFill === 0 && after.consecutiveFailures === 0,
        'once a flush confirmed everything, the queue is empty and nothing is failing',
        () => `after flush: ${JSON.stringify(after)}`,
      );
    }),
};
