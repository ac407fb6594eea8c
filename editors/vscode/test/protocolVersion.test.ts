import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROTOCOL_VERSION } from '../src/protocol';
import { protocolWarning, serverProtocolVersion } from '../src/protocolVersion';

const result = (protocolVersion?: unknown, version = '0.1.0') => ({
  capabilities: protocolVersion === undefined ? {} : { experimental: { sidecar: { protocolVersion } } },
  serverInfo: { name: 'sidecar', version },
});

describe('protocol version check', () => {
  it('reads the version the server reports, and nothing else', () => {
    assert.equal(serverProtocolVersion(result(3)), 3);
    assert.equal(serverProtocolVersion(result()), undefined);
    assert.equal(serverProtocolVersion(result('1')), undefined, 'a string is not a protocol version');
    assert.equal(serverProtocolVersion(undefined), undefined);
  });
  it('is quiet when the server speaks our protocol', () => {
    assert.equal(protocolWarning(result(PROTOCOL_VERSION), '0.1.0', 'private'), undefined);
  });
  it('calls a server that reports nothing older, and offers to reinstall the private one', () => {
    const w = protocolWarning(result(undefined, '0.0.9'), '0.1.0', 'private', 2);
    assert.ok(w);
    assert.equal(w.message, 'The sidecar server (version 0.0.9) is older than this extension (version 0.1.0), which speaks protocol 2: it does not report a protocol version. Some features may fail. Reinstall the server from the one bundled with the extension.');
    assert.deepEqual(w.buttons, ['Reinstall', 'Show log']);
  });
  it('names both versions and which side is older', () => {
    assert.match(protocolWarning(result(1), '0.2.0', 'private', 2)!.message, /speaks protocol 1, and this extension \(version 0\.2\.0\) speaks protocol 2: the server is older\./);
    const newer = protocolWarning(result(3), '0.2.0', 'private', 2)!;
    assert.match(newer.message, /speaks protocol 3, .* the server is newer than the extension\. .*or update the extension\.$/);
  });
  it('points a server from the setting or the workspace .venv at where it lives, not at Reinstall', () => {
    const setting = protocolWarning(result(1), '0.2.0', 'setting', 2)!;
    assert.match(setting.message, /sidecar\.serverCommand: upgrade that sidecar \(to 0\.2\.0\), or clear the setting/);
    assert.deepEqual(setting.buttons, ['Open Settings', 'Show log']);
    const venv = protocolWarning(result(1), '0.2.0', 'workspaceVenv', 2)!;
    assert.match(venv.message, /the workspace's \.venv: upgrade the sidecar there \(to 0\.2\.0\)/);
    assert.ok(!venv.buttons.includes('Reinstall'), 'Reinstall rebuilds the private environment, which is not in use');
  });
});
