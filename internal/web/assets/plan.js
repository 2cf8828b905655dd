// A task's plan on its page: a dry run of its accounts that reads both
// servers and copies nothing, and what it found, account by account, in
// words.

import { request } from './api.js';
import { h, notice, formatBytes, formatDuration, plural, dataTable } from './dom.js';

const pendingPoll = 1000;

// planSection returns the section, draw(), which reads the plans again
// (and again while some are pending), and stop().
export function planSection(taskId) {
  const message = notice();
  const summary = h('p', { id: 'plan-summary', class: 'hint', text: 'No plan yet: a plan reads both servers and copies nothing.' });
  const table = h('div', { class: 'table-wrap', id: 'plan-accounts' });
  const start = h('button', { 'data-action': 'plan', text: 'Plan (dry run)', onclick: async () => {
    try {
      const started = await request('POST', `/tasks/${taskId}/plan`, {});
      message.set('ok', `Planning ${plural(started.accounts, 'account', 'accounts')}: nothing is copied.`);
    } catch (err) {
      message.set('error', `Not planned: ${err.message}`);
    }
    await draw();
  } });
  const section = h('section', { id: 'plan', 'aria-labelledby': 'plan-title' },
    h('h2', { id: 'plan-title', text: 'Plan' }), h('div', { class: 'actions toolbar' }, start), message.el, summary, table);

  let timer = null;
  let stopped = false;
  async function draw() {
    clearTimeout(timer);
    if (stopped) return;
    const plan = await request('GET', `/tasks/${taskId}/plan`);
    if (plan.accounts.length === 0) return;
    const estimate = plan.estimate_seconds == null ? 'the time is known after a first pass'
      : `about ${formatDuration(plan.estimate_seconds * 1000)} at ${formatBytes(plan.rate_bytes_per_second)}/s`;
    summary.textContent = `${plan.done} planned, ${plan.pending} pending, ${plan.failed} failed, ${plan.blocked} blocked; `
      + `${formatBytes(plan.to_copy_bytes)} of ${formatBytes(plan.source_bytes)} to copy; ${estimate}.`;
    table.replaceChildren(dataTable('plan-list', ['Account', 'Plan', 'Folders', 'Messages', 'To copy', 'Quota free', 'Problems'],
      plan.accounts.map((a) => {
        const p = a.plan;
        const problems = p ? p.problems.map((problem) => h('li', { class: problem.blocking ? 'error-text' : '',
          text: `${problem.blocking ? 'Blocking' : 'Warning'}: ${problem.words}` })) : [];
        if (a.error) problems.push(h('li', { class: 'error-text', text: `Not planned: ${a.error}` }));
        if (p?.excluded?.length) problems.push(h('li', { text: `Left out by the folder patterns: ${p.excluded.join(', ')}` }));
        return h('tr', { 'data-id': a.account_id, 'data-blocking': String(a.blocking) },
          h('td', { text: a.source_login }), h('td', { text: a.state }),
          h('td', { text: p ? String(p.folders.length) : '–' }), h('td', { text: p ? String(p.source_messages) : '–' }),
          h('td', { text: p ? formatBytes(p.to_copy_bytes) : '–' }),
          h('td', { text: !p ? '–' : p.quota_free < 0 ? 'no quota' : formatBytes(p.quota_free) }),
          h('td', {}, problems.length ? h('ul', { class: 'problems' }, problems) : (p ? 'none' : '')));
      })));
    if (plan.pending > 0) timer = setTimeout(() => draw().catch(() => {}), pendingPoll);
  }
  const stop = () => { stopped = true; clearTimeout(timer); };
  return { section, draw, stop };
}
