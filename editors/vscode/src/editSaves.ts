/**
 * An agent's edit arrives as workspace/applyEdit; with files.autoSave set to afterDelay VS Code saves the files a
 * moment after applying it. The answer waits for those saves, briefly, so that what the server tells the
 * model ("edited", or "edited in the editor, unsaved") is true when it is told. Pure (no vscode import): unit-tested.
 */

/** The LSP WorkspaceEdit fields that name documents. */
export interface WireEdit {
  changes?: Record<string, unknown>;
  documentChanges?: Array<{ textDocument?: { uri: string }; kind?: string; uri?: string; newUri?: string }>;
}

/** The documents an edit changes (text edits, created files, renames' targets), each once. */
export function editedUris(edit: WireEdit): string[] {
  const uris = new Set<string>(Object.keys(edit.changes ?? {}));
  for (const c of edit.documentChanges ?? []) {
    const uri = c.textDocument?.uri ?? (c.kind === 'rename' ? c.newUri : c.kind === 'create' ? c.uri : undefined);
    if (uri) uris.add(uri);
  }
  return [...uris];
}

/**
 * How long to wait for VS Code to save an applied edit (0: it does not save by itself). Only `files.autoSave:
 * afterDelay` (with a short delay) saves an agent's edit on its own: `files.refactoring.autoSave` applies to edits
 * marked as refactorings, which the sidecar's are not, so waiting for it would only delay every edit.
 */
export function saveWaitMs(setting: (key: string) => unknown): number {
  if (setting('files.autoSave') !== 'afterDelay') return 0;
  const delay = Number(setting('files.autoSaveDelay') ?? 1000);
  return delay <= 2000 ? delay + 1000 : 0;
}

/** Resolve once none of `uris` is dirty (or after `ms`): checked at once and at each save. */
export function waitUntilSaved(
  uris: string[], isDirty: (uri: string) => boolean, onSaved: (listener: () => void) => { dispose(): void }, ms: number,
): Promise<void> {
  if (ms <= 0 || !uris.some(isDirty)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => { sub.dispose(); clearTimeout(timer); resolve(); };
    const sub = onSaved(() => { if (!uris.some(isDirty)) done(); });
    const timer = setTimeout(done, ms);
  });
}
