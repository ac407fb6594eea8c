/**
 * The settings sent to the sidecar: the `sidecar.*` configuration minus what only the extension uses,
 * plus the API key from SecretStorage. Pure (the caller passes a getter), so it is unit-tested.
 */
import { SidecarSettings } from './protocol';

/** Settings the server understands, in the order of docs/settings.md. */
export const SERVER_KEYS = [
  'model', 'baseUrl', 'backend', 'vertexProject', 'vertexLocation', 'tokenLimit', 'compressionThreshold',
  'compressionPrepareRatio', 'backgroundCompaction', 'compressionModel', 'requestTimeoutMs',
  'retryAttempts', 'retryInitialDelayMs', 'maxToolRounds', 'approvalMode', 'hooks',
] as const;

/** Settings that may be unset: sent as null so a didChangeConfiguration can clear an earlier value. */
const NULLABLE = new Set<string>([
  'baseUrl', 'backend', 'vertexProject', 'vertexLocation', 'tokenLimit', 'compressionModel', 'apiKey',
]);

export type SettingsWire = { [K in keyof SidecarSettings]: SidecarSettings[K] | null };

export function buildSettings(get: (key: string) => unknown, apiKey: string | undefined): SettingsWire {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    let value = get(key);
    if (typeof value === 'string' && value.trim() === '' && NULLABLE.has(key)) value = null;
    if (value === undefined || value === null) {
      if (NULLABLE.has(key)) out[key] = null;
      continue;
    }
    if (key === 'hooks' && typeof value === 'object' && Object.keys(value as object).length === 0) continue;
    out[key] = value;
  }
  out.apiKey = apiKey && apiKey.trim() ? apiKey.trim() : null;
  return out as SettingsWire;
}

/** For logs: the same object with the key replaced. */
export function redacted(settings: SettingsWire): Record<string, unknown> {
  return { ...settings, apiKey: settings.apiKey ? '<redacted>' : null };
}
