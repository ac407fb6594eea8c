/**
 * What the chat view shows, as plain data: the extension keeps it (so the view can be closed and reopened)
 * and sends each change to the webview as an `upsert` of one item. No vscode import.
 */
import {
  CompressedParams, ConfirmToolCallParams, PinnedFact, RetryParams, TodoItem, ToolCallParams, ToolDecision, TranscriptEntry,
  TranscriptToolCall,
} from './protocol';
import { compressionSucceeded, exact, statusLabel } from './status';
import { ChatItem, ToWebview } from './webviewMessages';

export { ChatItem, FromWebview, MessageAction, ToWebview } from './webviewMessages';


let counter = 0;
const nextId = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

/**
 * The answers a confirmation offers, in order. A call that asks every time (askReason: a protected path, a file
 * with several hard links) offers allow and deny only, since the server counts "allow always" as once for it; an
 * MCP call also offers to allow every tool of its server.
 */
export function confirmChoices(p: Pick<ConfirmToolCallParams, 'mcpServer' | 'askReason'>): ToolDecision[] {
  if (p.askReason) return ['allow', 'deny'];
  return p.mcpServer ? ['allow', 'allowAlways', 'allowAlwaysServer', 'deny'] : ['allow', 'allowAlways', 'deny'];
}

export function compactionText(p: Pick<CompressedParams, 'status' | 'originalTokenCount' | 'newTokenCount' | 'trigger'> & { message?: string }): string {
  if (p.message) return p.message;
  const who = p.trigger === 'auto' ? 'Automatic compaction' : 'Compaction';
  return compressionSucceeded(p.status)
    ? `${who}: ${exact(p.originalTokenCount)} → ${exact(p.newTokenCount)} tokens`
    : `${who}: ${statusLabel(p.status)}`;
}

/** A card's line as the user reads it: a command run "in ." runs in the workspace folder. */
export function cardText(text: string): string;
export function cardText(text: string | undefined): string | undefined;
export function cardText(text: string | undefined): string | undefined {
  return text === undefined ? undefined : text.replace(/ in \.(?=$|[\s:;,)])/g, ' in the workspace folder');
}

export class ChatModel {
  items: ChatItem[] = [];
  busy = false;
  /** The live session's pinned facts, listed (and removable) at the top of the view. */
  pins: PinnedFact[] = [];
  /** The model's todo list (write_todos), shown as the "Plan" section atop the view. */
  todos: TodoItem[] = [];
  private listeners: Array<(msg: ToWebview) => void> = [];
  /** turnId of the streaming reply; deltas before the first turnId are attached to `pendingTurn` */
  private currentModelId: string | undefined;
  /** The streamed messages of each unfinished turn (turnId → message item ids, the open one last). */
  private turns = new Map<string, { segments: string[]; open?: string }>();

  onChange(listener: (msg: ToWebview) => void): { dispose(): void } {
    this.listeners.push(listener);
    return { dispose: () => { this.listeners = this.listeners.filter((l) => l !== listener); } };
  }

  snapshot(): ToWebview {
    return { type: 'reset', items: this.items.map((i) => ({ ...i })), busy: this.busy };
  }

  reset(items: ChatItem[] = []): void {
    this.items = items;
    this.currentModelId = undefined;
    this.turns.clear();
    this.emit(this.snapshot());
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    if (!busy && this.currentModelId) {
      const item = this.find(this.currentModelId);
      if (item && item.kind === 'model' && item.streaming) this.upsert({ ...item, streaming: false });
      this.currentModelId = undefined;
    }
    if (!busy) this.turns.clear();
    this.emit({ type: 'busy', busy });
  }

  addUser(text: string): void {
    this.upsert({ kind: 'user', id: nextId('user'), text });
  }

  /**
   * A streamed chunk of the reply to turn `turnId`. The model's words before a tool call and its words after it are
   * separate messages, each where it was said: a chunk after a tool card starts a new message below that card.
   */
  delta(turnId: string, text: string): void {
    const turn = this.turnOf(turnId);
    const open = turn.open ? this.find(turn.open) : undefined;
    if (open && open.kind === 'model') {
      this.upsert({ ...open, text: open.text + text });
    } else {
      const id = turn.segments.length ? `model-${turnId}-${turn.segments.length}` : `model-${turnId}`;
      turn.segments.push(id);
      turn.open = id;
      this.upsert({ kind: 'model', id, text, streaming: true });
    }
    this.currentModelId = turn.open;
  }

  /** A failed attempt is retried: its text goes (the turn's text restarts from `p.text`), and the user is told why. */
  retry(p: RetryParams): void {
    const turn = this.turnOf(p.turnId);
    const open = turn.open ? this.find(turn.open) : undefined;
    if (open && open.kind === 'model') {
      const earlier = this.closedText(turn);
      this.upsert({ ...open, text: p.text.startsWith(earlier) ? p.text.slice(earlier.length) : '' });
    }
    this.info(retryText(p));
  }

