// A task's page (#/tasks/ID): its state and totals, its accounts with
// their progress, the forms that add accounts one by one or from a CSV
// file, and the live event log.

import { request, fetchWithToken, apiBase, apiToken } from './api.js';
import { h, field, notice, confirmAction, formatTime, formatBytes, plural, dataTable } from './dom.js';
import { endpointName } from './endpoints.js';
import { flash } from './flash.js';
import { EventStream, describeEvent, isFailure } from './events.js';
import { runningStates, stateBadge, stateLabel, taskActions, accountsProgress } from './tasks.js';

const maxLogLines = 2000;

export async function taskPage(main, taskId, keepAlive) {
  const message = notice();
  const summary = h('section', { id: 'task-summary', 'aria-live': 'polite' });
  const accounts = h('div', { class: 'table-wrap', id: 'accounts' });
  const log = eventLog();
  main.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/tasks', text: 'Tasks' }), ` / task ${taskId}`),
    summary, message.el,
    h('section', { 'aria-labelledby': 'accounts-title' }, h('h2', { id: 'accounts-title', text: 'Accounts' }), accounts),
    h('div', { class: 'columns' }, addAccountForm(taskId, () => refresh()), importForm(taskId, () => refresh())),
    log.section);

  const endpoints = new Map((await request('GET', '/endpoints')).map((e) => [e.id, e]));
  let timer = null;
  let refreshing = null;
  // refresh redraws the task and its accounts; calls that come while one
  // runs are folded into one more, so a burst of events costs two requests.
  async function refresh() {
    if (refreshing) { refreshing.again = true; return; }
    refreshing = { again: false };
    try {
      do {
        refreshing.again = false;
        await redraw();
      } while (refreshing.again);
    } finally {
      refreshing = null;
    }
  }
  async function redraw() {
    clearTimeout(timer);
    const [task, list] = await Promise.all([request('GET', `/tasks/${taskId}`), request('GET', `/tasks/${taskId}/accounts`)]);
    summary.replaceChildren(...taskSummary(task, endpoints, message, () => refresh()));
    accounts.replaceChildren(accountTable(task, list, message, () => refresh()));
    // Progress is stored every second without an event: ask while busy.
    if (runningStates.has(task.state)) timer = setTimeout(() => refresh().catch(() => {}), 1500);
  }

  await refresh();
  const stream = new EventStream(taskId, {
    onEvent: (event) => { log.add(event); refresh().catch(() => {}); },
    onStatus: log.status,
    onReconnect: () => refresh().catch(() => {}),
  });
  keepAlive(() => { clearTimeout(timer); stream.stop(); });
}

function taskSummary(task, endpoints, message, after) {
  const name = (id) => (endpoints.has(id) ? endpointName(endpoints.get(id)) : `endpoint ${id}`);
  const counts = Object.entries(task.accounts)
    .filter(([state, n]) => state !== 'total' && n > 0)
    .map(([state, n]) => `${n} ${stateLabel(state)}`).join(', ');
  const t = task.totals;
  return [
    h('h1', {}, task.name || `Task ${task.id}`, ' ', stateBadge(task.state)),
    h('p', { class: 'wrap', text: `From ${name(task.source_endpoint_id)} to ${name(task.destination_endpoint_id)}` }),
    h('dl', { class: 'facts' },
      fact('Accounts', plural(task.accounts.total, 'account', 'accounts') + (counts ? ` (${counts})` : '')),
      fact('Progress', accountsProgress(task.accounts)),
      fact('Copied', `${t.messages_copied} messages, ${formatBytes(t.bytes_copied)}`),
      fact('Skipped / failed', `${t.messages_skipped} / ${t.messages_failed} messages`),
      task.started_at ? fact('Started', formatTime(task.started_at)) : null,
      task.finished_at ? fact('Finished', formatTime(task.finished_at)) : null),
    h('div', { class: 'actions toolbar' }, taskActions(task, message, async (verb, ok) => {
      if (verb === 'delete' && ok) {
        flash('ok', `Task ${task.name || task.id} deleted.`);
        location.hash = '#/tasks';
      } else {
        await after();
      }
    }), reportLink(task.id)),
  ];
}

