/** "Sidecar: Run Doctor" (and its online variant): `sidecar doctor --json` with this window's settings, as a report. */
import * as os from 'node:os';
import * as vscode from 'vscode';
import { errorMessage } from '../api';
import { doctorArgs, doctorMarkdown, problemsFound, runDoctor as runDoctorProcess } from '../doctorReport';
import { CommandFactory, Ctx } from './context';

const SCHEME = 'sidecar-doctor';
/** One report document per window, shared by both commands. */
const runners = new WeakMap<Ctx, (online: boolean) => Promise<void>>();

function doctorRunner(ctx: Ctx): (online: boolean) => Promise<void> {
  const known = runners.get(ctx);
  if (known) return known;
  const conn = ctx.conn;
  let report = '';
  const changed = new vscode.EventEmitter<vscode.Uri>();
  const uri = vscode.Uri.from({ scheme: SCHEME, path: '/Sidecar Doctor.md' });
  const run = async (online: boolean) => {
    try {
      const cmd = conn.resolveCommand();
      const project = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
      const env: NodeJS.ProcessEnv = { ...process.env };
      if (cmd.source === 'private') { delete env.PYTHONPATH; delete env.PYTHONHOME; env.PYTHONNOUSERSITE = '1'; } // as the server runs
      const args = doctorArgs(cmd.args, { project, trusted: vscode.workspace.isTrusted, online });
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Sidecar: running the doctor${online ? ' (online)' : ''}…` },
        async () => runDoctorProcess(cmd.command, args, await conn.settings(), env, project ?? os.homedir()),
      );
      report = doctorMarkdown(result, { online });
      changed.fire(uri);
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
      const problems = result.checks.filter((c) => !c.ok).length;
      if (problems) void vscode.window.showWarningMessage(`Sidecar doctor: ${problemsFound(problems)}; each names the next step.`);
      else void vscode.window.showInformationMessage('Sidecar doctor: all good.');
    } catch (e) {
      void vscode.window.showErrorMessage(`Sidecar doctor: ${errorMessage(e)}`);
    }
  };
  ctx.own(changed);
  ctx.own(vscode.workspace.registerTextDocumentContentProvider(SCHEME, { onDidChange: changed.event, provideTextDocumentContent: () => report }));
  runners.set(ctx, run);
  return run;
}

export const runDoctor: CommandFactory = (ctx) => { const run = doctorRunner(ctx); return () => run(false); };
export const runDoctorOnline: CommandFactory = (ctx) => { const run = doctorRunner(ctx); return () => run(true); };
