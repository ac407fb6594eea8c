/**
 * Does the server this window started speak this extension's wire protocol? The server reports its version in the
 * initialize result (capabilities.experimental.sidecar.protocolVersion, docs/protocol.md); a server from before that
 * report says nothing. Pure: connection.ts passes the initialize result and shows the warning with its buttons.
 */
import { PROTOCOL_VERSION } from './protocol';

export interface ProtocolWarning {
  message: string;
  /** buttons for showStartError: 'Reinstall' rebuilds the private environment, 'Open Settings' opens serverCommand */
  buttons: string[];
}

/** The protocol version in an initialize result, or undefined when the server does not report one. */
export function serverProtocolVersion(initializeResult: unknown): number | undefined {
  const v = (initializeResult as { capabilities?: { experimental?: { sidecar?: { protocolVersion?: unknown } } } } | undefined)
    ?.capabilities?.experimental?.sidecar?.protocolVersion;
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

/**
 * Undefined when the server speaks our protocol; else what to tell the user, in words, and which buttons fit where
 * the server came from ('private': the extension's own environment, which Reinstall rebuilds from the bundled wheel;
 * 'setting': sidecar.serverCommand; 'workspaceVenv': the workspace's .venv).
 */
export function protocolWarning(
  initializeResult: unknown, extensionVersion: string, source: 'setting' | 'workspaceVenv' | 'private' | undefined,
  expected: number = PROTOCOL_VERSION,
): ProtocolWarning | undefined {
  const got = serverProtocolVersion(initializeResult);
  if (got === expected) return undefined;
  const info = (initializeResult as { serverInfo?: { version?: string } } | undefined)?.serverInfo;
  const server = `The sidecar server${info?.version ? ` (version ${info.version})` : ''}`;
  const ours = `this extension (version ${extensionVersion}) speaks protocol ${expected}`;
  const what = got === undefined
    ? `${server} is older than ${ours.replace(' speaks', ', which speaks')}: it does not report a protocol version.`
    : got < expected
      ? `${server} speaks protocol ${got}, and ${ours}: the server is older.`
      : `${server} speaks protocol ${got}, and ${ours}: the server is newer than the extension.`;
  const serverNewer = got !== undefined && got > expected;
  switch (source) {
    case 'private':
      return {
        message: `${what} Some features may fail. Reinstall the server from the one bundled with the extension${serverNewer ? ', or update the extension' : ''}.`,
        buttons: ['Reinstall', 'Show log'],
      };
    case 'workspaceVenv':
      return {
        message: `${what} Some features may fail. The server is the workspace's .venv: ${serverNewer ? 'update the extension, or install a matching sidecar there' : `upgrade the sidecar there (to ${extensionVersion})`}, or set sidecar.serverCommand.`,
        buttons: ['Show log', 'Open Settings'],
      };
    default:
      return {
        message: `${what} Some features may fail. The server comes from sidecar.serverCommand: ${serverNewer ? 'update the extension, or point the setting at a matching sidecar' : `upgrade that sidecar (to ${extensionVersion})`}, or clear the setting to use the server bundled with the extension.`,
        buttons: ['Open Settings', 'Show log'],
      };
  }
}
