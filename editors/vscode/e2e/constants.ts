/** Values the e2e's scenarios share: the key, the marker the user selects, the IDE context header, filler text. */

export const API_KEY = 'e2e-secret-key-7f3a';
export const MARKER = 'SIDECAR_E2E_SELECTED_MARKER_42';
export const IDE_HEADER = "Here is the user's editor context as a JSON object.";
export const TOKEN_LIMIT = 12_000;
/** The tool call the fake model makes in the tool-confirmation step (a file write needs the user's OK). */
export const toolCall = () => ({ kind: 'function_call', name: 'write_file', args: { path: 'notes.txt', content: 'written by the e2e tool step\n' } });
export const FILLER = 'The status bar item shows how much of the context window the conversation uses. '.repeat(20);
