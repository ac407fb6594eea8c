/**
 * Where a setting takes effect, so "Open Settings" opens that scope and the error text names it. Pure.
 * `sidecar.serverCommand` is machine-overridable: in a remote window (code-server, SSH, WSL, containers) the User
 * value is not used — the Remote settings (or the workspace's) are.
 */
export interface Inspected { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }

export interface Scope {
  /** the command that opens it */
  command: 'workbench.action.openSettings' | 'workbench.action.openRemoteSettings' | 'workbench.action.openWorkspaceSettings' | 'workbench.action.openFolderSettings';
  /** for messages: "User settings", "Remote settings (code-server)", … */
  label: string;
}

const set = (v: unknown) => v !== undefined && !(Array.isArray(v) && v.length === 0);

export function settingScope(inspected: Inspected | undefined, remoteName: string | undefined, trusted: boolean): Scope {
  if (trusted && set(inspected?.workspaceFolderValue)) return { command: 'workbench.action.openFolderSettings', label: 'Folder settings' };
  if (trusted && set(inspected?.workspaceValue)) return { command: 'workbench.action.openWorkspaceSettings', label: 'Workspace settings' };
  if (remoteName) return { command: 'workbench.action.openRemoteSettings', label: `Remote settings (${remoteName}); User settings are not used for it in a remote window` };
  return { command: 'workbench.action.openSettings', label: 'User settings' };
}
