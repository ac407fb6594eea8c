/** What the MCP commands show, kept free of the vscode module (unit-tested): server actions, prompt picks, argument inputs. */
import { McpPromptArgument, McpPromptInfo, McpServerInfo } from './protocol';

export type McpAction = 'restart' | 'disable' | 'enable';

/** The actions a server's row in "MCP Servers" offers, the first one is what picking the row does. */
export function mcpServerActions(s: McpServerInfo): McpAction[] {
  return s.status === 'disabled' ? ['enable'] : ['restart', 'disable'];
}

/** What the placeholder of "MCP Servers" says picking a row does. */
export const MCP_PICK_PLACEHOLDER = 'Pick a server to restart it (a disabled one: to enable it), or use its buttons';

/** The words shown after an action ran (`applied` false: no server has that name any more). */
export function mcpActionMessage(action: McpAction, name: string, applied: boolean): string {
  if (!applied) return `Sidecar: there is no MCP server named "${name}"${action === 'restart' ? ' (or it is disabled)' : ''}.`;
  const done = { restart: 'restarted', disable: 'disabled: its process is stopped and its tools are not offered to the model until you enable it', enable: 'enabled' }[action];
  return `Sidecar: MCP server "${name}" ${done}.`;
}

/** One prompt in "Run MCP Prompt…". */
export function mcpPromptPick(p: McpPromptInfo): { label: string; description: string; detail: string } {
  const args = (p.arguments ?? []).map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ');
  return { label: p.name, description: `${p.server} MCP server${args ? ` · ${args}` : ''}`, detail: p.description };
}

/** The input box asking for argument `index` of `p`. */
export function mcpArgumentInput(p: McpPromptInfo, index: number): { title: string; prompt: string; placeHolder: string } {
  const args = p.arguments ?? [];
  const a = args[index];
  return {
    title: `Run MCP Prompt — ${p.name} (${index + 1}/${args.length})`,
    prompt: `${a.name}${a.description ? `: ${a.description}` : ''}`,
    placeHolder: a.required ? `${a.name} (required)` : `${a.name} (optional: leave empty for the server's default)`,
  };
}

/** The input box's complaint about `value`, if any (a required argument may not be empty). */
export function mcpArgumentProblem(a: McpPromptArgument, value: string): string | undefined {
  return a.required && !value.trim() ? `${a.name} is required` : undefined;
}
