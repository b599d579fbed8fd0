// Lint: typescript-eslint's type-aware rules catch what review misses in
// async code: a floating promise is a silent bug (its rejection goes nowhere
// and its work races the code after it), a promise passed where a callback's
// result is ignored is another, and a switch that forgets a case of a union
// is a third. Formatting is Prettier's job, so no stylistic rules here.
// TypeScript's own errors are reported here too (scripts/eslint-type-errors.js),
// from the program the type-aware rules build anyway.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import typeErrors from './scripts/eslint-type-errors.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bench/**', 'fixtures/**', '**/*.js', '**/*.cjs', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
    plugins: { local: typeErrors },
    rules: {
      'local/type-errors': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // A method that implements a promise-returning interface may have nothing to await.
      '@typescript-eslint/require-await': 'off',
      // Sanitizers strip control characters on purpose.
      'no-control-regex': 'off',
      // domhandler's node types are a string enum, compared with its string values.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
      // An abort passes the signal's reason on, whatever it is: that is the contract of AbortSignal.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    // Tests read JSON records and poke at values on purpose: `any` from
    // JSON.parse and unbound expect(obj.method) are the point, not a bug.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
