// A task's plan on its page, and an account's on its own: a dry run that
// reads both servers and copies nothing, and what it found, in words. The
// task page lists the accounts in brief, a page at a time (the accounts
// with a problem first of all); an account's page shows its whole plan,
// folder by folder.

import { request } from './api.js';
import { PlanFilter, PlanState } from './enums.js';
import { h, notice, formatBytes, formatDuration, formatTime, plural, dataTable } from './dom.js';

const pendingPoll = 1000;
const planPage = 50;
const maxPlanPage = 1000; // the API's most

// The listings the task page offers, the first shown first: the filter,
// its label, and what an empty listing says.
const filters = [
  [PlanFilter.problems, 'Accounts with a problem', "No account's plan found a problem."],
  [PlanFilter.all, 'All accounts', 'No account has a plan.'],
  [PlanFilter.blocking, 'Blocked accounts', 'No account is blocked.'],
  [PlanFilter.failed, 'Accounts not planned', 'Every account could be planned.'],
  [PlanFilter.pending, 'Accounts being planned', 'No plan is being read.'],
];

// planSection returns the task page's section, draw(), which reads the
// plans again (and again while some are pending), and stop().
export function planSection(taskId) {
  const message = notice();
  const summary = h('p', { id: 'plan-summary', class: 'hint', text: 'No plan yet: a plan reads both servers and copies nothing.' });
  const table = h('div', { class: 'table-wrap', id: 'plan-accounts' });
  const listed = h('p', { id: 'plan-listed', class: 'muted', hidden: true });
  const more = h('button', { 'data-action': 'plan-more', hidden: true, text: 'Show more', onclick: () => showMore().catch(showError) });
  const filter = h('select', { id: 'plan-filter', 'aria-label': 'Which accounts to list', onchange: () => draw().catch(showError) },
    filters.map(([value, label]) => h('option', { value, text: label })));
  const start = h('button', { 'data-action': 'plan', text: 'Plan (dry run)', onclick: async () => {
    try {
      const started = await request('POST', `/tasks/${taskId}/plan`, {});
      message.set('ok', `Planning ${plural(started.accounts, 'account', 'accounts')}: nothing is copied.`);
    } catch (err) {
      message.set('error', `Not planned: ${err.message}`);
    }
    await draw();
  } });
  const listing = h('div', { id: 'plan-listing', hidden: true }, h('div', { class: 'actions toolbar' }, filter), listed, table, more);
  const section = h('section', { id: 'plan', 'aria-labelledby': 'plan-title' },
    h('h2', { id: 'plan-title', text: 'Plan' }), h('div', { class: 'actions toolbar' }, start), message.el, summary, listing);

  let timer = null;
  let stopped = false;
  let rows = []; // the rows shown, of the pages read so far
  const showError = (err) => message.set('error', `The plan could not be read: ${err.message}`);
  const read = (after, limit) => request('GET', `/tasks/${taskId}/plan?filter=${filter.value}&limit=${limit}&after=${after}`);

  function show(plan) {
    const estimate = plan.estimate_seconds == null ? 'the time is known after a first pass'
      : `about ${formatDuration(plan.estimate_seconds * 1000)} at ${formatBytes(plan.rate_bytes_per_second)}/s`;
    summary.textContent = `${plan.done} planned, ${plan.pending} pending, ${plan.failed} failed, ${plan.blocked} blocked; `
      + `${formatBytes(plan.to_copy_bytes)} of ${formatBytes(plan.source_bytes)} to copy; ${estimate}.`;
    listed.hidden = false;
    listed.textContent = plan.listed === 0 ? filters.find(([value]) => value === filter.value)[2]
      : `${rows.length} of ${plural(plan.listed, 'account', 'accounts')}.`;
    table.replaceChildren(rows.length ? dataTable('plan-list', ['Account', 'Plan', 'Folders', 'Messages', 'To copy', 'Quota free', 'Problems'], rows) : '');
    more.hidden = rows.length >= plan.listed;
  }

  // draw reads the sums and the rows again: as many as are shown (a poll
  // keeps the pages "Show more" added), or the first page (a new filter).
  async function draw(keepRows = false) {
    clearTimeout(timer);
    if (stopped) return;
    const plan = await read(0, keepRows ? Math.min(Math.max(planPage, rows.length), maxPlanPage) : planPage);
    if (plan.planned === 0) return;
    listing.hidden = false;
    rows = plan.accounts.map((a) => accountRow(taskId, a));
    show(plan);
    if (plan.pending > 0) timer = setTimeout(() => draw(true).catch(() => {}), pendingPoll);
  }

  async function showMore() {
    const last = rows[rows.length - 1];
    const plan = await read(last ? last.dataset.id : 0, planPage);
    rows.push(...plan.accounts.map((a) => accountRow(taskId, a)));
    show(plan);
  }

  const stop = () => { stopped = true; clearTimeout(timer); };
  return { section, draw, stop };
}

