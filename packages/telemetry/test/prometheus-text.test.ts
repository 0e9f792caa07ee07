import { describe, expect, it } from 'vitest';
import { METRICS, prometheusText, type MetricFamily } from '../src/index.js';

describe('prometheusText', () => {
  it('writes HELP, TYPE and one line per sample, with labels escaped', () => {
    const families: MetricFamily[] = [
      {
        def: METRICS.pending,
        samples: [
          { labels: { sink: 'raw', role: 'primary-raw', stream: '0' }, value: 3 },
          { labels: { sink: 'a"b\\c\nd', role: 'secondary', stream: '1' }, value: 0.5 },
        ],
      },
    ];
    expect(prometheusText(families)).toBe(
      [
        `# HELP thalweg_ack_lane_pending_batches ${METRICS.pending.help}`,
        '# TYPE thalweg_ack_lane_pending_batches gauge',
        'thalweg_ack_lane_pending_batches{sink="raw",role="primary-raw",stream="0"} 3',
        'thalweg_ack_lane_pending_batches{sink="a\\"b\\\\c\\nd",role="secondary",stream="1"} 0.5',
        '',
      ].join('\n'),
    );
  });

  it('writes a histogram as cumulative buckets ending in +Inf, then sum and count', () => {
    const text = prometheusText([
      {
        def: METRICS.coalesce,
        samples: [
          {
            labels: { sink: 'raw', role: 'primary-raw', stream: '0' },
            histogram: {
              buckets: [
                { le: 1, count: 2 },
                { le: 2, count: 5 },
                { le: Number.POSITIVE_INFINITY, count: 6 },
              ],
              sum: 13,
              count: 6,
            },
          },
        ],
      },
    ]);
    const l = '{sink="raw",role="primary-raw",stream="0"';
    expect(text.split('\n').slice(2)).toEqual([
      `thalweg_ack_lane_coalesce_batches_bucket${l},le="1"} 2`,
      `thalweg_ack_lane_coalesce_batches_bucket${l},le="2"} 5`,
      `thalweg_ack_lane_coalesce_batches_bucket${l},le="+Inf"} 6`,
      `thalweg_ack_lane_coalesce_batches_sum${l}} 13`,
      `thalweg_ack_lane_coalesce_batches_count${l}} 6`,
      '',
    ]);
  });

  it('leaves out families without samples, and writes special values by name', () => {
    expect(prometheusText([{ def: METRICS.live, samples: [] }])).toBe('');
    const text = prometheusText([
      { def: METRICS.batchFactor, samples: [{ labels: {}, value: Number.NaN }] },
      { def: METRICS.budgetLimit, samples: [{ labels: {}, value: Number.POSITIVE_INFINITY }] },
    ]);
    expect(text).toContain('thalweg_flow_batch_factor NaN\n');
    expect(text).toContain('thalweg_flow_budget_limit_bytes +Inf\n');
  });
});