function fact(term, value) {
  return h('div', {}, h('dt', { text: term }), h('dd', {}, value));
}

// reportLink downloads the CSV report. A plain link cannot send the API
// token, so when there is one the file is fetched and handed over as a blob.
function reportLink(taskId) {
  const path = `/tasks/${taskId}/report.csv`;
  return h('a', {
    class: 'button', id: 'report-link', href: apiBase + path, download: `task-${taskId}-report.csv`, text: 'Download report (CSV)',
    onclick: async (click) => {
      if (!apiToken()) return;
      click.preventDefault();
      const resp = await fetchWithToken(path);
      const url = URL.createObjectURL(await resp.blob());
      const a = h('a', { href: url, download: `task-${taskId}-report.csv` });
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    },
  });
}

function accountTable(task, list, message, after) {
  if (list.length === 0) return h('p', { text: 'No account yet: add one or import a CSV file below.' });
  const busy = runningStates.has(task.state);
  return dataTable('account-list', ['Login (source → destination)', 'State', 'Progress', 'Last login test', 'Last error', ''],
    list.map((account) => h('tr', { 'data-id': account.id, 'data-state': account.state },
      h('td', { class: 'wrap login' }, account.source_login,
        account.destination_login !== account.source_login ? ` → ${account.destination_login}` : ''),
      h('td', {}, stateBadge(account.state)),
      h('td', {}, accountProgress(account)),
      h('td', {}, testResult('source', account.source_test), testResult('destination', account.destination_test)),
      h('td', { class: 'wrap error-text', text: account.last_error }),
      h('td', { class: 'actions' },
        h('button', { 'data-action': 'retry', disabled: busy, 'aria-label': `Retry ${account.source_login}`, text: 'Retry',
          onclick: () => retryAccount(task, account, message, after) }),
        h('button', { class: 'danger', 'data-action': 'delete', disabled: busy, 'aria-label': `Delete ${account.source_login}`, text: 'Delete',
          onclick: () => deleteAccount(task, account, message, after) })))));
}

// accountProgress is a bar of folders done out of the folders planned:
// the number of messages to copy is only known folder by folder.
function accountProgress(account) {
  const p = account.progress;
  const finished = !runningStates.has(account.state) && account.state !== 'idle';
  const max = Math.max(p.folders_total, 1);
  const value = finished && p.folders_total === 0 ? max : p.folders_done;
  const words = `${p.folders_done}/${p.folders_total} folders · ${p.messages_copied} copied`
    + (p.messages_skipped ? ` · ${p.messages_skipped} skipped` : '')
    + (p.messages_failed ? ` · ${p.messages_failed} failed` : '');
  return h('div', { class: 'progress' },
    h('progress', { max, value, 'aria-label': `progress of ${account.source_login}: ${words}` }),
    h('span', { text: words }));
}

function testResult(side, result) {
  if (!result) return h('div', { class: 'muted', text: `${side}: not tested` });
  return h('div', { class: result.ok ? 'ok-text' : 'error-text', title: formatTime(result.tested_at),
    text: result.ok ? `${side}: ok` : `${side}: ${result.error}` });
}

async function retryAccount(task, account, message, after) {
  try {
    await request('POST', `/tasks/${task.id}/accounts/${account.id}/run`);
    message.set('ok', `Retrying ${account.source_login}.`);
  } catch (err) {
    message.set('error', `${account.source_login} was not retried: ${err.message}`);
  }
  await after();
}

async function deleteAccount(task, account, message, after) {
  if (!await confirmAction(`Delete account ${account.source_login} from this task?`)) return;
  try {
    await request('DELETE', `/tasks/${task.id}/accounts/${account.id}`);
    message.set('ok', `Account ${account.source_login} deleted.`);
  } catch (err) {
    message.set('error', `Account ${account.source_login} was not deleted: ${err.message}`);
  }
  await after();
}

