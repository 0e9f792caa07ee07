// The packages as a user gets them (ADR 0027): packs every public package
// with pnpm, installs the tarballs with npm into fresh projects outside the
// repository, compiles a strict nodenext consumer with skipLibCheck false
// against them and runs it. Two projects:
//   full     every public package (and the clients of every subpath): each
//            entry loads, and files -> raw segments -> coverage runs;
//   leveldb  @thalweg/offset-store and classic-level only: it runs, and no
//            pg and no AWS SDK is in its node_modules;
//   quickstart  what README's install line names: the README's files -> raw
//            -> fake Zerobus quick start, extracted from README.md as it is,
//            compiles and runs (its own assertions), with no pg and no AWS
//            SDK installed.
// Our packages come from the tarballs alone (overrides by path; the check
// fails if npm resolved one from anywhere else); third-party packages from
// the registry through a cache in .cache/npm, preferring it. Ends with one
// JSON line; exits 1 on any failure.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = join(import.meta.dirname, '..');
const npmCache = join(root, '.cache', 'npm');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const started = Date.now();
const work = mkdtempSync(join(tmpdir(), 'twg-pack-'));
const keep = process.env.THALWEG_PACK_KEEP === '1';
const failures = [];
const report = {};

/** The versions the workspace itself builds and tests with. */
function workspaceVersion(name) {
  for (const dir of readdirSync(join(root, 'packages'))) {
    const file = join(root, 'packages', dir, 'package.json');
    if (!existsSync(file)) continue;
    const j = JSON.parse(readFileSync(file, 'utf8'));
    for (const deps of [j.dependencies, j.devDependencies, j.optionalDependencies]) {
      const v = deps?.[name];
      if (v !== undefined && /^\d/.test(v)) return v;
    }
  }
  const v = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies?.[name];
  if (v === undefined) throw new Error(`no workspace package pins ${name}`);
  return v;
}

function run(what, cmd, args, cwd, timeoutMs) {
  const t = Date.now();
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: timeoutMs, env: process.env });
  const ms = Date.now() - t;
  if (r.status !== 0) {
    const why = r.error ? r.error.message : `exit ${r.status ?? r.signal}`;
    throw new Error(`${what} failed (${why}) in ${cwd}:\n${r.stdout}\n${r.stderr}`.trim());
  }
  return { stdout: r.stdout, ms };
}

function check(ok, message) {
  if (!ok) failures.push(message);
}

function publicPackages() {
  return readdirSync(join(root, 'packages'))
    .map((dir) => ({ dir: join(root, 'packages', dir) }))
    .filter((p) => existsSync(join(p.dir, 'package.json')))
    .map((p) => ({ ...p, json: JSON.parse(readFileSync(join(p.dir, 'package.json'), 'utf8')) }))
    .filter((p) => p.json.private !== true);
}