  /** The finished reply: its full text (every round's words) wins over the concatenated deltas. */
  finish(turnId: string, text: string): void {
    const turn = this.turnOf(turnId);
    const earlier = this.closedText(turn);
    const rest = text.startsWith(earlier) ? text.slice(earlier.length) : text;
    const open = turn.open ? this.find(turn.open) : undefined;
    if (open && open.kind === 'model') {
      this.upsert({ ...open, text: rest, streaming: false });
    } else if (rest.trim() || !turn.segments.length) {
      // words never streamed (or said after the last tool call without a chunk): a message at the end
      const id = turn.segments.length ? `model-${turnId}-${turn.segments.length}` : `model-${turnId}`;
      turn.segments.push(id);
      this.upsert({ kind: 'model', id, text: rest, streaming: false });
    }
    if (this.currentModelId && turn.segments.includes(this.currentModelId)) this.currentModelId = undefined;
    this.turns.delete(turnId);
  }

  /** The streamed messages of a turn: their ids in order, and the one a chunk goes on (none after a tool call). */
  private turnOf(turnId: string): { segments: string[]; open?: string } {
    let turn = this.turns.get(turnId);
    if (!turn) { turn = { segments: [] }; this.turns.set(turnId, turn); }
    return turn;
  }

  /** The text of a turn's messages closed by a tool call (what the server's turn text starts with). */
  private closedText(turn: { segments: string[]; open?: string }): string {
    return turn.segments.filter((id) => id !== turn.open).map((id) => {
      const item = this.find(id);
      return item && item.kind === 'model' ? item.text : '';
    }).join('');
  }

  toolCall(p: ToolCallParams): void {
    this.closeSegment(p.turnId);
    const id = `tool-${p.callId}`;
    const prev = this.find(id);
    const confirm = prev && prev.kind === 'tool' ? prev.confirm : undefined;
    this.upsert({ kind: 'tool', id, callId: p.callId, name: p.name, args: p.args, status: p.status, summary: cardText(p.summary), confirm });
  }

  /** A tool call ends the message the model was writing: its next words are a new message below the card. */
  private closeSegment(turnId: string | undefined): void {
    const turn = turnId ? this.turns.get(turnId) : undefined;
    if (!turn || !turn.open) return;
    const item = this.find(turn.open);
    if (item && item.kind === 'model' && item.streaming) this.upsert({ ...item, streaming: false });
    if (this.currentModelId === turn.open) this.currentModelId = undefined;
    turn.open = undefined;
  }

  confirmRequest(p: ConfirmToolCallParams): void {
    this.closeSegment(p.turnId);
    const id = `tool-${p.callId}`;
    const prev = this.find(id);
    const base = prev && prev.kind === 'tool' ? prev : { kind: 'tool' as const, id, callId: p.callId, name: p.toolName, args: p.args, status: 'pending' };
    const confirm = { description: cardText(p.description), diff: p.diff, choices: confirmChoices(p), ...(p.mcpServer ? { mcpServer: p.mcpServer } : {}) };
    this.upsert({ ...base, confirm });
  }

  decided(callId: string, decision: ToolDecision): void {
    const item = this.find(`tool-${callId}`);
    if (item && item.kind === 'tool' && item.confirm) this.upsert({ ...item, confirm: { ...item.confirm, decision } });
  }

  compaction(p: CompressedParams): void {
    const recorded = p.compactionId ? { compactionId: p.compactionId } : {};
    this.upsert({ kind: 'compaction', id: nextId('compaction'), text: compactionText(p), ok: compressionSucceeded(p.status), ...recorded, ...(p.edited ? { edited: true } : {}) });
  }

  /** The user rated a compaction: its marker says so (and stops asking). */
  rated(compactionId: string, rating: string): void {
    for (const item of this.items) {
      if (item.kind === 'compaction' && item.compactionId === compactionId) this.upsert({ ...item, rating });
    }
  }

  setPins(pins: PinnedFact[]): void {
    this.pins = pins.map((p) => ({ ...p }));
    this.emit({ type: 'pins', pins: this.pins });
  }

  setTodos(items: TodoItem[]): void {
    this.todos = items.map((t) => ({ ...t }));
    this.emit({ type: 'todos', items: this.todos });
  }

  /** Put text back in the input box (after a rewind). */
  setDraft(text: string): void { this.emit({ type: 'draft', text }); }

  item(id: string): ChatItem | undefined { return this.find(id); }

  info(text: string): void { this.upsert({ kind: 'info', id: nextId('info'), text }); }
  error(text: string): void { this.upsert({ kind: 'error', id: nextId('error'), text }); }

  /** Rebuild the view from sidecar/getTranscript (after resume or undo). */
  loadTranscript(entries: TranscriptEntry[]): void {
    this.reset(itemsFromTranscript(entries));
  }

  private find(id: string): ChatItem | undefined {
    return this.items.find((i) => i.id === id);
  }