// addAccountForm adds one account. The password inputs are write-only:
// they are emptied once the form is sent, whatever the answer.
function addAccountForm(taskId, after) {
  const formMessage = notice();
  const input = (name, type = 'text') => h('input', { name, type, autocomplete: type === 'password' ? 'new-password' : 'off', spellcheck: 'false', maxlength: 1024 });
  const sourceLogin = input('source_login');
  sourceLogin.required = true;
  const sourcePassword = input('source_password', 'password');
  const destinationLogin = input('destination_login');
  const destinationPassword = input('destination_password', 'password');
  const form = h('form', { id: 'account-form', class: 'card' },
    h('h2', { text: 'Add an account' }), formMessage.el,
    field('Source login', sourceLogin), field('Source password', sourcePassword),
    field('Destination login', destinationLogin, 'Empty: the same as the source.'),
    field('Destination password', destinationPassword, 'Empty: the same as the source.'),
    h('div', { class: 'actions' }, h('button', { class: 'primary', text: 'Add account' })));
  form.addEventListener('submit', async (submit) => {
    submit.preventDefault();
    formMessage.clear();
    const body = {
      source_login: sourceLogin.value.trim(), source_password: sourcePassword.value,
      destination_login: destinationLogin.value.trim(), destination_password: destinationPassword.value,
    };
    sourcePassword.value = '';
    destinationPassword.value = '';
    try {
      await request('POST', `/tasks/${taskId}/accounts`, body);
      formMessage.set('ok', `Account ${body.source_login} added.`);
      sourceLogin.value = '';
      destinationLogin.value = '';
    } catch (err) {
      formMessage.set('error', `Not added: ${err.message}`);
    }
    await after();
  });
  return form;
}

// importForm uploads a CSV file; the service takes all of it or none, and
// names every bad line, which the form lists.
function importForm(taskId, after) {
  const formMessage = notice();
  const file = h('input', { name: 'file', type: 'file', accept: '.csv,text/csv,text/plain', required: true });
  const form = h('form', { id: 'import-form', class: 'card' },
    h('h2', { text: 'Import accounts from CSV' }), formMessage.el,
    field('CSV file', file, 'Columns: source_login, source_password, and optionally destination_login, destination_password. A header row is optional; "," or ";" separate.'),
    h('div', { class: 'actions' }, h('button', { class: 'primary', text: 'Import' })));
  form.addEventListener('submit', async (submit) => {
    submit.preventDefault();
    formMessage.clear();
    const chosen = file.files[0];
    if (!chosen) return;
    try {
      const result = await request('POST', `/tasks/${taskId}/accounts/import`, await chosen.text(), 'text/csv');
      formMessage.set('ok', `${plural(result.created, 'account', 'accounts')} imported from ${chosen.name}.`);
      form.reset();
    } catch (err) {
      const lines = err.message.split('\n');
      const bad = lines.filter((l) => l.startsWith('line ') || l.startsWith('and '));
      if (err.status === 400 && bad.length > 0) {
        formMessage.set('error', `Nothing was imported: ${chosen.name} has ${plural(bad.length, 'bad line', 'bad lines')}.`, lines);
      } else {
        formMessage.set('error', `Nothing was imported: ${err.message}`);
      }
    }
    await after();
  });
  return form;
}

// eventLog is the live log section: one line per event, oldest first.
function eventLog() {
  const state = h('span', { id: 'stream-state', class: 'muted', text: 'connecting…' });
  const list = h('ol', { id: 'event-log', class: 'log', role: 'log', 'aria-label': 'Event log', tabindex: 0 });
  const section = h('section', { 'aria-labelledby': 'log-title' },
    h('h2', { id: 'log-title' }, 'Event log ', state), list);
  return {
    section,
    status(text) { state.textContent = text; },
    add(event) {
      const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
      list.append(h('li', { class: isFailure(event) ? 'failure' : '', 'data-kind': event.kind, 'data-seq': event.seq },
        h('time', { datetime: event.time, text: new Date(event.time).toLocaleTimeString() }), ' ', describeEvent(event)));
      while (list.childElementCount > maxLogLines) list.firstElementChild.remove();
      if (atBottom) list.scrollTop = list.scrollHeight;
    },
  };
}