/** Every file an `exports` condition (other than the workspace's source one) points at. */
function exportedFiles(json) {
  const out = [];
  const walk = (v) => {
    if (typeof v === 'string') out.push(v.replace(/^\.\//, ''));
    else if (v !== null && typeof v === 'object')
      for (const [k, w] of Object.entries(v)) if (k !== '@thalweg/source') walk(w);
  };
  walk(json.exports);
  if (json.bin) walk(json.bin);
  return out;
}

function pack(pkgs, dest) {
  const rootJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const tarballs = {};
  for (const p of pkgs) {
    const name = p.json.name;
    const { stdout } = run(
      `pnpm pack ${name}`,
      'pnpm',
      ['pack', '--pack-destination', dest],
      p.dir,
      60_000,
    );
    const file = readdirSync(dest).find(
      (f) => f === `${name.slice(1).replace('/', '-')}-${p.json.version}.tgz`,
    );
    if (file === undefined) throw new Error(`pnpm pack ${name} wrote no tarball:\n${stdout}`);
    tarballs[name] = join(dest, file);
    const listed = new Set(
      run(`tar ${file}`, 'tar', ['tzf', tarballs[name]], dest, 30_000).stdout.split('\n'),
    );
    for (const f of ['LICENSE', 'package.json', ...exportedFiles(p.json)])
      check(listed.has(`package/${f}`), `${name}: the tarball lacks ${f}`);
    const packed = JSON.parse(
      run(`tar ${file}`, 'tar', ['xzOf', tarballs[name], 'package/package.json'], dest, 30_000)
        .stdout,
    );
    const specs = {
      ...packed.dependencies,
      ...packed.peerDependencies,
      ...packed.optionalDependencies,
    };
    for (const [dep, spec] of Object.entries(specs))
      check(!String(spec).startsWith('workspace:'), `${name}: packed ${dep}@${spec}`);
    check(packed.license === 'Apache-2.0', `${name}: license ${packed.license}`);
    check(
      JSON.stringify(packed.engines) === JSON.stringify(rootJson.engines),
      `${name}: engines differ from the root's`,
    );
    check(
      packed.repository?.url === rootJson.repository.url &&
        packed.repository?.directory === `packages/${p.dir.split('/').pop()}`,
      `${name}: repository ${JSON.stringify(packed.repository)}`,
    );
    check(Array.isArray(packed.keywords) && packed.keywords.length > 0, `${name}: no keywords`);
  }
  return tarballs;
}

/** A fresh npm project: our packages by path (overrides pin every nested use too), the rest from the registry. */
function install(name, tarballs, ours, theirs) {
  const dir = join(work, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  const byPath = Object.fromEntries(Object.entries(tarballs).map(([n, t]) => [n, `file:${t}`]));
  const dependencies = Object.fromEntries([
    ...ours.map((n) => [n, byPath[n]]),
    ...theirs.map((n) => [n, workspaceVersion(n)]),
  ]);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify(
      {
        name: `twg-${name}-consumer`,
        private: true,
        type: 'module',
        dependencies,
        overrides: byPath,
      },
      null,
      2,
    ),
  );
  const npmArgs = [
    'install',
    '--cache',
    npmCache,
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
  ];
  const { ms } = run(`npm install (${name})`, 'npm', npmArgs, dir, 240_000);
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'));
  for (const [path, entry] of Object.entries(lock.packages)) {
    const m = /(?:^|\/)node_modules\/(@thalweg\/[^/]+)$/.exec(path);
    if (m === null) continue;
    const from = String(entry.resolved ?? '');
    const tarball = from.startsWith('file:') ? resolve(dir, from.slice('file:'.length)) : from;
    check(tarball === tarballs[m[1]], `${name}: ${path} resolved from ${from}, not its tarball`);
  }
  return { dir, installMs: ms };
}

/** The README's quick start that needs no service: the first plain ```ts block under "## Quick start". */
function quickStartBlock() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const at = readme.indexOf('\n## Quick start\n');
  check(at >= 0, 'README.md has no "## Quick start" section');
  const block = /\n```ts\n([\s\S]*?)\n```\n/.exec(readme.slice(at))?.[1];
  check(block !== undefined, "README.md's quick start has no plain ```ts block");
  return `${block}\nconsole.log(JSON.stringify({ consumer: 'readme-quick-start', ran: true }));\n`;
}

/** The packages of the install line in README's "Installing the packages". */
function readmeInstallLine() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const line = /\nnpm i (@thalweg\/[^\n]+)\n/.exec(readme)?.[1];
  check(line !== undefined, 'README.md has no `npm i @thalweg/...` line');
  return line.split(/\s+/);
}

function compileAndRun(dir, consumer, source) {
  if (source === undefined) {
    copyFileSync(
      join(import.meta.dirname, 'pack-check', consumer),
      join(dir, 'src', 'consumer.ts'),
    );
  } else writeFileSync(join(dir, 'src', 'consumer.ts'), source);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023'],
        module: 'nodenext',
        moduleResolution: 'nodenext',
        types: ['node'],
        strict: true,
        skipLibCheck: false,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        outDir: 'dist',
        rootDir: 'src',
      },
      include: ['src'],
    }),
  );
  const compiled = run(`tsc (${consumer})`, process.execPath, [tsc, '-p', dir], dir, 120_000);
  const ran = run(
    `node ${consumer}`,
    process.execPath,
    [join(dir, 'dist', 'consumer.js')],
    dir,
    60_000,
  );
  return {
    compileMs: compiled.ms,
    runMs: ran.ms,
    output: JSON.parse(ran.stdout.trim().split('\n').pop()),
  };
}

