import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';

// The README's part example is a file of this folder, word for word, so
// zerobus-part-example.test.ts can exercise what it declares; it runs here
// against the package's sources, where users import the package. (Every
// README block is also compiled and run on its own by packages/doc-blocks.)
it.each([['## Declaring it once: `zerobus(...)`', './zerobus-part-example.ts']])(
  "the README's example under %s is %s, word for word",
  async (heading, file) => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const at = readme.indexOf(heading);
    expect(at).toBeGreaterThanOrEqual(0);
    const block = /```ts\n([\s\S]*?)```\n/.exec(readme.slice(at))?.[1];
    const example = await readFile(new URL(file, import.meta.url), 'utf8');
    expect(block).toBe(
      example.replace("from '../../src/index.js'", "from '@thalweg/sink-zerobus'"),
    );
  },
);
