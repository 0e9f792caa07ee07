// The root test configuration. Vitest 4 no longer discovers a workspace file by
// itself, so every script passes this file with --config; it declares one
// project per package, so `--project <name>` runs a single package.
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

const root = import.meta.dirname;
const packages = readdirSync(join(root, 'packages')).filter((name) =>
  existsSync(join(root, 'packages', name, 'package.json')),
);

export default defineConfig({
  test: {
    projects: packages.map((name) => ({
      // Workspace packages resolve to their TypeScript sources in tests, so a
      // test run never depends on a stale dist/ of a sibling package.
      resolve: { conditions: ['@thalweg/source'] },
      test: {
        name,
        root: join(root, 'packages', name),
        include: ['test/**/*.test.ts'],
        // Integration tests start nothing themselves: the services are started
        // once by scripts/services/up.sh and handed over as THALWEG_* variables.
        testTimeout: 30_000,
        hookTimeout: 60_000,
      },
    })),
  },
});
