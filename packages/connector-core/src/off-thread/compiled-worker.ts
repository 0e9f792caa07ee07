/**
 * Where the compiled worker module `file` is, for the module at `moduleUrl`
 * that starts it: beside that module when it runs compiled (in `dist/`),
 * and under `distDir` (relative to the source module) when it runs as
 * TypeScript under vitest, since Node 20 cannot start a `.ts` file as a
 * worker. `OffThread` falls back to the calling thread when neither exists.
 */
export function compiledWorker(moduleUrl: string, file: string, distDir: string): URL {
  const dir = distDir.endsWith('/') ? distDir : `${distDir}/`;
  return new URL(moduleUrl.endsWith('.ts') ? `${dir}${file}` : `./${file}`, moduleUrl);
}
