/**
 * The open-files tracker behind sidecar/ideContext: which files the user has open (most recently focused
 * first, at most 10), which one is active, its 1-based cursor and its selection (at most 16,384 characters).
 *
 * It knows nothing about VS Code: the adapter (ideContext.ts) feeds it editor events with VS Code's 0-based
 * positions and `Uri`-like file references; it answers with the wire shape. Changes are announced after a
 * 50 ms debounce so a burst of selection events becomes one notification.
 */
import { Cursor, IdeContextParams, OpenFile } from './protocol';

export const MAX_OPEN_FILES = 10;
export const MAX_SELECTED_TEXT = 16_384;
export const TRUNCATED_MARK = '... [TRUNCATED]';
export const DEBOUNCE_MS = 50;

/** The part of vscode.Uri the tracker needs. */
export interface FileRef {
  scheme: string;
  fsPath: string;
}

/** A VS Code position: 0-based line and character. */
export interface ZeroBasedPosition {
  line: number;
  character: number;
}

export interface TrackerOptions {
  now?: () => number;
  debounceMs?: number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

/** Only files on disk are context; untitled buffers, output panes, git: diffs and the like are not. */
export function isTrackable(ref: FileRef | undefined): ref is FileRef {
  return !!ref && ref.scheme === 'file' && !!ref.fsPath;
}

export function toCursor(pos: ZeroBasedPosition): Cursor {
  return { line: pos.line + 1, character: pos.character + 1 };
}

export function clipSelection(text: string | undefined): string | undefined {
  if (!text) return undefined;
  return text.length > MAX_SELECTED_TEXT ? text.slice(0, MAX_SELECTED_TEXT) + TRUNCATED_MARK : text;
}

export class OpenFilesTracker {
  private files: OpenFile[] = [];
  private trusted: boolean | undefined;
  private timer: unknown;
  private listeners: Array<(state: IdeContextParams) => void> = [];
  private readonly now: () => number;
  private readonly debounceMs: number;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (handle: unknown) => void;

  constructor(options: TrackerOptions = {}) {
    this.now = options.now ?? Date.now;
    this.debounceMs = options.debounceMs ?? DEBOUNCE_MS;
    this.setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer = options.clearTimer ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
  }

  /** Called with the state after each (debounced) change. */
  onDidChange(listener: (state: IdeContextParams) => void): { dispose(): void } {
    this.listeners.push(listener);
    return { dispose: () => { this.listeners = this.listeners.filter((l) => l !== listener); } };
  }

  /** A file editor got focus: it moves to the front as the active file, with its cursor and selection. */
  focus(ref: FileRef | undefined, cursor?: ZeroBasedPosition, selectedText?: string): void {
    if (!isTrackable(ref)) return;
    for (const f of this.files) this.deactivate(f);
    this.files = this.files.filter((f) => f.path !== ref.fsPath);
    const entry: OpenFile = { path: ref.fsPath, timestamp: this.now(), isActive: true };
    this.files.unshift(entry);
    if (this.files.length > MAX_OPEN_FILES) this.files.length = MAX_OPEN_FILES;
    this.applySelection(entry, cursor, selectedText);
    this.changed();
  }

  /** The cursor or selection moved in an editor; only the active file keeps cursor and selection. */
  select(ref: FileRef | undefined, cursor: ZeroBasedPosition | undefined, selectedText: string | undefined): void {
    if (!isTrackable(ref)) return;
    const entry = this.files.find((f) => f.path === ref.fsPath);
    if (!entry || !entry.isActive) return;
    this.applySelection(entry, cursor, selectedText);
    this.changed();
  }

  /** A document was closed or deleted. */
  remove(ref: FileRef | undefined): void {
    if (!isTrackable(ref)) return;
    const before = this.files.length;
    this.files = this.files.filter((f) => f.path !== ref.fsPath && !isInside(f.path, ref.fsPath));
    if (this.files.length !== before) this.changed();
  }

  /** A file (or a folder holding open files) was renamed; a rename away from file: removes it. */
  rename(oldRef: FileRef, newRef: FileRef): void {
    if (!isTrackable(oldRef)) return;
    if (!isTrackable(newRef)) { this.remove(oldRef); return; }
    let touched = false;
    for (const f of this.files) {
      if (f.path === oldRef.fsPath) { f.path = newRef.fsPath; touched = true; }
      else if (isInside(f.path, oldRef.fsPath)) { f.path = newRef.fsPath + f.path.slice(oldRef.fsPath.length); touched = true; }
    }
    // a rename onto a path that was already open leaves two entries for one file: keep the newer
    const seen = new Set<string>();
    this.files = this.files.filter((f) => (seen.has(f.path) ? false : (seen.add(f.path), true)));
    if (touched) this.changed();
  }

  setTrusted(trusted: boolean): void {
    if (this.trusted === trusted) return;
    this.trusted = trusted;
    this.changed();
  }

  /** The notification params now. */
  get state(): IdeContextParams {
    const state: IdeContextParams = {
      openFiles: this.files.map((f) => (f.cursor ? { ...f, cursor: { ...f.cursor } } : { ...f })),
    };
    if (this.trusted !== undefined) state.isTrusted = this.trusted;
    return state;
  }

  /** Send the current state now (e.g. to a freshly (re)started server), cancelling a pending debounce. */
  flush(): void {
    if (this.timer !== undefined) { this.clearTimer(this.timer); this.timer = undefined; }
    const state = this.state;
    for (const l of [...this.listeners]) l(state);
  }

  dispose(): void {
    if (this.timer !== undefined) this.clearTimer(this.timer);
    this.timer = undefined;
    this.listeners = [];
  }

  private deactivate(f: OpenFile): void {
    if (!f.isActive) return;
    f.isActive = false;
    delete f.cursor;
    delete f.selectedText;
  }

  private applySelection(entry: OpenFile, cursor: ZeroBasedPosition | undefined, selectedText: string | undefined): void {
    if (cursor) entry.cursor = toCursor(cursor); else delete entry.cursor;
    const text = clipSelection(selectedText);
    if (text !== undefined) entry.selectedText = text; else delete entry.selectedText;
  }

  private changed(): void {
    if (this.timer !== undefined) this.clearTimer(this.timer);
    this.timer = this.setTimer(() => { this.timer = undefined; this.flush(); }, this.debounceMs);
  }
}

function isInside(path: string, folder: string): boolean {
  const sep = folder.includes('\\') && !folder.includes('/') ? '\\' : '/';
  return path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}
