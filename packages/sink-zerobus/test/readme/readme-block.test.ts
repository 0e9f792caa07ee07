import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';

it("the README's fake-transport example is fake-transport-example.test.ts, word for word", async () => {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const at = readme.indexOf('## Testing your service with the fake transport');
  expect(at).toBeGreaterThanOrEqual(0);
  const block = /```ts\n([\s\S]*?)```\n/.exec(readme.slice(at))?.[1];
  const example = await readFile(
    new URL('./fake-transport-example.test.ts', import.meta.url),
    'utf8',
  );
  // The example runs here against the package's sources; users import the package.
  expect(block).toBe(example.replace("from '../../src/index.js'", "from '@thalweg/sink-zerobus'"));
});
