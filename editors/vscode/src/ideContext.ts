/** Feeds VS Code's editor events into the OpenFilesTracker (the rules live there, unit-tested). */
import * as vscode from 'vscode';
import { OpenFilesTracker } from './openFiles';

function selectionText(editor: vscode.TextEditor, selection: vscode.Selection = editor.selection): string | undefined {
  return selection.isEmpty ? undefined : editor.document.getText(selection);
}

export function trackOpenFiles(tracker: OpenFilesTracker): vscode.Disposable {
  const focus = (editor: vscode.TextEditor | undefined) => {
    if (editor) tracker.focus(editor.document.uri, editor.selection.active, selectionText(editor));
  };
  const stillOpen = (uri: vscode.Uri) => vscode.window.tabGroups.all.some((g) => g.tabs.some((t) =>
    t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString()));

  const subs: vscode.Disposable[] = [
    vscode.window.onDidChangeActiveTextEditor(focus),
    vscode.window.onDidChangeTextEditorSelection((e) => {
      if (e.textEditor !== vscode.window.activeTextEditor) return;
      const sel = e.selections[0] ?? e.textEditor.selection;
      tracker.select(e.textEditor.document.uri, sel.active, selectionText(e.textEditor, sel));
    }),
    // a closed tab is closed now; the document itself may live on a while (and onDidCloseTextDocument then fires)
    vscode.window.tabGroups.onDidChangeTabs((e) => {
      for (const tab of e.closed) {
        if (tab.input instanceof vscode.TabInputText && !stillOpen(tab.input.uri)) tracker.remove(tab.input.uri);
      }
    }),
    vscode.workspace.onDidCloseTextDocument((doc) => { if (!stillOpen(doc.uri)) tracker.remove(doc.uri); }),
    vscode.workspace.onDidDeleteFiles((e) => { for (const uri of e.files) tracker.remove(uri); }),
    vscode.workspace.onDidRenameFiles((e) => { for (const f of e.files) tracker.rename(f.oldUri, f.newUri); }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => tracker.setTrusted(true)),
  ];
  tracker.setTrusted(vscode.workspace.isTrusted);
  focus(vscode.window.activeTextEditor);
  return vscode.Disposable.from(...subs);
}
