/**
 * An ESLint rule that reports TypeScript's own errors in each file: what
 * `tsc --noEmit -p tsconfig.test.json` reports, read from the program
 * typescript-eslint has already built for the type-aware rules (the same
 * tsconfig). The lint used to run tsc beside ESLint, which built a second
 * program of the same files and checked them all again: 18.6 s of CPU, a
 * quarter of the lint's on 2 cores.
 *
 * Each error keeps its TypeScript code and text, at its place in the file.
 * Errors that belong to no file (the compiler options, the global types) are
 * reported once, on the first file linted.
 *
 * One difference from tsc: typescript-eslint builds its program with
 * `noUnusedLocals` and `noUnusedParameters` on (its no-unused-vars needs
 * them), which our tsconfig leaves off. Their errors (an unused declaration,
 * import or parameter) are not tsc's, so they are dropped here; unused
 * variables are no-unused-vars' to report, under its own settings.
 */
import ts from 'typescript';

/** The "declared but never used" family: errors only with noUnusedLocals / noUnusedParameters. */
const UNUSED = new Set([6133, 6138, 6192, 6196, 6198, 6199, 6205]);

/** Programs whose file-less errors were reported already. */
const reported = new WeakSet();

const text = (d) => `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;

/** @type {import('eslint').Rule.RuleModule} */
const typeErrors = {
  meta: {
    type: 'problem',
    docs: { description: "TypeScript's errors in the file (tsc --noEmit), from the program the type-aware rules use" },
    schema: [],
  },
  create(context) {
    const program = context.sourceCode.parserServices?.program;
    if (!program) throw new Error('type-errors needs type information: set parserOptions.project for this file');
    const file = program.getSourceFile(context.physicalFilename);
    if (!file) throw new Error(`type-errors: ${context.physicalFilename} is not in the TypeScript program`);
    return {
      'Program:exit'(node) {
        if (!reported.has(program)) {
          reported.add(program);
          for (const d of [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]) context.report({ node, message: text(d) });
        }
        for (const d of [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]) {
          if (UNUSED.has(d.code)) continue;
          const start = file.getLineAndCharacterOfPosition(d.start ?? 0);
          const end = file.getLineAndCharacterOfPosition((d.start ?? 0) + (d.length ?? 0));
          context.report({
            loc: { start: { line: start.line + 1, column: start.character }, end: { line: end.line + 1, column: end.character } },
            message: text(d),
          });
        }
      },
    };
  },
};

export default { rules: { 'type-errors': typeErrors } };
