/**
 * The plan step of the real-VS-Code e2e: the model's todo list (write_todos) shows as the "Plan" section atop the
 * chat while the turn runs, updates live when the model sets it again in the same turn, and the user clears it.
 */
import { E2E } from './harness';

const ASK = 'PLANTURN: plan the work, write the plan file, then update the plan';
const FIRST = [
  { description: 'PLAN-ONE read the parser', status: 'in_progress' },
  { description: 'PLAN-TWO write the plan file', status: 'pending' },
];
const SECOND = [
  { description: 'PLAN-ONE read the parser', status: 'completed' },
  { description: 'PLAN-TWO write the plan file', status: 'in_progress' },
];

export async function planSteps({ step, w, fake, waitFor }: Pick<E2E, 'step' | 'w' | 'fake' | 'waitFor'>): Promise<void> {
  await step('the Plan section atop the chat shows the model\'s todo list during the turn and updates live; Clear empties it', async () => {
    // the model sets its list, then writes a file (the turn waits for the user's answer: the list is on screen
    // while the turn runs), then sets the list again
    await fake.script([
      { kind: 'function_call', match: 'chat', name: 'write_todos', id: 'plan-1', args: { todos: FIRST } },
      { kind: 'function_call', match: 'chat', name: 'write_file', id: 'plan-2', args: { path: 'plan.txt', content: 'planned\n' } },
      { kind: 'function_call', match: 'chat', name: 'write_todos', id: 'plan-3', args: { todos: SECOND } },
    ]);
    const states = async (chat: Awaited<ReturnType<typeof w.chat>>) => {
      const rows = chat.locator('#plan li.todo');
      const out: string[] = [];
      for (let i = 0; i < await rows.count(); i++) out.push(`${await rows.nth(i).getAttribute('data-status')}:${await rows.nth(i).locator('.todo-text').innerText()}`);
      return out.join(' | ');
    };
    let during = '';
    await w.send(ASK, async (chat) => {
      await chat.locator('.card.tool', { hasText: 'write_file' }).locator('button[data-decision="allow"]').first().waitFor({ timeout: 30_000 });
      during = await waitFor('the first plan on screen', async () => {
        const seen = await states(chat);
        return seen.includes('in_progress:') && seen.includes('PLAN-ONE') ? seen : undefined;
      }, 15_000).catch(async (e: unknown) => {
        const html = await chat.locator('#plan').evaluate((el) => el.outerHTML).catch((x: unknown) => `no #plan: ${String(x)}`);
        throw new Error(`${String(e)}; #plan is ${html}; cards: ${await chat.locator('.card.tool').allInnerTexts()}`);
      });
      if (!(await chat.locator('body.busy').count())) throw new Error('the turn is no longer running');
      // in sight, atop the view, while the conversation is scrolled to the question at its end
      const box = await chat.locator('#plan').evaluate((el) => {
        const r = el.getBoundingClientRect();
        const view = el.ownerDocument.defaultView;
        return { top: r.top, bottom: r.bottom, height: view ? view.innerHeight : 0, scrolled: view ? view.scrollY : 0 };
      });
      if (box.top < 0 || box.bottom > box.height || box.scrolled <= 0) throw new Error(`the plan is not in sight atop the scrolled view: ${JSON.stringify(box)}`);
      await w.shot('9-plan-during-turn');
      await chat.locator('.card.tool', { hasText: 'write_file' }).locator('button[data-decision="allow"]').first().click();
    });
    const chat = await w.chat();
    const after = await waitFor('the plan updated', async () => {
      const seen = await states(chat);
      return /completed:.*PLAN-ONE/.test(seen) && /in_progress:.*PLAN-TWO/.test(seen) ? seen : undefined;
    }, 15_000);
    if (!/in_progress:.*PLAN-ONE/.test(during) || !/pending:.*PLAN-TWO/.test(during)) throw new Error(`the plan during the turn: ${during}`);
    const head = await chat.locator('#plan .plan-head').innerText();
    if (!head.includes('Plan (1/2 done)')) throw new Error(`the plan's head: ${head}`);
    await w.shot('10-plan-updated');
    await chat.locator('#plan button', { hasText: 'Clear' }).click();
    await waitFor('the plan cleared', async () => chat.locator('#plan').isHidden(), 15_000);
    return `during the turn: ${during}; after it: ${after}; Clear hid the section`;
  }, { needs: ['tools'] });
}
