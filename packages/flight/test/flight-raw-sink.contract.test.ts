import { describeSinkContract } from '@thalweg/contracts';
import { flightClient } from '../src/flight-client.js';
import { flightServer } from '../src/flight-server.js';
import { fakeFlightStore } from './fake-flight-store.js';
import { flightRawSubject } from './flight-raw-subject.js';

let datasets = 0;

describeSinkContract('FlightRawSink over the in-memory Flight store', {
  lane: 'primary-raw',
  replay: 'deduplicated',
  refusesMalformed: true,
  restarts: true,
  open: async (target) => {
    const server = await flightServer(fakeFlightStore());
    const client = flightClient(server.url);
    datasets += 1;
    return flightRawSubject(client, `contract-${datasets}`, target, async () => {
      client.close();
      await server.close();
    });
  },
});
