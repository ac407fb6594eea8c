/**
 * The messages between the extension and the chat webview (media/chat.js), in one place: chatModel.ts and
 * chatView.ts send and receive them in TypeScript, chat.js is type-checked against them through JSDoc
 * (tsconfig.webview.json). Types only: nothing here runs.
 */
import type { PinnedFact, TodoItem, ToolDecision } from './protocol';

export type ChatItem =
  | { kind: 'user'; id: string; text: string; messageId?: string; rewound?: boolean }
  | { kind: 'model'; id: string; text: string; streaming: boolean; messageId?: string; rewound?: boolean }
  | {
      kind: 'tool'; id: string; callId: string; name: string; args: unknown; status: string; summary?: string; rewound?: boolean;
      // choices: the answers the card offers, in order (confirmChoices in chatModel.ts)
      confirm?: { description: string; diff?: string; mcpServer?: string; choices: ToolDecision[]; decision?: ToolDecision };
    }
  | {
      kind: 'compaction'; id: string; text: string; ok: boolean; undone?: boolean;
      // the recorded compaction (to rate it), whether the user edited its summary, the user's rating
      compactionId?: string; edited?: boolean; rating?: string;
    }
  | { kind: 'info' | 'error'; id: string; text: string };

/** Messages extension → webview. */
export type ToWebview =
  | { type: 'reset'; items: ChatItem[]; busy: boolean }
  | { type: 'upsert'; item: ChatItem }
  | { type: 'busy'; busy: boolean }
  | { type: 'status'; text: string; level: string; connected: boolean; backend?: string }
  | { type: 'pins'; pins: PinnedFact[] }
  | { type: 'todos'; items: TodoItem[] }
  | { type: 'draft'; text: string };

/**
 * What the chat view offers on a message: fork, rewind or summarise up to a user message, pin any message's text;
 * on a compaction marker, rate its summary.
 */
export type MessageAction = 'fork' | 'rewind' | 'summarize' | 'pin' | 'rateGood' | 'rateLost';

/** Messages webview → extension. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'stop' }
  | { type: 'decide'; callId: string; decision: ToolDecision }
  | { type: 'command'; command: string }
  | { type: 'action'; action: MessageAction; itemId: string }
  | { type: 'unpin'; pinId: string };