// accountRow is an account's plan in brief, its login a link to its page
// (where the plan is shown whole).
function accountRow(taskId, a) {
  const done = a.state === PlanState.done;
  const problems = a.problems.map((problem) => h('li', { class: problem.blocking ? 'error-text' : '',
    text: `${problem.blocking ? 'Blocking' : 'Warning'}: ${problem.words}` }));
  if (a.error) problems.push(h('li', { class: 'error-text', text: `Not planned: ${a.error}` }));
  return h('tr', { 'data-id': a.account_id, 'data-blocking': String(a.blocking) },
    h('td', {}, h('a', { href: `#/tasks/${taskId}/accounts/${a.account_id}`, text: a.source_login })), h('td', { text: a.state }),
    h('td', { text: done ? String(a.folders) : '–' }), h('td', { text: done ? String(a.source_messages) : '–' }),
    h('td', { text: done ? formatBytes(a.to_copy_bytes) : '–' }),
    h('td', { text: !done ? '–' : a.quota_free < 0 ? 'no quota' : formatBytes(a.quota_free) }),
    h('td', {}, problems.length ? h('ul', { class: 'problems' }, problems) : (done ? 'none' : '')));
}

// accountPlanSection returns an account page's section, draw(), which
// reads the account's plan (again while it is pending), and stop().
export function accountPlanSection(taskId, accountId) {
  const message = notice();
  const body = h('div', { id: 'account-plan-body' });
  const start = h('button', { 'data-action': 'plan-account', text: 'Plan this account (dry run)', onclick: async () => {
    try {
      await request('POST', `/tasks/${taskId}/plan`, { ids: [accountId] });
      message.set('ok', 'Planning: both servers are read, nothing is copied.');
    } catch (err) {
      message.set('error', `Not planned: ${err.message}`);
    }
    await draw();
  } });
  const section = h('section', { id: 'account-plan', 'aria-labelledby': 'account-plan-title' },
    h('h2', { id: 'account-plan-title', text: 'Plan' }), h('div', { class: 'actions toolbar' }, start), message.el, body);

  let timer = null;
  let stopped = false;
  async function draw() {
    clearTimeout(timer);
    if (stopped) return;
    let record;
    try {
      record = await request('GET', `/tasks/${taskId}/accounts/${accountId}/plan`);
    } catch (err) {
      if (err.status !== 404) throw err;
      body.replaceChildren(h('p', { class: 'hint', text: 'No plan yet: a plan reads both servers and copies nothing.' }));
      return;
    }
    body.replaceChildren(...accountPlan(record));
    if (record.state === PlanState.pending) timer = setTimeout(() => draw().catch(() => {}), pendingPoll);
  }
  const stop = () => { stopped = true; clearTimeout(timer); };
  return { section, draw, stop };
}

