/**
 * The server's work-done progress, shown the VS Code way. vscode-languageclient shows every server progress
 * in the status bar only; we take over window/workDoneProgress/create so that
 *  - a compaction the user started (Sidecar: Compress Conversation) reports into that command's progress
 *    notification instead of opening a second one,
 *  - an automatic compaction gets a progress notification of its own,
 *  - a chat turn ("Gemini") stays a quiet status-bar progress.
 * Cancelling a progress sends window/workDoneProgress/cancel.
 */
import * as vscode from 'vscode';
import {
  BaseLanguageClient, FeatureState, StaticFeature, WorkDoneProgress, WorkDoneProgressBegin,
  WorkDoneProgressCancelNotification, WorkDoneProgressCreateRequest, WorkDoneProgressReport,
} from 'vscode-languageclient';
import { ProgressTitle } from './protocol';

type Sink = vscode.Progress<{ message?: string; increment?: number }>;

export class ProgressBridge {
  private compressSink: Sink | undefined;
  private readonly active = new Set<() => void>();

  /** While `fn` runs, server progress titled "Compressing conversation" reports into `sink`. */
  async withCompressSink<T>(sink: Sink, fn: () => Promise<T>): Promise<T> {
    this.compressSink = sink;
    try { return await fn(); } finally { if (this.compressSink === sink) this.compressSink = undefined; }
  }

  feature(client: BaseLanguageClient): StaticFeature {
    return {
      fillClientCapabilities: (capabilities) => {
        capabilities.window = { ...(capabilities.window ?? {}), workDoneProgress: true };
      },
      initialize: () => {
        // registered after the built-in ProgressFeature, so this handler replaces its handler
        client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => { this.track(client, token); });
      },
      getState: (): FeatureState => ({ kind: 'static' }),
      clear: () => { for (const end of [...this.active]) end(); this.active.clear(); },
    };
  }

  private track(client: BaseLanguageClient, token: string | number): void {
    let finish: (() => void) | undefined;
    let sink: Sink | undefined;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      sub.dispose();
      this.active.delete(end);
      finish?.();
    };
    this.active.add(end);
    const sub = client.onProgress(WorkDoneProgress.type, token, (value) => {
      if (value.kind === 'begin') {
        const begin = value as WorkDoneProgressBegin;
        if (begin.title === ProgressTitle.compress && this.compressSink) {
          sink = this.compressSink;
          if (begin.message) sink.report({ message: begin.message });
          return;
        }
        const location = begin.title === ProgressTitle.compress ? vscode.ProgressLocation.Notification : vscode.ProgressLocation.Window;
        const title = begin.title === ProgressTitle.turn ? 'Sidecar: Gemini is replying' : `Sidecar: ${begin.title}`;
        void vscode.window.withProgress({ location, title, cancellable: !!begin.cancellable }, (progress, cancel) => {
          sink = progress;
          if (begin.message) progress.report({ message: begin.message });
          cancel.onCancellationRequested(() => {
            void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
          });
          return new Promise<void>((resolve) => { finish = resolve; if (ended) resolve(); });
        });
      } else if (value.kind === 'report') {
        const report = value as WorkDoneProgressReport;
        if (report.message) sink?.report({ message: report.message });
      } else {
        end();
      }
    });
  }
}