  private upsert(item: ChatItem): void {
    const index = this.items.findIndex((i) => i.id === item.id);
    if (index === -1) this.items.push(item); else this.items[index] = item;
    this.emit({ type: 'upsert', item });
  }

  private emit(msg: ToWebview): void {
    for (const l of [...this.listeners]) l(msg);
  }
}

/** "Gemini's reply was unusable (…); retrying, attempt 2 of 4." */
export function retryText(p: Pick<RetryParams, 'attempt' | 'maxAttempts' | 'message'>): string {
  return `Gemini's reply was unusable (${p.message}); retrying, attempt ${p.attempt} of ${p.maxAttempts}.`;
}

/** The tool's name in a transcript line such as `→ write_file(notes.txt)`. */
export function toolName(text: string): string {
  return /^(?:→\s*)?([A-Za-z_][\w.-]*)/.exec(text.trim())?.[1] ?? 'tool';
}

/**
 * A toolCall transcript entry: the model's own words (if any) and its calls. The calls come from `toolCalls` (data);
 * the words are the text before the first call's `→ name(` line, since a call's arguments (a written file's
 * content) can span many lines. A server without `toolCalls` gets the `→ name(args)` lines of the text.
 */
export function splitToolCallEntry(e: { text: string; toolCalls?: TranscriptToolCall[] }): { prose: string; calls: Array<{ name: string; args?: unknown; summary?: string }> } {
  if (e.toolCalls && e.toolCalls.length) {
    const head = `→ ${e.toolCalls[0].name}(`;
    const at = e.text.startsWith(head) ? 0 : e.text.indexOf(`\n${head}`);
    const prose = at === -1 ? '' : e.text.slice(0, at).trim();
    return { prose, calls: e.toolCalls.map((c) => ({ name: c.name, args: c.args })) };
  }
  const lines = e.text.split('\n');
  const callLines = lines.filter((l) => /^→ /.test(l));
  const prose = lines.filter((l) => !/^→ /.test(l)).join('\n').trim();
  return { prose, calls: callLines.map((l) => ({ name: toolName(l), summary: l.slice(2) })) };
}

/** What the chat view shows for a transcript: user and model messages, tool calls, notes and compaction markers. */
export function itemsFromTranscript(entries: TranscriptEntry[]): ChatItem[] {
  const items: ChatItem[] = [];
  for (const e of entries) {
    if (e.type === 'compaction') {
      const extra = { compactionId: e.id, ...(e.edited ? { edited: true } : {}), ...(e.rating ? { rating: e.rating } : {}) };
      items.push({ kind: 'compaction', id: `compaction-${e.id}`, text: compactionText(e), ok: compressionSucceeded(e.status), undone: e.undone, ...extra });
      continue;
    }
    if (e.type === 'fork') {
      const why = e.reason === 'locked' ? ' (it was open in another window)' : '';
      items.push({ kind: 'info', id: `fork-${e.time}`, text: `A branch of session ${e.parentSessionId.slice(0, 8)} starts here${why}.` });
      continue;
    }
    const rewound = e.rewound ? { rewound: true } : {};
    switch (e.kind) {
      case 'user': items.push({ kind: 'user', id: `t-${e.id}`, text: e.text, messageId: e.id, ...rewound }); break;
      case 'model': items.push({ kind: 'model', id: `t-${e.id}`, text: e.text, streaming: false, messageId: e.id, ...rewound }); break;
      case 'toolCall': {
        const { prose, calls } = splitToolCallEntry(e);
        if (prose) items.push({ kind: 'model', id: `t-${e.id}`, text: prose, streaming: false, ...rewound });
        calls.forEach((c, i) => items.push({ kind: 'tool', id: `t-${e.id}-${i}`, callId: `${e.id}-${i}`, name: c.name, args: c.args, status: 'done', summary: c.summary, ...rewound }));
        break;
      }
      case 'info': items.push({ kind: 'info', id: `t-${e.id}`, text: e.text }); break;
      case 'error': items.push({ kind: 'error', id: `t-${e.id}`, text: e.text }); break;
      default: break; // toolResult, ideContext, summary: in the transcript document, not in the chat
    }
  }
  return items;
}

/**
 * The server's id of the user message a chat item shows. Items loaded from a transcript carry it; a message sent in
 * this view does not yet, so it is matched by position: the n-th user item is the n-th user message of the
 * transcript, provided the texts agree. Undefined when it cannot be told.
 */
export function userMessageId(items: ChatItem[], itemId: string, entries: TranscriptEntry[]): string | undefined {
  const item = items.find((i) => i.id === itemId);
  if (!item || item.kind !== 'user') return undefined;
  if (item.messageId) return item.messageId;
  const ordinal = items.filter((i) => i.kind === 'user').indexOf(item);
  const users = entries.filter((e) => e.type === 'message' && e.kind === 'user');
  const offset = users.length - items.filter((i) => i.kind === 'user').length; // the view may start later
  const entry = users[ordinal + Math.max(offset, 0)];
  return entry && entry.type === 'message' && entry.text === item.text ? entry.id : undefined;
}
