import { InMemoryCoverage } from '../src/in-memory-coverage.js';
import { describeCoverageContract } from './contract/coverage-contract.js';

describeCoverageContract('in-memory', {
  persistent: false,
  fresh: async (sinks) => ({ store: new InMemoryCoverage({ sinks }) }),
});
