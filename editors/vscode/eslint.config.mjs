// ESLint (flat config) for the extension, its tests and e2e drivers, the webview script and the build scripts:
// `npm run lint`, run by `make lint`. Formatting is not its business (the TypeScript compiler and review keep it).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['out/', 'dist/', 'server/', 'node_modules/'] },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'types/**/*.ts', 'e2e/**/*.ts'],
    rules: {
      // `_name` says an argument or binding is unused on purpose (an interface's shape, a destructured rest).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // The chat webview's script runs in the browser; its names are checked by `tsc -p tsconfig.webview.json`.
    files: ['media/**/*.js'],
    languageOptions: { sourceType: 'script' },
    rules: { 'no-undef': 'off' },
  },
  {
    // The build scripts run in Node (CommonJS).
    files: ['scripts/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', process: 'readonly', __dirname: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
