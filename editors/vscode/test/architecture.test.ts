import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

/** The extension's module graph, read from src/ (type-only imports count: they tie the modules' meaning together):
 * no module imports one that imports it back. The TypeScript twin of tests/unit/test_architecture.py. */
const SRC = path.resolve(__dirname, '..', '..', 'src');

export function importsOf(text: string): string[] {
  const found: string[] = [];
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  for (const m of code.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) found.push(m[1]);
  return found;
}

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const file of tsFiles(SRC)) {
    const deps = importsOf(fs.readFileSync(file, 'utf8')).map((spec) => {
      const base = path.resolve(path.dirname(file), spec);
      return [`${base}.ts`, path.join(base, 'index.ts')].find((f) => fs.existsSync(f)) ?? `${base}.ts`;
    });
    g.set(path.relative(SRC, file), deps.map((d) => path.relative(SRC, d)));
  }
  return g;
}

/** The first cycle found, from a module back to itself; undefined when there is none. */
export function findCycle(g: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const visit = (m: string): string[] | undefined => {
    state.set(m, 'open');
    trail.push(m);
    for (const d of [...(g.get(m) ?? [])].sort()) {
      if (state.get(d) === 'open') return [...trail.slice(trail.indexOf(d)), d];
      if (!state.has(d)) {
        const found = visit(d);
        if (found) return found;
      }
    }
    trail.pop();
    state.set(m, 'done');
    return undefined;
  };
  for (const m of [...g.keys()].sort()) {
    if (!state.has(m)) {
      const found = visit(m);
      if (found) return found;
    }
  }
  return undefined;
}

describe('module graph', () => {
  it('sees imports, type-only and dynamic ones too, and not those in comments', () => {
    const text = [
      "import { a } from './a';", "import type { B } from '../b';", "import './c';", "const d = await import('./d');",
      "// import { e } from './e';", "/* import { f } from './f'; */", "import * as vscode from 'vscode';",
    ].join('\n');
    assert.deepEqual(importsOf(text), ['./a', '../b', './c', './d']);
  });

  it('finds and names a cycle', () => {
    assert.deepEqual(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]])), ['a', 'b', 'c', 'a']);
    assert.equal(findCycle(new Map([['a', ['b']], ['b', []]])), undefined);
  });

  it('has no import cycle in src/', () => {
    const g = graph();
    assert.ok(g.has('connection.ts') && g.get('connection.ts')!.includes('wording.ts'), 'the walk sees the imports');
    const cycle = findCycle(g);
    assert.equal(cycle, undefined, `import cycle: ${(cycle ?? []).join(' -> ')}`);
  });
});