// accountPlan is an account's whole plan: what stands in the way, then
// each folder's plan, what the task's patterns leave out and the messages
// too large for the destination.
function accountPlan(record) {
  const when = record.planned_at ? `planned ${formatTime(record.planned_at)}` : `asked for ${formatTime(record.requested_at)}`;
  const status = h('p', { id: 'account-plan-state', class: 'hint', text: `Plan ${record.state}, ${when}.` });
  const p = record.plan;
  if (record.state === PlanState.pending) status.textContent += ' Both servers are being read.';
  if (!p) return [status, record.error ? h('p', { class: 'error-text', text: `Not planned: ${record.error}` }) : null].filter(Boolean);
  const problems = p.problems.length === 0 ? h('p', { text: 'Nothing stands in the way.' })
    : h('ul', { class: 'problems', id: 'account-plan-problems' }, p.problems.map((problem) => h('li', { class: problem.blocking ? 'error-text' : '',
      text: `${problem.blocking ? 'Blocking' : 'Warning'}: ${problem.words}` })));
  const folders = h('div', { class: 'table-wrap' }, dataTable('account-plan-folders',
    ['Source folder', 'Destination folder', 'Role', 'Messages', 'To copy', 'On destination', 'Note'],
    p.folders.map((f) => {
      const notes = [];
      if (f.moved) notes.push(`${f.moved === 'collision' ? 'moved: another folder takes' : 'renamed: the destination refuses'} ${f.wanted}`);
      else if (f.create) notes.push('created');
      if (f.previous_destination && f.previous_destination !== f.destination) notes.push(`an earlier pass used ${f.previous_destination}`);
      if (f.oversize_messages > 0) notes.push(`${plural(f.oversize_messages, 'message', 'messages')} too large`);
      return h('tr', { 'data-folder': f.source, class: f.moved ? 'failure' : '' },
        h('td', { class: 'wrap', text: f.source }), h('td', { class: 'wrap', text: f.destination }), h('td', { text: f.role || '–' }),
        h('td', { text: `${f.source_messages} (${formatBytes(f.source_bytes)})` }), h('td', { text: formatBytes(f.to_copy_bytes) }),
        h('td', { text: String(f.destination_messages) }), h('td', { class: 'wrap', text: notes.join('; ') }));
    })));
  const facts = h('dl', { class: 'facts' },
    h('div', {}, h('dt', { text: 'To copy' }), h('dd', { text: `${formatBytes(p.to_copy_bytes)} of ${formatBytes(p.source_bytes)}, ${plural(p.source_messages, 'message', 'messages')}` })),
    h('div', {}, h('dt', { text: 'Quota free' }), h('dd', { text: p.quota_free < 0 ? 'no quota' : formatBytes(p.quota_free) })),
    h('div', {}, h('dt', { text: 'Largest message taken' }), h('dd', { text: p.size_limit > 0 ? formatBytes(p.size_limit) : 'no limit known' })),
    h('div', {}, h('dt', { text: 'Source offers' }), h('dd', { class: 'wrap', text: p.source_capabilities.join(' ') || '–' })),
    h('div', {}, h('dt', { text: 'Destination offers' }), h('dd', { class: 'wrap', text: p.destination_capabilities.join(' ') || '–' })),
    p.scripts ? h('div', { id: 'account-plan-scripts' }, h('dt', { text: 'Sieve scripts' }), h('dd', { class: 'wrap', text: p.scripts.summary })) : null);
  return [status, problems, facts, folders,
    p.excluded.length ? h('p', { class: 'muted', text: `Left out by the folder patterns: ${p.excluded.join(', ')}` }) : null,
    p.oversize.length ? h('ul', { class: 'problems', id: 'account-plan-oversize' }, p.oversize.map((m) => h('li', {
      text: `${m.folder}, UID ${m.uid}: ${formatBytes(m.size)}, larger than the destination takes` }))) : null].filter(Boolean);
}
