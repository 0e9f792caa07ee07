// `pnpm run docs` (`pnpm docs` is pnpm's own command): the API reference,
// built by typedoc into docs/api/ (not committed). Its entry points are read from each public package's
// package.json `exports` (subpaths such as offset-store/leveldb included), so
// a new package or subpath is documented without editing this script. It
// reads the TypeScript sources (the `@thalweg/source` condition), so it needs
// no build first. Any typedoc warning fails the run: a broken {@link} or an
// exported type that the reference cannot reach is a doc that has rotted.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Application, LogLevel } from 'typedoc';

const root = join(import.meta.dirname, '..');
const started = performance.now();

const entryPoints = [];
for (const dir of readdirSync(join(root, 'packages')).sort()) {
  const manifest = join(root, 'packages', dir, 'package.json');
  if (!existsSync(manifest)) continue;
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
  if (pkg.private === true) continue;
  for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
    const source = typeof target === 'object' ? target['@thalweg/source'] : undefined;
    if (typeof source !== 'string') {
      throw new Error(
        `${pkg.name}: export ${subpath} has no @thalweg/source condition to document`,
      );
    }
    entryPoints.push(join('packages', dir, source));
  }
}

// One program over every package's sources, resolved to sources across
// packages as the tests do.
mkdirSync(join(root, '.cache'), { recursive: true });
const tsconfig = join(root, '.cache', 'typedoc.tsconfig.json');
writeFileSync(
  tsconfig,
  JSON.stringify({
    extends: '../tsconfig.base.json',
    compilerOptions: {
      composite: false,
      noEmit: true,
      customConditions: ['@thalweg/source'],
      rootDir: '..',
    },
    files: entryPoints.map((e) => join('..', e)),
  }),
);

// Source links are made from the `origin` remote; a checkout without one
// (a fresh `git init`, an unpacked tarball) gets a reference without them
// rather than a warning that fails the run.
const hasOrigin = spawnSync('git', ['remote', 'get-url', 'origin'], { cwd: root }).status === 0;

const app = await Application.bootstrapWithPlugins({
  ...(hasOrigin ? {} : { disableSources: true }),
  entryPoints,
  entryPointStrategy: 'resolve',
  tsconfig,
  out: join(root, 'docs', 'api'),
  name: 'thalweg',
  readme: join(root, 'README.md'),
  excludePrivate: true,
  excludeInternal: true,
  treatWarningsAsErrors: true,
  // tsc -b type-checks these sources already; typedoc only reads them.
  skipErrorChecking: true,
  logLevel: LogLevel.Warn,
});
function failOnWarnings(step) {
  if (!app.logger.hasErrors() && !app.logger.hasWarnings()) return;
  console.error(
    `pnpm docs: typedoc warned or failed while ${step} (above); no reference was written`,
  );
  process.exit(1);
}

const project = await app.convert();
if (project === undefined) {
  console.error('typedoc could not convert the project');
  process.exit(1);
}
// Modules by their import names (`@thalweg/offset-store/leveldb`), not by
// the source paths typedoc derives (`offset-store/src/leveldb`).
for (const module of project.children ?? []) {
  module.name = `@thalweg/${module.name.replace(/\/src(?=\/|$)/, '')}`;
}
app.validate(project);
failOnWarnings('checking the comments');
await app.generateDocs(project, app.options.getValue('out'));
failOnWarnings('writing docs/api/');
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.error(`docs/api/ from ${entryPoints.length} entry points in ${seconds} s`);