function sizeKb(dir) {
  return Number(run('du', 'du', ['-sk', dir], dir, 30_000).stdout.split('\t')[0]);
}

try {
  mkdirSync(npmCache, { recursive: true });
  run('tsc -b', process.execPath, [tsc, '-b'], root, 300_000);
  const pkgs = publicPackages();
  const tarDir = join(work, 'tarballs');
  mkdirSync(tarDir);
  const tarballs = pack(pkgs, tarDir);
  report.packed = Object.keys(tarballs).length;

  const all = Object.keys(tarballs);
  // What a user adds: @types/node, the S3 client for /s3 (no package of ours
  // depends on it), the peers apache-arrow, vitest and @opentelemetry/api (pinned, not left to
  // npm's choice). pg, @types/pg and classic-level must come through the
  // packages that declare them (sink-postgres, cli).
  const full = install('full', tarballs, all, [
    '@types/node',
    '@aws-sdk/client-s3',
    'apache-arrow',
    'vitest',
    '@opentelemetry/api',
  ]);
  report.full = { installMs: full.installMs, ...compileAndRun(full.dir, 'consumer-full.ts') };

  const level = install(
    'leveldb',
    tarballs,
    ['@thalweg/offset-store'],
    ['classic-level', '@types/node'],
  );
  report.leveldb = {
    installMs: level.installMs,
    ...compileAndRun(level.dir, 'consumer-leveldb.ts'),
  };
  const modules = join(level.dir, 'node_modules');
  const present = readdirSync(modules).flatMap((n) =>
    n.startsWith('@') ? readdirSync(join(modules, n)).map((m) => `${n}/${m}`) : [n],
  );
  const forbidden = present.filter((n) =>
    /^(pg|pg-.*|@types\/pg|@aws-sdk\/.*|@smithy\/.*|@aws-crypto\/.*)$/.test(n),
  );
  check(forbidden.length === 0, `the LevelDB-only install holds ${forbidden.join(', ')}`);
  check(present.includes('classic-level'), 'the LevelDB-only install has no classic-level');
  report.leveldb.nodeModulesKb = sizeKb(modules);
  report.leveldb.packages = present.length;

  const named = readmeInstallLine();
  const quick = install(
    'quickstart',
    tarballs,
    named.filter((n) => n.startsWith('@thalweg/')),
    [...named.filter((n) => !n.startsWith('@thalweg/')), '@types/node'],
  );
  report.quickstart = {
    installMs: quick.installMs,
    ...compileAndRun(quick.dir, 'README.md quick start', quickStartBlock()),
  };
  const quickModules = join(quick.dir, 'node_modules');
  const quickPresent = readdirSync(quickModules).flatMap((n) =>
    n.startsWith('@') ? readdirSync(join(quickModules, n)).map((m) => `${n}/${m}`) : [n],
  );
  const quickForbidden = quickPresent.filter((n) =>
    /^(pg|pg-.*|@types\/pg|@aws-sdk\/.*|@smithy\/.*|@aws-crypto\/.*)$/.test(n),
  );
  check(quickForbidden.length === 0, `the quick start install holds ${quickForbidden.join(', ')}`);
  report.quickstart.nodeModulesKb = sizeKb(quickModules);
} catch (e) {
  failures.push(e instanceof Error ? e.message : String(e));
} finally {
  if (keep) report.kept = work;
  else rmSync(work, { recursive: true, force: true });
}
report.ms = Date.now() - started;
report.failures = failures;
console.log(JSON.stringify({ check: 'pack', ...report }));
for (const f of failures) console.error(`pack check: ${f}`);
process.exit(failures.length === 0 ? 0 : 1);
