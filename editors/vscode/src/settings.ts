/**
 * The settings sent to the sidecar: the `sidecar.*` configuration minus what only the extension uses, plus the API
 * key from SecretStorage. The user's values (User and Remote settings) and the workspace's (Workspace and Folder
 * settings, i.e. a repository's `.vscode/settings.json`) travel apart — the workspace's as `workspaceSettings` — so
 * that the server gives the workspace's the rules of `.sidecar/settings.json` (docs/settings.md); `isTrusted` tells
 * the server the workspace trust before it reads anything from the workspace.
 * Pure (the caller passes an `inspect`), so it is unit-tested. Which keys exist and which may be unset is generated
 * from the server's Settings struct (protocol.ts), as is package.json's `contributes.configuration` (`make protocol`).
 */
import { NullableSettingKeys, SettingKeys, SidecarSettings } from './protocol';

/** Settings the server understands and VS Code offers, in the order of docs/settings.md (the key comes from
 * the secret storage, never from settings.json). */
export const SERVER_KEYS = SettingKeys.filter((k) => k !== 'apiKey');

/** Settings that may be unset: sent as null so a didChangeConfiguration can clear an earlier value. */
const NULLABLE = new Set<string>(NullableSettingKeys);

/** What `WorkspaceConfiguration.inspect(key)` gives, as far as the settings need it. */
export interface InspectedSetting { defaultValue?: unknown; globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }

export type UserSettingsWire = { [K in keyof SidecarSettings]: SidecarSettings[K] | null };
export type SettingsWire = UserSettingsWire & {
  /** The values the workspace set (Workspace, then Folder settings win): the server applies the workspace's rules. */
  workspaceSettings: Partial<SidecarSettings>;
  /** The workspace trust as the settings are sent (read by the server at `initialize`). */
  isTrusted: boolean;
};

/** Hooks with no command in any list: the default, not worth sending. */
function noHooks(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.values(value).every((v) => Array.isArray(v) && v.length === 0);
}

/** One layer's value as sent: an empty string of an optional setting means unset. */
function usable(key: string, value: unknown): unknown {
  if (typeof value === 'string' && value.trim() === '' && NULLABLE.has(key)) return null;
  return value;
}

export function buildSettings(inspect: (key: string) => InspectedSetting | undefined, apiKey: string | undefined, trusted: boolean): SettingsWire {
  const out: Record<string, unknown> = {};
  const workspace: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const found = inspect(key);
    let value = usable(key, found?.globalValue !== undefined ? found.globalValue : found?.defaultValue);
    if (value === undefined || value === null) {
      if (NULLABLE.has(key)) out[key] = null;
    } else if (!(key === 'hooks' && noHooks(value))) {
      out[key] = value;
    }
    value = usable(key, found?.workspaceFolderValue !== undefined ? found.workspaceFolderValue : found?.workspaceValue);
    if (value !== undefined && value !== null && !(key === 'hooks' && noHooks(value))) workspace[key] = value;
  }
  out.apiKey = apiKey && apiKey.trim() ? apiKey.trim() : null;
  out.workspaceSettings = workspace;
  out.isTrusted = trusted;
  return out as SettingsWire;
}

/** For logs: the same object with the key replaced. */
export function redacted(settings: SettingsWire): Record<string, unknown> {
  return { ...settings, apiKey: settings.apiKey ? '<redacted>' : null };
}
