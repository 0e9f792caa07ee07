// Lint: typescript-eslint's strict type-aware rules over every package.
// Formatting is prettier's job (`pnpm format:check`), not a lint rule.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      '**/dist/**',
      '**/dist-test/**',
      '**/node_modules/**',
      '**/.cache/**',
      'coverage/**',
      'docs/api/**',
    ],
  },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // An interface method that happens to complete synchronously is still
      // declared async, so that its failures are rejections, never throws.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Repository tooling outside the packages' tsconfigs: syntax rules only.
    files: ['*.js', '*.ts', 'scripts/**/*.mjs', 'scripts/**/*.ts'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    files: ['**/test/**/*.ts', '**/bench/**/*.ts'],
    rules: {
      // Tests assert on values whose shape the test itself constructed.
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
