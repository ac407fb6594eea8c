/**
 * The settings sent to the sidecar: the `sidecar.*` configuration minus what only the extension uses,
 * plus the API key from SecretStorage. Pure (the caller passes a getter), so it is unit-tested.
 * Which keys exist and which may be unset is generated from the server's Settings struct (protocol.ts), as is
 * package.json's `contributes.configuration` (`make protocol`).
 */
import { NullableSettingKeys, SettingKeys, SidecarSettings } from './protocol';

/** Settings the server understands and VS Code offers, in the order of docs/settings.md (the key comes from
 * the secret storage, never from settings.json). */
export const SERVER_KEYS = SettingKeys.filter((k) => k !== 'apiKey');

/** Settings that may be unset: sent as null so a didChangeConfiguration can clear an earlier value. */
const NULLABLE = new Set<string>(NullableSettingKeys);

export type SettingsWire = { [K in keyof SidecarSettings]: SidecarSettings[K] | null };

/** Hooks with no command in any list: the default, not worth sending. */
function noHooks(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.values(value).every((v) => Array.isArray(v) && v.length === 0);
}

export function buildSettings(get: (key: string) => unknown, apiKey: string | undefined): SettingsWire {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    let value = get(key);
    if (typeof value === 'string' && value.trim() === '' && NULLABLE.has(key)) value = null;
    if (value === undefined || value === null) {
      if (NULLABLE.has(key)) out[key] = null;
      continue;
    }
    if (key === 'hooks' && noHooks(value)) continue;
    out[key] = value;
  }
  out.apiKey = apiKey && apiKey.trim() ? apiKey.trim() : null;
  return out as SettingsWire;
}

/** For logs: the same object with the key replaced. */
export function redacted(settings: SettingsWire): Record<string, unknown> {
  return { ...settings, apiKey: settings.apiKey ? '<redacted>' : null };
}
