/** What a VS Code webview script gets (media/chat.js): acquireVsCodeApi, typed with the chat's own messages. */
interface ChatState { draft?: string }

interface ChatWebviewApi {
  postMessage(message: import('../src/webviewMessages').FromWebview): void;
  getState(): ChatState | undefined;
  setState(state: ChatState): void;
}

declare function acquireVsCodeApi(): ChatWebviewApi;
