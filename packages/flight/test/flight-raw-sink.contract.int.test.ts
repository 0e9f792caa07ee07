import { describeSinkContract } from '@thalweg/contracts';
import { flight, uniqueName } from '@thalweg/test-services';
import { afterAll } from 'vitest';
import { flightClient } from '../src/flight-client.js';
import { action } from './flight-peer.js';
import { flightRawSubject } from './flight-raw-subject.js';

// The same clauses the in-memory store passes, against pyarrow's server:
// a batch is held (fsynced there) before its PutResult, so before it is confirmed.
const client = flightClient(flight().url);
afterAll(() => client.close());

describeSinkContract("FlightRawSink over pyarrow's Flight server", {
  lane: 'primary-raw',
  replay: 'deduplicated',
  refusesMalformed: true,
  restarts: true,
  open: (target) => {
    const dataset = uniqueName('twg-contract');
    return Promise.resolve(
      flightRawSubject(client, dataset, target, async () => {
        await action(client, 'drop', { dataset });
      }),
    );
  },
});
