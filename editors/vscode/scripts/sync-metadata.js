#!/usr/bin/env node
// Copies the two facts the extension's manifest shares with the Python package from where they are defined once:
//   the version      <- sidecar/__init__.py  (__version__; hatch builds the wheel and sdist from it)
//   the repository   <- pyproject.toml       ([project.urls] Repository; a placeholder until the project is published)
// into editors/vscode/package.json (version, repository.url) and package-lock.json (its two version fields).
// Only those values change; the files keep their layout.
//
// Usage: node scripts/sync-metadata.js [--check] [REPO]   (--check: change nothing, exit 1 naming what differs)
'use strict';
const fs = require('fs');
const path = require('path');

const args = process.argv.slice(2);
const check = args.includes('--check');
const repo = path.resolve(args.find((a) => a !== '--check') || path.join(__dirname, '..', '..', '..'));
const ext = path.join(repo, 'editors', 'vscode');

function must(re, file) {
  const m = re.exec(fs.readFileSync(path.join(repo, file), 'utf8'));
  if (!m) { console.error(`sync-metadata: no ${re} in ${file}`); process.exit(2); }
  return m[1];
}
const version = must(/^__version__ = "([^"]+)"$/m, 'sidecar/__init__.py');
const url = must(/^\[project\.urls\][^[]*?^Repository = "([^"]+)"$/ms, 'pyproject.toml');

const problems = [];
function sync(file, edits) {
  const full = path.join(ext, file);
  const before = fs.readFileSync(full, 'utf8');
  let text = before;
  for (const [what, re, value, current] of edits(JSON.parse(before))) {
    if (current === value) continue;
    problems.push(`${file}: ${what} ${current} (${what === 'version' ? 'sidecar/__init__.py' : 'pyproject.toml'} says ${value})`);
    text = text.replace(re, (_m, head, tail) => `${head}${value}${tail}`);
  }
  if (text === before || check) return;
  const json = JSON.parse(text); // still JSON, and now right
  for (const [what, , value, current] of edits(json)) {
    if (current !== value) { console.error(`sync-metadata: could not set ${what} in ${file}`); process.exit(2); }
  }
  fs.writeFileSync(full, text);
  console.log(`sync-metadata: ${file} now says version ${version}, repository ${url}`);
}

sync('package.json', (j) => [
  ['version', /^( {2}"version": ")[^"]*(")/m, version, j.version],
  ['repository', /("repository": \{[^}]*"url": ")[^"]*(")/, url, j.repository && j.repository.url],
]);
// package-lock.json: the top-level version, then the root package's (packages[""]), in that order in the file
sync('package-lock.json', (j) => [
  ['version', /^( {2}"version": ")[^"]*(")/m, version, j.version],
  ['version', /^( {2}"packages": \{\n {4}"": \{\n(?: {6}.*\n)*? {6}"version": ")[^"]*(")/m, version, j.packages[''].version],
]);

if (check && problems.length) {
  console.error(`sync-metadata: the extension's manifest differs from the package:\n  ${problems.join('\n  ')}\n` +
    'run `node editors/vscode/scripts/sync-metadata.js` (make release does)');
  process.exit(1);
}
