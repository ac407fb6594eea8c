import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mcpActionMessage, mcpArgumentInput, mcpArgumentProblem, mcpPromptPick, mcpServerActions } from '../src/mcpView';
import { McpPromptInfo, McpServerInfo } from '../src/protocol';

const server = (status: McpServerInfo['status']): McpServerInfo => ({ name: 'calc', status, tools: [] });
const review: McpPromptInfo = {
  name: 'review', server: 'rev', prompt: 'review', description: 'Ask for a review.',
  arguments: [{ name: 'code', required: true, description: 'the file' }, { name: 'focus' }],
};

describe('MCP Servers pick', () => {
  it('offers Restart and Disable on a running or failed server, Enable on a disabled one (picking does the first)', () => {
    for (const st of ['ready', 'starting', 'failed'] as const) assert.deepEqual(mcpServerActions(server(st)), ['restart', 'disable']);
    assert.deepEqual(mcpServerActions(server('disabled')), ['enable']);
  });
  it('says what an action did, or that the server is gone', () => {
    assert.match(mcpActionMessage('disable', 'calc', true), /"calc" disabled: its process is stopped and its tools are not offered/);
    assert.equal(mcpActionMessage('enable', 'calc', true), 'Sidecar: MCP server "calc" enabled.');
    assert.equal(mcpActionMessage('restart', 'x', false), 'Sidecar: there is no MCP server named "x" (or it is disabled).');
    assert.equal(mcpActionMessage('enable', 'x', false), 'Sidecar: there is no MCP server named "x".');
  });
});

describe('Run MCP Prompt', () => {
  it('shows a prompt with its server and arguments (optional ones in brackets)', () => {
    assert.deepEqual(mcpPromptPick(review), { label: 'review', description: 'rev MCP server · code [focus]', detail: 'Ask for a review.' });
    assert.equal(mcpPromptPick({ ...review, arguments: undefined }).description, 'rev MCP server');
  });
  it('asks for each argument in turn; a required one may not be empty', () => {
    assert.deepEqual(mcpArgumentInput(review, 0), { title: 'Run MCP Prompt — review (1/2)', prompt: 'code: the file', placeHolder: 'code (required)' });
    assert.equal(mcpArgumentInput(review, 1).placeHolder, "focus (optional: leave empty for the server's default)");
    assert.equal(mcpArgumentProblem(review.arguments![0], '  '), 'code is required');
    assert.equal(mcpArgumentProblem(review.arguments![0], 'x.py'), undefined);
    assert.equal(mcpArgumentProblem(review.arguments![1], ''), undefined);
  });
});
