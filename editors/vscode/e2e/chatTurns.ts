/**
 * The chat-turn steps of the real-VS-Code e2e: a turn whose model says something, calls a tool and replies shows its
 * words before the tool card and its reply as a new message below it; rewound, the chat rebuilt from the transcript
 * shows the tool card from the call's data (no line of the written file as the model's words), marked rewound.
 */
import { McpHarness } from './mcp';

const WORDS = 'TOOLTURN: I will write the multi-line file.';
const ASK = 'TOOLTURN: write the multi-line file';

export async function chatTurnSteps({ step, w, fake, waitFor }: Omit<McpHarness, 'python' | 'userData'>): Promise<void> {
  const page = w.page;
  await step('a turn with a tool call: the words before the call, the tool card, then the reply as its own message below it', async () => {
    await fake.script([{
      kind: 'function_call', match: 'chat', text: WORDS, name: 'write_file',
      args: { path: 'multi.txt', content: 'MULTI-LINE-ONE\nMULTI-LINE-TWO\nMULTI-LINE-THREE\n' },
    }]);
    let footer = '';
    await w.send(ASK, async (c) => {
      // while Stop is shown (the turn waits for the user's answer), the footer shows the usage whole
      await c.locator('.card.tool button[data-decision="allow"]').first().waitFor({ timeout: 30_000 });
      const status = c.locator('#status');
      footer = await status.innerText();
      const clipped = await status.evaluate((el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
      if (clipped || !/of context/.test(footer) || !(await c.locator('#stop').isVisible())) throw new Error(`the footer while Stop is shown: “${footer}” (clipped: ${clipped})`);
      await waitFor('the write allowed', async () => {
        const allow = c.locator('.card.tool button[data-decision="allow"]');
        if (await allow.count()) await allow.first().click({ timeout: 2_000 }).catch(() => undefined);
        return (await c.locator('.msg.model', { hasText: 'Fake Gemini reply' }).count()) > 0 && !(await c.locator('body.busy').count());
      }, 45_000, 250);
    });
    const chat = await w.chat();
    // the log's children after the user's message, in order: [kind, text]
    const nodes = chat.locator('#log > *');
    const all: Array<[string, string]> = [];
    for (let i = 0; i < await nodes.count(); i++) {
      const n = nodes.nth(i);
      all.push([(await n.getAttribute('data-kind')) ?? '', (await n.innerText()).replace(/\s+/g, ' ').trim()]);
    }
    const start = all.map(([k, t]) => k === 'user' && t.includes(ASK)).lastIndexOf(true);
    const order = all.slice(start + 1);
    const kinds = order.map(([k]) => k).join(',');
    const first = order[0]?.[1] ?? '';
    if (kinds !== 'model,tool,model' || !first.includes(WORDS) || first.includes('Fake Gemini reply') || !order[2][1].includes('Fake Gemini reply')) {
      throw new Error(`the turn is not words, card, reply: ${JSON.stringify(order)}`);
    }
    await w.shot('7-tool-turn');
    return `words before the card; the reply is a new message below the card; the footer kept “${footer}” whole next to Stop`;
  }, { needs: ['tools'] });
  await step('rewound, the rebuilt chat shows that turn\'s tool card from the call\'s data, its words and card marked rewound, no line of the file as words', async () => {
    const chat = await w.chat();
    const target = chat.locator('.msg.user', { hasText: ASK }).last();
    await target.hover();
    await target.locator('button[data-action="rewind"]').click();
    // the agent wrote a file since that message: Rewind asks what to rewind; the conversation only
    const only = page.locator('.quick-input-list .monaco-list-row', { hasText: 'The files stay as they are now.' }).first();
    await only.waitFor({ timeout: 15_000 });
    await only.click();
    await waitFor('the text back in the input box', async () => (await chat.locator('#input').inputValue()) === ASK, 20_000);
    await chat.locator('.msg.user.rewound', { hasText: ASK }).first().waitFor({ timeout: 15_000 });
    await chat.locator('.msg.model.rewound', { hasText: WORDS }).first().waitFor({ timeout: 15_000 });
    await chat.locator('.card.tool.rewound', { hasText: 'write_file' }).first().waitFor({ timeout: 15_000 });
    const asWords = await chat.locator('.msg.model', { hasText: 'MULTI-LINE-TWO' }).count();
    if (asWords) throw new Error(`${asWords} chat message(s) show a line of the written file as the model's words`);
    await chat.locator('#input').fill('');
    await w.shot('8-tool-turn-rewound');
    return 'the rewound turn\'s words and tool card are struck through; the file\'s lines are only in the card';
  }, { needs: ['tools', 'checkpoints', 'transcript'] });
}
