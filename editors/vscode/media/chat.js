// @ts-check
// The chat view's script. It renders what the extension sends (reset / upsert / busy / status) and posts the
// user's actions back (send / stop / decide / command). It builds DOM nodes only — never innerHTML with text.
// Type-checked (tsconfig.webview.json) against the message types the extension uses, src/webviewMessages.ts.
/** @typedef {import('../src/webviewMessages').ChatItem} ChatItem */
/** @typedef {import('../src/webviewMessages').ToWebview} ToWebview */
/** @typedef {import('../src/webviewMessages').MessageAction} MessageAction */
/** @typedef {import('../src/protocol').PinnedFact} PinnedFact */
/** @typedef {import('../src/protocol').TodoItem} TodoItem */
/** @typedef {import('../src/protocol').ToolDecision} ToolDecision */
(function () {
  const vscode = acquireVsCodeApi();
  const log = /** @type {HTMLElement} */ (document.getElementById('log'));
  const empty = /** @type {HTMLElement} */ (document.getElementById('empty'));
  const form = /** @type {HTMLFormElement} */ (document.getElementById('composer'));
  const input = /** @type {HTMLTextAreaElement} */ (document.getElementById('input'));
  const send = /** @type {HTMLButtonElement} */ (document.getElementById('send'));
  const stop = /** @type {HTMLButtonElement} */ (document.getElementById('stop'));
  const status = /** @type {HTMLElement} */ (document.getElementById('status'));
  const backend = /** @type {HTMLElement} */ (document.getElementById('backend'));
  const pins = /** @type {HTMLElement} */ (document.getElementById('pins'));
  const plan = /** @type {HTMLElement} */ (document.getElementById('plan'));
  let busy = false;
  let connected = false;

  /** @param {string} tag @param {string} [cls] @param {string} [text] */
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /** Inline markdown: `code`, **bold**, *em*. @param {HTMLElement} parent @param {string} text */
  function inline(parent, text) {
    const re = /(`[^`\n]+`|\*\*[^*\n]+\*\*|\*[^*\n]+\*)/g;
    let last = 0;
    for (const m of text.matchAll(re)) {
      const index = m.index ?? 0;
      if (index > last) parent.appendChild(document.createTextNode(text.slice(last, index)));
      const t = m[0];
      if (t.startsWith('`')) parent.appendChild(el('code', undefined, t.slice(1, -1)));
      else if (t.startsWith('**')) parent.appendChild(el('strong', undefined, t.slice(2, -2)));
      else parent.appendChild(el('em', undefined, t.slice(1, -1)));
      last = index + t.length;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  /** A small, safe Markdown subset: fenced code, headings, lists, paragraphs. @param {string} text */
  function markdown(text) {
    const root = el('div', 'md');
    const parts = text.split(/^```[^\n]*\n?/m);
    parts.forEach((part, i) => {
      if (i % 2 === 1) {
        const pre = el('pre');
        pre.appendChild(el('code', undefined, part.replace(/\n$/, '')));
        root.appendChild(pre);
        return;
      }
      for (const block of part.split(/\n{2,}/)) {
        if (!block.trim()) continue;
        const lines = block.split('\n');
        if (lines.every((l) => /^\s*([-*]|\d+\.)\s+/.test(l) || !l.trim())) {
          const ordered = /^\s*\d+\./.test(lines[0]);
          const list = el(ordered ? 'ol' : 'ul');
          for (const l of lines) if (l.trim()) { const li = el('li'); inline(li, l.replace(/^\s*([-*]|\d+\.)\s+/, '')); list.appendChild(li); }
          root.appendChild(list);
        } else if (/^#{1,6}\s/.test(block)) {
          const h = el('p', 'heading'); inline(h, block.replace(/^#{1,6}\s+/, '')); root.appendChild(h);
        } else {
          const p = el('p');
          lines.forEach((l, j) => { if (j) p.appendChild(el('br')); inline(p, l); });
          root.appendChild(p);
        }
      }
    });
    return root;
  }

  /** @type {Record<string, string>} */
  const STATUS_LABEL = { pending: 'waiting', running: 'running', done: 'done', error: 'failed', denied: 'denied', cancelled: 'cancelled' };
  /** @type {Record<ToolDecision, string>} */
  const CHOICE_LABEL = { allow: 'Allow', allowAlways: 'Allow always', allowAlwaysServer: 'Allow always for this server', deny: 'Deny' };
  /** @type {Record<ToolDecision, string>} */
  const DECISION_LABEL = { allow: 'Allowed', allowAlways: 'Allowed always', allowAlwaysServer: 'Allowed always (this server)', deny: 'Denied' };

  /** @param {ChatItem} item @returns {HTMLElement} */
  function render(item) {
    switch (item.kind) {
      case 'user': {
        const d = el('div', 'msg user' + (item.rewound ? ' rewound' : ''));
        d.appendChild(el('div', 'who', item.rewound ? 'You (rewound: the model no longer sees this)' : 'You'));
        d.appendChild(el('div', 'body plain', item.text));
        d.appendChild(actions(item, item.rewound ? [['fork', 'Fork from here'], ['pin', 'Pin']] : [['fork', 'Fork from here'], ['rewind', 'Rewind to here'], ['summarize', 'Summarise up to here'], ['pin', 'Pin']]));
        return d;
      }
      case 'model': {
        const d = el('div', 'msg model' + (item.streaming ? ' streaming' : '') + (item.rewound ? ' rewound' : ''));
        d.appendChild(el('div', 'who', item.rewound ? 'Gemini (rewound: the model no longer sees this)' : 'Gemini'));
        const body = el('div', 'body');
        body.appendChild(markdown(item.text || ''));
        d.appendChild(body);
        if (!item.streaming) d.appendChild(actions(item, [['pin', 'Pin']]));
        return d;
      }
      case 'tool': {
        const d = el('div', 'card tool status-' + item.status + (item.rewound ? ' rewound' : ''));
        const head = el('div', 'card-head');
        head.appendChild(el('span', 'tool-name', item.name));
        const asking = item.confirm && !item.confirm.decision;
        head.appendChild(el('span', 'badge', asking ? 'needs approval' : item.rewound ? 'rewound' : (STATUS_LABEL[item.status] || item.status)));
        d.appendChild(head);
        const desc = item.confirm && item.confirm.description;
        // `code` in a description or summary (the command a shell call runs) shows as code, not as raw backticks
        if (desc) { const line = el('div', 'desc'); inline(line, desc); d.appendChild(line); }
        if (item.summary && item.summary !== desc) { const line = el('div', 'summary'); inline(line, item.summary); d.appendChild(line); }
        if (item.confirm && item.confirm.diff) { const pre = el('pre', 'diff'); pre.appendChild(el('code', undefined, item.confirm.diff)); d.appendChild(pre); }
        if (item.args !== undefined && item.args !== null) {
          const det = el('details');
          det.appendChild(el('summary', undefined, 'Arguments'));
          det.appendChild(el('pre', undefined, JSON.stringify(item.args, null, 2)));
          d.appendChild(det);
        }
        if (item.confirm && !item.confirm.decision) {
          const row = el('div', 'actions');
          // the answers this call offers (chatModel.ts confirmChoices): no "Allow always" for a call that asks every time
          for (const decision of item.confirm.choices) {
            const server = decision === 'allowAlwaysServer' && item.confirm.mcpServer ? ` (${item.confirm.mcpServer})` : '';
            const b = /** @type {HTMLButtonElement} */ (el('button', decision === 'allow' ? '' : 'secondary', CHOICE_LABEL[decision] + server));
            b.type = 'button';
            b.dataset.decision = decision;
            b.addEventListener('click', () => {
              row.querySelectorAll('button').forEach((x) => { /** @type {HTMLButtonElement} */ (x).disabled = true; });
              vscode.postMessage({ type: 'decide', callId: item.callId, decision });
            });
            row.appendChild(b);
          }
          d.appendChild(row);
        } else if (item.confirm && item.confirm.decision) {
          d.appendChild(el('div', 'decision', DECISION_LABEL[item.confirm.decision] || item.confirm.decision));
        }
        return d;
      }
      case 'compaction': {
        const d = el('div', 'marker' + (item.ok ? '' : ' failed') + (item.undone ? ' undone' : ''));
        d.setAttribute('role', 'separator');
        d.appendChild(el('span', undefined, item.text + (item.edited ? ' (your edited summary)' : '') + (item.undone ? ' (undone)' : '')));
        if (item.rating) d.appendChild(el('span', 'rating', item.rating === 'good' ? 'Rated: good summary' : 'Rated: lost something'));
        else if (item.ok && item.compactionId && !item.undone) {
          const ask = actions(item, [['rateGood', 'Good summary'], ['rateLost', 'Lost something…']]);
          ask.classList.add('rate');
          d.appendChild(ask);
        }
        return d;
      }
      default:
        return el('div', 'note ' + item.kind, item.text);
    }
  }

  /**
   * The small buttons under a message: each posts {type: 'action'} for the extension to run.
   * @param {ChatItem} item @param {Array<[MessageAction, string]>} list
   */
  function actions(item, list) {
    const row = el('div', 'msg-actions');
    for (const [action, label] of list) {
      const b = /** @type {HTMLButtonElement} */ (el('button', 'link', label));
      b.type = 'button';
      b.dataset.action = action;
      b.title = label;
      b.addEventListener('click', () => vscode.postMessage({ type: 'action', action, itemId: item.id }));
      row.appendChild(b);
    }
    return row;
  }

  /** @param {PinnedFact[]} list */
  function renderPins(list) {
    pins.replaceChildren();
    pins.hidden = list.length === 0;
    if (!list.length) return;
    pins.appendChild(el('div', 'pins-head', `Pinned facts (${list.length}) — kept through every compaction`));
    for (const pin of list) {
      const row = el('div', 'pin');
      row.dataset.pinId = pin.pinId;
      row.appendChild(el('span', 'pin-text', pin.text));
      const b = /** @type {HTMLButtonElement} */ (el('button', 'link', 'Remove'));
      b.type = 'button';
      b.title = 'Unpin this fact';
      b.addEventListener('click', () => vscode.postMessage({ type: 'unpin', pinId: pin.pinId }));
      row.appendChild(b);
      pins.appendChild(row);
    }
  }

  /** @type {Record<string, string>} */
  const TODO_MARK = { pending: '○', in_progress: '◐', completed: '●', cancelled: '⊘' };
  /** @type {Record<string, string>} */
  const TODO_LABEL = { pending: 'pending', in_progress: 'in progress', completed: 'done', cancelled: 'cancelled' };

  /** The body's top padding follows the fixed plan's height, so the plan never covers the conversation's start. */
  function makeRoomForPlan() {
    document.body.style.paddingTop = plan.hidden ? '' : `${plan.offsetHeight}px`;
  }
  new ResizeObserver(makeRoomForPlan).observe(plan);

  /** The model's todo list, atop the view (it stays in sight while the conversation scrolls), updated live.
   * @param {TodoItem[]} items */
  function renderPlan(items) {
    plan.replaceChildren();
    plan.hidden = items.length === 0;
    if (!items.length) { makeRoomForPlan(); return; }
    const done = items.filter((t) => t.status === 'completed').length;
    const head = el('div', 'plan-head');
    head.appendChild(el('span', undefined, `Plan (${done}/${items.length} done)`));
    const clear = /** @type {HTMLButtonElement} */ (el('button', 'link', 'Clear'));
    clear.type = 'button';
    clear.title = 'Clear the agent’s todo list';
    clear.addEventListener('click', () => vscode.postMessage({ type: 'command', command: 'sidecar.clearPlan' }));
    head.appendChild(clear);
    plan.appendChild(head);
    const list = el('ol', 'plan-items');
    for (const item of items) {
      const li = el('li', 'todo status-' + item.status);
      li.dataset.status = item.status;
      li.title = TODO_LABEL[item.status] || item.status;
      li.appendChild(el('span', 'todo-mark', TODO_MARK[item.status] || '?'));
      li.appendChild(el('span', 'todo-text', item.description));
      li.appendChild(el('span', 'todo-state', TODO_LABEL[item.status] || item.status));
      list.appendChild(li);
    }
    plan.appendChild(list);
    makeRoomForPlan();
  }

  function nearBottom() {
    return document.documentElement.scrollHeight - window.scrollY - window.innerHeight < 80;
  }

  // after the user sends, follow the conversation to the bottom (their message, then the streaming reply) even
  // when the chat was scrolled up; scrolling up again stops following
  let follow = false;
  window.addEventListener('wheel', (e) => { if (e.deltaY < 0) follow = false; }, { passive: true });
  window.addEventListener('keydown', (e) => { if (e.key === 'PageUp' || e.key === 'Home') follow = false; });

  /** @param {ChatItem} item */
  function upsert(item) {
    const stick = follow || nearBottom();
    const node = render(item);
    node.dataset.id = item.id;
    node.dataset.kind = item.kind;
    const old = log.querySelector(`[data-id="${CSS.escape(item.id)}"]`);
    if (old) old.replaceWith(node); else log.appendChild(node);
    empty.hidden = log.childElementCount > 0;
    if (stick) window.scrollTo(0, document.documentElement.scrollHeight);
  }

  /** @param {boolean} b */
  function setBusy(b) {
    busy = b;
    stop.hidden = !b;
    send.disabled = b || !connected;
    document.body.classList.toggle('busy', b);
  }

  window.addEventListener('message', (/** @type {MessageEvent<ToWebview>} */ event) => {
    const msg = event.data;
    switch (msg.type) {
      case 'reset':
        log.replaceChildren();
        for (const item of msg.items) upsert(item);
        empty.hidden = msg.items.length > 0;
        setBusy(msg.busy);
        break;
      case 'upsert':
        upsert(msg.item);
        break;
      case 'busy':
        if (!msg.busy) follow = false;
        setBusy(msg.busy);
        break;
      case 'pins':
        renderPins(msg.pins);
        break;
      case 'todos':
        renderPlan(msg.items);
        break;
      case 'draft':
        input.value = msg.text;
        vscode.setState({ draft: msg.text });
        input.focus();
        break;
      case 'status':
        connected = msg.connected;
        status.textContent = msg.text;
        status.title = msg.text;
        // connected: one line (the usage); not running: the whole reason, wrapped, never cut off
        status.className = 'status ' + msg.level + (msg.connected ? '' : ' down');
        // the empty state names the backend in use before the first reply
        backend.textContent = msg.backend || '';
        backend.hidden = !msg.backend;
        setBusy(busy);
        break;
    }
  });

  function submit() {
    const text = input.value.trim();
    if (!text || busy || !connected) return;
    vscode.postMessage({ type: 'send', text });
    follow = true;
    window.scrollTo(0, document.documentElement.scrollHeight);
    input.value = '';
    vscode.setState({ draft: '' });
  }

  form.addEventListener('submit', (e) => { e.preventDefault(); submit(); });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); submit(); }
  });
  input.addEventListener('input', () => vscode.setState({ draft: input.value }));
  stop.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
  status.addEventListener('click', () => vscode.postMessage({ type: 'command', command: 'sidecar.compress' }));

  const saved = vscode.getState();
  if (saved && saved.draft) input.value = saved.draft;
  setBusy(false);
  vscode.postMessage({ type: 'ready' });
  input.focus();
})();
