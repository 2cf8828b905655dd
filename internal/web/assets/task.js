// A task's page (#/tasks/ID): its state and totals, its accounts with
// their progress, the forms that add accounts one by one or from a CSV
// file, and the live event log.

import { request, requestPage, downloadLink } from './api.js';
import { h, field, notice, confirmAction, formatTime, formatBytes, formatDuration, plural, dataTable, keepFocus } from './dom.js';
import { endpointName } from './endpoints.js';
import { flash } from './flash.js';
import { EventStream, describeEvent, isFailure, progressFigures, throttle, coalesce, figuresOnly } from './events.js';
import { runningStates, stateBadge, stateLabel, taskActions, accountsProgress, finishedAccounts, pollWhileBusy, taskForm } from './tasks.js';
import { AccountState, AuthMethod, EventKind, LoginTestFilter, OAuth2Grant, TaskState, fieldLimits } from './enums.js';
import { accountList } from './accountlist.js';
import { throughputChart } from './throughput.js';
import { cutoverSection } from './cutover.js';
import { webhookSection } from './webhook.js';
import { planSection } from './plan.js';

const maxLogLines = 2000;

// The events a task's webhook is called on (migration.WebhookKinds).
const webhookKinds = new Set([EventKind.runFinished, EventKind.runCanceled, EventKind.accountFailed, EventKind.finalVerified, EventKind.finalUnverified]);


export async function taskPage(main, taskId, keepAlive) {
  const message = notice();
  const summary = h('section', { id: 'task-summary' });
  // Only a change of the task's state is announced: the figures change
  // every second and would drown a screen reader.
  const announcer = h('p', { class: 'visually-hidden', id: 'task-announcer', 'aria-live': 'polite' });
  const accounts = h('div', { class: 'table-wrap', id: 'accounts' });
  const bulk = h('div', { id: 'bulk-actions', class: 'actions bulk', hidden: true });
  const passes = h('section', { id: 'passes', 'aria-labelledby': 'passes-title', hidden: true });
  const log = eventLog();
  const chart = throughputChart();
  const cutover = cutoverSection(taskId, () => refresh());
  const webhook = webhookSection(taskId);
  const plan = planSection(taskId);
  const accountForm = addAccountForm(taskId, () => refresh());
  // The task's settings (name, servers, options), which a task's creation
  // set: seen and changed here, between passes.
  const settings = h('details', { id: 'task-settings', class: 'card' },
    h('summary', { text: 'Settings: name, servers and options' }));
  // The accounts shown: a page of those the chips and search choose.
  const shownAccounts = accountList(taskId, () => refresh().catch((err) => message.set('error', `The accounts could not be listed: ${err.message}`)),
    () => drawBulk());
  main.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/tasks', text: 'Tasks' }), ` / task ${taskId}`),
    summary, announcer, message.el,
    h('section', { 'aria-labelledby': 'accounts-title' }, h('h2', { id: 'accounts-title', text: 'Accounts' }),
      shownAccounts.controls, bulk, shownAccounts.pagerTop, accounts, shownAccounts.pager),
    chart.section,
    plan.section,
    settings,
    cutover.section,
    passes,
    h('div', { class: 'columns' }, accountForm.home, importForm(taskId, () => refresh())),
    webhook.section,
    log.section);

  const endpoints = new Map((await request('GET', '/endpoints')).map((e) => [e.id, e]));
  const authOf = (id) => endpoints.get(id)?.auth ?? null;
  let timer = null;
  let stopped = false;
  let shown = null; // the task and the page of its accounts as drawn
  let drawnTable = ''; // what the accounts table shows, to draw it only when it changes
  // The folder each running account is copying, as its last
  // account.progress event said: the API does not store it.
  const folders = new Map();
  // refresh redraws the task and the page of its accounts from the API;
  // calls that come while one runs are folded into one more.
  const refresh = coalesce(async () => {
    clearTimeout(timer);
    let [task, page, runs, lifecycle] = await Promise.all([request('GET', `/tasks/${taskId}`), requestPage(shownAccounts.path()),
      request('GET', `/tasks/${taskId}/passes`), request('GET', `/tasks/${taskId}/lifecycle`)]);
    if (page.items.length === 0 && shownAccounts.emptyPage()) page = await requestPage(shownAccounts.path());
    if (stopped) return;
    const list = page.items;
    if (shown && shown.task.state !== task.state) announcer.textContent = `${task.name || `Task ${task.id}`} is ${stateLabel(task.state)}.`;
    if (!shown) {
      accountForm.useLogins(authOf(task.source_endpoint_id), authOf(task.destination_endpoint_id));
      settings.append(taskForm([...endpoints.values()], task, () => refresh()));
    }
    shown = { task, list, total: page.total };
    document.title = tabTitle(task);
    keepFocus(summary, () => summary.replaceChildren(...taskSummary(task, runs, endpoints, message, () => refresh())));
    for (const id of folders.keys()) if (!list.some((a) => a.id === id && a.state === AccountState.running)) folders.delete(id);
    showPasses(passes, runs);
    keepFocus(cutover.section, () => cutover.draw(task, lifecycle));
    chart.draw(runningStates.has(task.state));
    keepFocus(shownAccounts.controls, () => shownAccounts.showChips(task));
    keepFocus(shownAccounts.pager, () => keepFocus(shownAccounts.pagerTop, () => shownAccounts.showPager(page)));
    drawBulk();
    // The table is drawn again only when what it shows changed: a redraw
    // under the pointer can swallow a click.
    const tableKey = JSON.stringify([list, task.state, [...folders], shownAccounts.filtered(), [...shownAccounts.ticked]]);
    if (tableKey !== drawnTable) {
      drawnTable = tableKey;
      keepFocus(accounts, () => accounts.replaceChildren(accountTable(task, list, shownAccounts, folders, message, () => refresh(), accountForm,
        (account) => { retried = account; })));
    }
    if (retried) await sayHowTheRetryEnded(list);
    // The events tell what changes; asking now and then while busy
    // catches what a lost connection would hide.
    if (runningStates.has(task.state) || task.tests.running) timer = setTimeout(() => refresh().catch(() => {}), pollWhileBusy);
  });
  // The account retried from its row, as it was before the retry, until
  // the page has said how its attempt ended. A list read before the retry
  // took effect still shows the account as it was: only an attempt that
  // finished since (another finished_at) is the retry's.
  let retried = null;
  async function sayHowTheRetryEnded(list) {
    const a = list.find((shownAccount) => shownAccount.id === retried.id)
      ?? await request('GET', `/tasks/${taskId}/accounts/${retried.id}`).catch(() => null);
    if (!a || inRun(a) || !a.finished_at || a.finished_at === retried.finished_at) return;
    retried = null;
    if (a.state === AccountState.completed) message.set('ok', `${a.source_login}: retried and completed.`);
    else message.set('error', `${a.source_login}: retried, ${stateLabel(a.state)}: ${a.last_error}`);
  }

  // drawBulk offers the bulk actions for what is ticked or chosen now.
  function drawBulk() {
    keepFocus(bulk, () => showBulkActions(bulk, shown.task, shownAccounts.selection(shown.total), message,
      () => { shownAccounts.ticked.clear(); return refresh(); }));
  }
  const refreshSoon = throttle(() => refresh().catch(() => {}), 1000);

  // showFigures puts the figures an event carries in its account's row
  // and the task's totals at once, without asking the API. Figures older
  // than the drawn ones (a replayed event) are left out.
  function showFigures(event) {
    const account = shown?.list.find((a) => a.id === event.account_id);
    const before = account?.progress;
    const figures = takeFigures(account, event);
    if (!figures) return;
    // A throttle's pause comes with the refresh it causes (paused_until).
    const folder = copyingFolder(event);
    if (folder) folders.set(account.id, folder);
    else folders.delete(account.id); // done with it; the next is not known yet
    const totals = shown.task.totals;
    for (const key of Object.keys(totals)) if (key in figures) totals[key] += figures[key] - before[key];
    accounts.querySelector(`#account-list tr[data-id="${account.id}"] td.progress-cell`)?.replaceChildren(accountProgress(account, folders.get(account.id)));
    summary.querySelector('#task-copied')?.replaceChildren(copiedText(totals));
    summary.querySelector('#task-skipped')?.replaceChildren(skippedText(totals));
  }

  await refresh();
  plan.draw().catch((err) => message.set('error', `The plan could not be read: ${err.message}`));
  // The delivery log changes when an event calls the webhook, not at
  // every refresh.
  const drawWebhook = () => webhook.draw().catch((err) => message.set('error', `The webhook could not be read: ${err.message}`));
  drawWebhook();
  const stream = new EventStream(taskId, {
    onEvent: (event) => {
      log.add(event);
      chart.add(event);
      showFigures(event);
      if (!figuresOnly.has(event.kind)) refreshSoon.call();
      if (webhookKinds.has(event.kind)) drawWebhook();
    },
    onStatus: log.status,
    onReconnect: () => refreshSoon.call(),
  });
  keepAlive(() => { stopped = true; clearTimeout(timer); webhook.stop(); plan.stop(); refreshSoon.stop(); stream.stop(); document.title = 'mailmigrate'; });
}

// tabTitle names the task in the browser's tab, with how far its pass is
// while it runs: a person in another tab sees it move.
function tabTitle(task) {
  const name = task.name || `task ${task.id}`;
  if (!runningStates.has(task.state) || task.accounts.total === 0) return `${name} — mailmigrate`;
  const done = finishedAccounts(task.accounts);
  return `${Math.floor((100 * done) / task.accounts.total)}% · ${name} — mailmigrate`;
}

// copiedText is what the accounts copied to date, over every pass, and in
// their last pass when that is less, of their sources' counted size.
const copiedText = (t) => `${t.messages_copied_to_date} messages, ${formatBytes(t.bytes_copied_to_date)} to date`
  + (t.messages_copied_to_date > t.messages_copied ? `; ${t.messages_copied} in the last pass` : '')
  + (t.source_messages > 0 ? ` (sources: ${t.source_messages} messages, ${formatBytes(t.source_bytes)}${t.accounts_uncounted > 0 ? `; ${plural(t.accounts_uncounted, 'account', 'accounts')} not counted yet` : ''})` : '');
const testsText = (t) => `${t.tested} of ${t.total} accounts tested, ${t.failed} failed${t.running ? ', under way' : ''}`
  + (t.pace ? `: ${t.pace}` : (t.time_left_seconds !== null ? ` · about ${formatDuration(t.time_left_seconds * 1000)} left` : ''));
// loginsText is how every account's logins stand, whichever test or attempt
// tried them last.
const loginsText = (l) => [`${l.working} work`, l.refused ? `${l.refused} refused (need credentials)` : '',
  l.untested ? `${l.untested} not tested` : ''].filter(Boolean).join(', ');
const skippedText = (t) => `${t.messages_skipped} / ${t.messages_failed} messages`;

function taskSummary(task, runs, endpoints, message, after) {
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
      fact('Copied', copiedText(t), 'task-copied'),
      fact('Skipped / failed', skippedText(t), 'task-skipped'),
      task.accounts.total > 0 ? fact('Logins', loginsText(task.logins), 'task-logins') : null,
      task.tests.total > 0 ? fact(task.tests.running ? 'Login test' : 'Last login test', testsText(task.tests), 'task-tests') : null,
      passPace(runs, Date.now()),
      task.started_at ? fact('Started', formatTime(task.started_at)) : null,
      task.finished_at ? fact('Finished', formatTime(task.finished_at)) : null),
    h('div', { class: 'actions toolbar' }, taskActions(task, message, async (verb, ok) => {
      if (verb === 'delete' && ok) {
        flash('ok', `Task ${task.name || task.id} deleted.`);
        location.hash = '#/tasks';
      } else {
        await after();
      }
    }), reportLink(task.id, task.accounts.total)),
    h('div', { class: 'actions toolbar', id: 'follow-up' }, followUps(task, runs, message, after)),
  ];
}

// followUps are the passes a task's last pass or test calls for: the failed
// accounts again, or only the accounts whose logins work, sparing the
// others the servers' slow-down and lock-out after failed logins; and,
// once a pass has been, one that verifies both servers of every account
// (a delta pass trusts a source that did not change).
function followUps(task, runs, message, after) {
  if (runningStates.has(task.state) && !migrating(task)) return [];
  const run = (body, what, path = 'run') => async () => {
    try {
      const result = await request('POST', `/tasks/${task.id}/${path}`, body);
      message.set('ok', `Running ${plural(result.accounts, 'account', 'accounts')}: ${what}.`);
    } catch (err) {
      message.set('error', `Not run: ${err.message}`);
    }
    await after();
  };
  return [
    task.accounts.failed > 0 ? h('button', { 'data-action': 'retry-failed', text: `Retry the ${task.accounts.failed} failed`,
      onclick: run({ state: [AccountState.failed] }, 'the failed ones') }) : null,
    task.tests.failed > 0 ? h('button', { 'data-action': 'run-passed', text: 'Run only the accounts whose logins work',
      onclick: run({ login_test: LoginTestFilter.passed }, 'those whose login test passed') }) : null,
    runs.length > 0 && !runningStates.has(task.state) ? h('button', {
      'data-action': 'verify', text: 'Verify both servers',
      title: 'A pass that looks at both servers of every account, as the final pass does',
      onclick: async () => {
        const question = `Verify the ${plural(task.accounts.total, 'account', 'accounts')} of ${task.name || `task ${task.id}`} on both servers? `
          + 'A delta pass ends an account at its source when the source did not change, so it misses a change made on the new server alone; '
          + 'this pass logs in to both servers of every account and copies what is missing.';
        if (await confirmAction(question, 'Verify')) await run({}, 'verifying both servers', 'run?verify=true')();
      },
    }) : null,
  ].filter(Boolean);
}

// passPace is the pass under way: how long it has run, its rate, and the
// time left at the pace its accounts have ended so far. The estimate goes
// by accounts, which a pass knows all of from the start; it waits for the
// first to end rather than guess.
function passPace(runs, now) {
  const pass = runs.find((r) => !r.ended_at);
  if (!pass) return null;
  const elapsed = Math.max(now - Date.parse(pass.started_at), 1000);
  const ended = pass.accounts_completed + pass.accounts_completed_with_errors + pass.accounts_failed + pass.accounts_canceled;
  const words = [`${formatDuration(elapsed)} so far`, `${formatBytes(pass.bytes_copied / (elapsed / 1000))}/s`];
  if (ended >= pass.accounts) {
    words.push('ending');
  } else if (pass.accounts_uncounted === 0 && pass.source_messages > 0) {
    // Every account's source is counted: the pass goes by messages.
    const fraction = doneFraction(pass);
    words.push(`${Math.floor(100 * fraction)}% of ${pass.source_messages} messages, ${formatBytes(pass.source_bytes)}`,
      timeLeft(fraction, elapsed));
  } else {
    // Some sources are not counted yet: by accounts, once one has ended.
    words.push(ended === 0 ? 'time left: known once an account ends' : `about ${formatDuration(((pass.accounts - ended) * elapsed) / ended)} left`);
  }
  return fact(`Pass ${pass.pass}`, words.join(' · '), 'pass-pace');
}

// minimumForEstimate is how much of a total must be done, and for how
// long, before the time left is guessed: the first seconds of an attempt (logins,
// listing) say little about its pace.
const minimumForEstimate = { fraction: 0.02, elapsed: 5000 };

// doneFraction is how much of their counted source figures (of an account
// or a pass) have done: the further of messages handled (copied, or
// skipped as already there, which a re-run does fast) and bytes copied
// (which a first copy's time goes by).
function doneFraction(f) {
  const messages = f.source_messages > 0 ? (f.messages_copied + f.messages_skipped + f.messages_failed) / f.source_messages : 1;
  const bytes = f.source_bytes > 0 ? f.bytes_copied / f.source_bytes : 0;
  return Math.min(1, Math.max(messages, bytes));
}

// timeLeft is the time to go at the pace that did fraction in elapsed ms.
function timeLeft(fraction, elapsed) {
  if (fraction >= 1) return 'ending';
  if (fraction < minimumForEstimate.fraction || elapsed < minimumForEstimate.elapsed) return 'time left: measuring';
  return `about ${formatDuration(((1 - fraction) * elapsed) / fraction)} left`;
}

function fact(term, value, id) {
  return h('div', {}, h('dt', { text: term }), h('dd', { id }, value));
}

// reportLink downloads the CSV report. A task without accounts has no
// report yet.
function reportLink(taskId, accounts) {
  if (accounts === 0) {
    return h('button', { id: 'report-link', disabled: true, title: 'Add accounts first', text: 'Download report (CSV)' });
  }
  return downloadLink('report-link', `/tasks/${taskId}/report.csv`, `task-${taskId}-report.csv`, 'Download report (CSV)');
}

// migrating says whether a task runs a migration that accounts can join
// or leave one by one (not a login test, not a cancel of the whole pass).
export function migrating(task) {
  return task.state === TaskState.queued || task.state === TaskState.running;
}

// inRun says whether an account is queued or running: it cannot be
// changed or run again until it ends, but it can be canceled alone.
export function inRun(account) {
  return account.state === AccountState.queued || account.state === AccountState.running;
}

function accountTable(task, list, view, folders, message, after, accountForm, follow) {
  const edit = accountForm.edit;
  if (list.length === 0 && view.filtered()) return h('p', { text: 'No account matches: choose another state or search.' });
  if (list.length === 0) return h('p', { text: 'No account yet: add one or import a CSV file below.' });
  const busy = runningStates.has(task.state);
  // While a migration runs, the accounts not in it stay at hand.
  const locked = (account) => inRun(account) || (busy && !migrating(task));
  const ids = list.map((a) => a.id);
  const allTicked = ids.every((id) => view.ticked.has(id));
  const tickAll = h('input', { type: 'checkbox', id: 'tick-page', 'aria-label': 'Select every account of this page', checked: allTicked,
    onchange: (e) => {
      table.querySelectorAll('input[data-action="tick"]').forEach((box) => { box.checked = e.target.checked; });
      view.tick(ids, e.target.checked);
    } });
  const headers = ['', 'Login (source → destination)', 'State', 'Progress', 'Last login test', 'Last error', ''];
  const table = dataTable('account-list', headers, list.flatMap((account) => [h('tr', { 'data-id': account.id, 'data-state': account.state },
      h('td', { class: 'tick' }, h('input', { type: 'checkbox', 'data-action': 'tick', 'aria-label': `Select ${account.source_login}`,
        checked: view.ticked.has(account.id), onchange: (e) => view.tick([account.id], e.target.checked) })),
      h('td', { class: 'login', title: account.destination_login !== account.source_login ? `${account.source_login} → ${account.destination_login}` : account.source_login },
        h('a', { href: `#/tasks/${task.id}/accounts/${account.id}`, text: account.source_login }),
        account.destination_login !== account.source_login ? ` → ${account.destination_login}` : ''),
      h('td', {}, stateBadge(account.state), needsCredentials(account)),
      h('td', { class: 'progress-cell' }, accountProgress(account, folders.get(account.id))),
      h('td', { class: 'tests' }, testBrief(account)),
      h('td', { class: 'error-cell' }, errorBrief(account.last_error || testError(account))),
      h('td', { class: 'actions' },
        inRun(account) && migrating(task)
          ? h('button', { 'data-action': 'cancel-account', 'aria-label': `Cancel ${account.source_login}`, text: 'Cancel',
            onclick: () => cancelAccount(task, account, message, after) })
          : h('button', { 'data-action': 'retry', disabled: locked(account), 'aria-label': `Retry ${account.source_login}`, text: 'Retry',
            onclick: () => retryAccount(task, account, message, after, follow) }),
        h('button', { 'data-action': 'edit', disabled: locked(account), 'aria-label': `Edit ${account.source_login}`, text: 'Edit',
          onclick: () => edit(account) }),
        h('button', { class: 'danger', 'data-action': 'delete', disabled: busy, 'aria-label': `Delete ${account.source_login}`, text: 'Delete',
          onclick: () => deleteAccount(task, account, message, after) }))),
    // The account being edited has its form right below its row.
    accountForm.editRow(account, headers.length)].filter(Boolean)));
  table.querySelector('thead th').replaceChildren(tickAll);
  return table;
}

// showPasses lists the task's passes, each with its own figures, and their
// sum: the first copy stays in view after the cut-over delta.
function showPasses(section, runs) {
  section.hidden = runs.length === 0;
  if (runs.length === 0) return;
  const sum = (key) => runs.reduce((total, r) => total + r[key], 0);
  const took = (r) => formatDuration((r.ended_at ? Date.parse(r.ended_at) : Date.now()) - Date.parse(r.started_at));
  const accounts = (r) => [`${r.accounts_completed} completed`, r.accounts_completed_with_errors ? `${r.accounts_completed_with_errors} with errors` : '',
    r.accounts_failed ? `${r.accounts_failed} failed` : '', r.accounts_canceled ? `${r.accounts_canceled} canceled` : ''].filter(Boolean).join(', ');
  const row = (cells, attrs = {}) => h('tr', attrs, cells.map((c) => h('td', { text: c })));
  const startedBy = { manual: 'by hand', schedule: 'schedule', final: 'final pass', verify: 'verification' };
  const table = dataTable('pass-list', ['Pass', 'By', 'Started', 'Took', 'State', 'Accounts', 'Copied', 'Skipped / failed'],
    runs.map((r) => row([String(r.pass), startedBy[r.started_by] ?? r.started_by, formatTime(r.started_at), took(r), r.state ? stateLabel(r.state) : 'running',
      `${r.accounts}: ${accounts(r)}`, `${r.messages_copied} messages, ${formatBytes(r.bytes_copied)}`,
      `${r.messages_skipped} / ${r.messages_failed}`], { 'data-pass': r.pass })));
  if (runs.length > 1) {
    table.querySelector('tbody').append(row(['All', '', '', '', '', '', `${sum('messages_copied')} messages, ${formatBytes(sum('bytes_copied'))}`,
      `${sum('messages_skipped')} / ${sum('messages_failed')}`], { class: 'total', 'data-pass': 'all' }));
  }
  section.replaceChildren(h('h2', { id: 'passes-title', text: 'Passes' }), h('div', { class: 'table-wrap' }, table));
}

// showBulkActions offers to run, test or delete the chosen accounts (see
// accountList's selection), or hides itself when none are chosen. While
// a migration runs, the chosen accounts can join it or leave it.
function showBulkActions(bar, task, chosen, message, after) {
  bar.hidden = !chosen;
  if (!chosen) {
    bar.replaceChildren();
    return;
  }
  const busy = runningStates.has(task.state);
  const act = async (path, done, failed, method = 'POST') => {
    try {
      const result = await request(method, `/tasks/${task.id}/${path}`, chosen.body);
      message.set('ok', done(result));
    } catch (err) {
      message.set('error', `${failed}: ${err.message}`);
    }
    await after();
  };
  const joining = migrating(task);
  bar.replaceChildren(...[
    h('span', { class: 'muted', text: `${chosen.words}:` }),
    h('button', { 'data-action': 'run-chosen', disabled: busy && !joining, text: `Run ${chosen.words}`,
      onclick: () => act('run', (r) => joining ? `${plural(r.accounts, 'account joins', 'accounts join')} the pass under way.`
        : `Running ${plural(r.accounts, 'account', 'accounts')}.`, 'Not run') }),
    joining ? h('button', { 'data-action': 'cancel-chosen', text: `Cancel ${chosen.words}`,
      onclick: () => act('cancel', (r) => `${plural(r.accounts, 'account', 'accounts')} canceled; the others go on.`, 'Nothing was canceled') }) : null,
    h('button', { 'data-action': 'test-chosen', disabled: task.tests.running, text: `Test logins of ${chosen.words}`,
      onclick: () => act('test', (r) => `Testing the logins of ${plural(r.accounts, 'account', 'accounts')}.`, 'Not tested') }),
    h('button', { class: 'danger', 'data-action': 'delete-chosen', disabled: busy, text: `Delete ${chosen.words}`,
      onclick: async () => {
        if (!await confirmAction(`Delete ${plural(chosen.count, 'account', 'accounts')} from this task?`)) return;
        await act('accounts/delete', (r) => `${plural(r.deleted, 'account', 'accounts')} deleted.`, 'Nothing was deleted');
      } }),
  ].filter(Boolean));
}

// accountProgress is a bar and the figures in words: of the messages
// done out of the source's count when the attempt has taken one, else of the
// folders done out of those planned (a folder's messages are counted as
// the attempt reaches it). folder is the one being copied, if known; a pause
// a server asked for is said instead.
// takeFigures puts the figures an event carries into the account as
// drawn, and returns them; null for an event without figures or older
// than the drawn ones (a replayed event).
export function takeFigures(account, event) {
  const figures = progressFigures(event);
  if (!figures || !account || Date.parse(event.time) < Date.parse(account.updated_at)) return null;
  account.progress = { ...account.progress, ...figures };
  account.updated_at = event.time;
  return figures;
}

// copyingFolder is the folder an event says its account is copying, or
// undefined (a finished folder is not being copied).
export function copyingFolder(event) {
  return event.kind === EventKind.accountProgress && event.folder ? event.folder : undefined;
}

export function accountProgress(account, folder) {
  const now = Date.now();
  const p = account.progress;
  const running = account.state === AccountState.running;
  // The source's count (taken as an attempt begins) is the total: copied,
  // skipped and failed messages make it up. Without one yet, the folders
  // say how far it is: a folder's messages are counted as it is reached.
  const counted = p.source_messages !== null && p.source_messages !== undefined;
  const handled = p.messages_copied + p.messages_skipped + p.messages_failed;
  const completed = account.state === AccountState.completed || account.state === AccountState.completedWithErrors;
  let max = Math.max(p.folders_total, 1);
  // An attempt that found no folder to copy is complete, one that failed
  // before listing them is not.
  let value = completed && p.folders_total === 0 ? max : Math.min(p.folders_done, max);
  const words = [`${p.folders_done}/${p.folders_total} folders`];
  if (counted && running) {
    max = Math.max(p.source_messages, 1);
    value = Math.min(handled, max);
    words.push(`${handled} of ${p.source_messages} messages done`);
    words.push(`${formatBytes(p.bytes_copied)} copied of ${formatBytes(p.source_bytes)}`);
  } else if (counted) {
    max = Math.max(p.source_messages, 1);
    value = completed ? max : Math.min(handled, max);
    words.push(`${p.messages_copied} of ${p.source_messages} messages copied`);
    if (p.bytes_copied > 0) words.push(formatBytes(p.bytes_copied));
  } else {
    words.push(running ? `${p.messages_copied} copied so far`
      : p.messages_total > 0 ? `${p.messages_copied} of ${p.messages_total} messages copied` : `${p.messages_copied} copied`);
    if (p.bytes_copied > 0) words.push(formatBytes(p.bytes_copied));
  }
  if (p.messages_skipped) words.push(`${p.messages_skipped} skipped`);
  if (p.messages_failed) words.push(`${p.messages_failed} failed`);
  if (running && counted && account.started_at) words.push(timeLeft(doneFraction(p), now - Date.parse(account.started_at)));
  // Paused in its attempt (a server's throttle), or queued until then (a
  // daily budget spent, which names itself in last_error).
  const paused = account.paused_until && Date.parse(account.paused_until) > now;
  if (paused && (running || account.state === AccountState.queued)) {
    const until = new Date(account.paused_until);
    const when = until - now > 12 * 3600e3 ? until.toLocaleString() : until.toLocaleTimeString();
    words.push(`paused until ${when}: ${account.last_error || 'a server asks to slow down'}`);
  } else if (folder && running) words.push(`copying ${folder}`);
  const text = words.join(' · ');
  return h('div', { class: 'progress' },
    h('progress', { max, value, 'aria-label': `progress of ${account.source_login}: ${text}` }),
    h('span', { text }));
}

// needsCredentials marks an account whose server refused its login: the
// schedule's and the final pass leave it out until it is edited, its
// endpoint changes, or it is run by hand.
export function needsCredentials(account) {
  if (!account.login_refused) return null;
  return h('span', { class: 'badge needs-credentials', 'data-login-refused': account.login_refused,
    title: `The ${account.login_refused} server refused its login: scheduled and final passes leave it out until it is edited, ` +
      'its endpoint changes, or it is retried by hand.',
    text: 'needs credentials' });
}

// testResult is one side's last login test; one from before the account's
// logins or passwords changed is shown as outdated, not as the answer.
// testBrief is a row's login tests in one line ("source failed,
// destination ok"); a failure's words are on demand (its title), since
// the row's error most often says the same.
function testBrief(account) {
  const side = (name, result) => {
    if (!result) return h('span', { class: 'muted', text: `${name} not tested` });
    if (result.outdated) return h('span', { class: 'muted', title: result.error || formatTime(result.tested_at), text: `${name} outdated` });
    return h('span', { class: result.ok ? 'ok-text' : 'error-text', title: result.ok ? formatTime(result.tested_at) : result.error,
      text: `${name} ${result.ok ? 'ok' : 'failed'}` });
  };
  return h('span', { class: 'test-brief' }, side('source', account.source_test), ', ', side('destination', account.destination_test));
}

// testError is what a failed login test said, when the account has no
// error of its own: the row's one place for it.
function testError(account) {
  return [['source', account.source_test], ['destination', account.destination_test]]
    .filter(([, t]) => t && !t.ok && !t.outdated).map(([side, t]) => `${side}: ${t.error}`).join(' ') || '';
}

// errorBrief is a row's error on one line, its first sentence; the rest
// (often what to do) opens on demand.
function errorBrief(text) {
  if (!text) return '';
  // The row names the account already: "source alice at imap.old.example:993:
  // authentication failed" is "source: authentication failed" in brief.
  const brief = text.replace(/^(source|destination) \S+ at \S+: /, '$1: ');
  const cut = brief.search(/\. (?=[A-Z])/);
  if (cut < 0 && brief === text && text.length <= 90) return h('span', { class: 'error-text one-line', title: text, text });
  return h('details', { class: 'error-more' },
    h('summary', { class: 'error-text one-line', title: text, text: cut < 0 ? brief : brief.slice(0, cut + 1) }),
    h('p', { class: 'error-text wrap', text }));
}

export function testResult(side, result) {
  if (!result) return h('div', { class: 'muted', text: `${side}: not tested` });
  const text = result.ok ? `${side}: ok` : `${side}: ${result.error}`;
  if (result.outdated) {
    return h('div', { class: 'muted outdated', title: formatTime(result.tested_at), text: `${text} (outdated: changed since; test again)` });
  }
  return h('div', { class: result.ok ? 'ok-text' : 'error-text', title: formatTime(result.tested_at), text });
}

// retryAccount runs one account again; follow(account) has the page say
// how the retry ended, instead of leaving "Retrying" on screen.
async function retryAccount(task, account, message, after, follow) {
  try {
    await request('POST', `/tasks/${task.id}/accounts/${account.id}/run`);
    message.set('ok', `Retrying ${account.source_login}…`);
    follow(account);
  } catch (err) {
    message.set('error', `${account.source_login} was not retried: ${err.message}`);
  }
  await after();
}

// cancelAccount stops one account of the pass; the others go on.
async function cancelAccount(task, account, message, after) {
  try {
    await request('POST', `/tasks/${task.id}/accounts/${account.id}/cancel`);
    message.set('ok', `${account.source_login}: canceled; the others go on.`);
  } catch (err) {
    message.set('error', `${account.source_login} was not canceled: ${err.message}`);
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

// addAccountForm adds one account, or with edit(account) changes one.
// The password inputs are write-only: they are emptied once the form is
// sent, whatever the answer, and an edit leaves a password empty to keep
// the stored one.
function addAccountForm(taskId, after) {
  const formMessage = notice();
  const input = (name, type = 'text') => h('input', { name, type, autocomplete: type === 'password' ? 'new-password' : 'off', spellcheck: 'false', maxlength: fieldLimits.AccountInput[name].maxLength });
  const sourceLogin = input('source_login');
  sourceLogin.required = true;
  const sourcePassword = input('source_password', 'password');
  const destinationLogin = input('destination_login');
  const destinationPassword = input('destination_password', 'password');
  // Linked: the destination uses the source password, also after it
  // changes; a destination password of its own unticks it.
  const sameAsSource = h('input', { type: 'checkbox', id: 'destination-same', name: 'destination_password_same_as_source' });
  const sameAsSourceLabel = h('label', { for: sameAsSource.id, text: 'Destination password: the same as the source' });
  const title = h('h2', { id: 'account-form-title' });
  // The password hints say what an empty field means, which depends on
  // whether the form adds or edits.
  const sourcePasswordField = field('Source password', sourcePassword, ' ');
  const sourcePasswordHint = sourcePasswordField.querySelector('.hint');
  const destinationPasswordField = field('Destination password', destinationPassword, ' ');
  const destinationPasswordHint = destinationPasswordField.querySelector('.hint');
  const submitButton = h('button', { class: 'primary' });
  const cancelButton = h('button', { type: 'button', 'data-action': 'cancel-edit', text: 'Cancel', onclick: () => { formMessage.clear(); doneEditing(); } });
  const form = h('form', { id: 'account-form', class: 'card', 'aria-labelledby': title.id },
    title, formMessage.el,
    field('Source login', sourceLogin),
    sourcePasswordField,
    field('Destination login', destinationLogin, 'Empty: the same as the source.'),
    h('div', { class: 'field check' }, sameAsSource, sameAsSourceLabel),
    destinationPasswordField,
    h('div', { class: 'actions' }, submitButton, cancelButton));
  // logins are how each side's accounts log in (their endpoint's auth):
  // with a password, a refresh token, or nothing of the account's own.
  const logins = { source: null, destination: null };
  const noun = (side) => (secretOf(logins[side]) === 'refresh_token' ? 'refresh token' : 'password');
  // The hint says which secret the destination uses if the form is sent.
  const showLink = () => {
    destinationPasswordHint.textContent = secretOf(logins.destination) === null ? noSecretHint(logins.destination) : sameAsSource.checked
      ? `The source ${noun('source')}, also after it changes. Type one here to give the destination its own.`
      : editing?.destination_password_same_as_source === false ? `Empty: keep its own stored ${noun('destination')}.` : `Its own ${noun('destination')}, typed here.`;
  };
  sameAsSource.addEventListener('change', () => { if (sameAsSource.checked) destinationPassword.value = ''; showLink(); });
  destinationPassword.addEventListener('input', () => { sameAsSource.checked = destinationPassword.value === '' && sameAsSource.checked; showLink(); });

  // The form lives in home to add an account, and right below the row of
  // the account it edits: on a list of thousands, editing keeps the
  // person's place, and saving or canceling returns them to the row.
  const home = h('div', { class: 'account-form-home' }, form);
  const editRow = (columns) => h('tr', { class: 'edit-row' }, h('td', { colspan: columns }, form));
  // doneEditing takes the form home and the focus back to the row's Edit.
  function doneEditing() {
    const id = editing?.id;
    setMode(null);
    home.append(form);
    const back = id === undefined ? null : document.querySelector(`#account-list tr[data-id="${id}"] button[data-action="edit"]`);
    (back ?? sourceLogin).focus();
  }

  let editing = null; // the account being edited, or null to add one
  function setMode(account) {
    editing = account;
    title.textContent = account ? `Edit account ${account.source_login}` : 'Add an account';
    submitButton.textContent = account ? 'Save account' : 'Add account';
    cancelButton.hidden = !account;
    sourcePasswordHint.textContent = secretOf(logins.source) === null ? noSecretHint(logins.source) : account ? `Empty: keep the stored ${noun('source')}.` : '';
    sourcePasswordHint.hidden = sourcePasswordHint.textContent === '';
    sourceLogin.value = account?.source_login ?? '';
    destinationLogin.value = account?.destination_login ?? '';
    sourcePassword.value = '';
    destinationPassword.value = '';
    sameAsSource.checked = account ? account.destination_password_same_as_source : secretOf(logins.destination) !== 'refresh_token';
    showLink();
  }
  setMode(null);

  form.addEventListener('submit', async (submit) => {
    submit.preventDefault();
    formMessage.clear();
    // A destination password typed (or filled in) wins over the box.
    const body = {
      source_login: sourceLogin.value.trim(), destination_login: destinationLogin.value.trim(),
      destination_password_same_as_source: destinationPassword.value === '' && sameAsSource.checked,
    };
    // A refresh token takes the password's place under its own name.
    body[secretOf(logins.source) === 'refresh_token' ? 'source_refresh_token' : 'source_password'] = sourcePassword.value;
    body[secretOf(logins.destination) === 'refresh_token' ? 'destination_refresh_token' : 'destination_password'] = destinationPassword.value;
    sourcePassword.value = '';
    destinationPassword.value = '';
    const account = editing;
    let saved = false;
    try {
      if (account) {
        await request('PUT', `/tasks/${taskId}/accounts/${account.id}`, body);
        formMessage.set('ok', `Account ${body.source_login} saved.`);
      } else {
        await request('POST', `/tasks/${taskId}/accounts`, body);
        formMessage.set('ok', `Account ${body.source_login} added.`);
      }
      saved = true;
    } catch (err) {
      formMessage.set('error', `Not ${account ? 'saved' : 'added'}: ${err.message}`);
    }
    if (saved && account) doneEditing();
    else if (saved) setMode(null);
    await after();
  });

  return {
    form,
    home,
    // editRow is the row below account's that holds the form while it is
    // edited; null for the others.
    editRow(account, columns) {
      return editing?.id === account.id ? editRow(columns) : null;
    },
    useLogins(source, destination) {
      Object.assign(logins, { source, destination });
      for (const [side, input, fieldEl] of [['source', sourcePassword, sourcePasswordField], ['destination', destinationPassword, destinationPasswordField]]) {
        const label = `${side === 'source' ? 'Source' : 'Destination'} ${noun(side)}`;
        fieldEl.querySelector('label').textContent = label;
        input.maxLength = fieldLimits.AccountInput[`${side}_${noun(side) === 'password' ? 'password' : 'refresh_token'}`].maxLength;
      }
      sameAsSourceLabel.textContent = `Destination ${noun('destination')}: the same as the source`;
      // Only a password is shared: a refresh token is the user's own.
      sameAsSource.closest('.field').hidden = secretOf(logins.destination) !== 'password';
      setMode(editing);
    },
    edit(account) {
      formMessage.clear();
      setMode(account);
      const row = document.querySelector(`#account-list tr[data-id="${account.id}"]`);
      if (row) row.after(editRow(row.children.length));
      form.scrollIntoView({ block: 'nearest' });
      sourcePassword.focus();
    },
  };
}

// secretOf says what an account brings to log in with auth, its
// endpoint's: 'password', 'refresh_token', or null for nothing (a master
// login, the application's own token, a service account).
function secretOf(auth) {
  if (auth?.method === AuthMethod.master) return null;
  if (auth?.method === AuthMethod.oauth2) return auth.oauth2?.grant === OAuth2Grant.refreshToken ? 'refresh_token' : null;
  return 'password';
}

function noSecretHint(auth) {
  if (auth.method === AuthMethod.master) return `Not needed: the master login ${auth.master_login} acts for the account.`;
  return auth.oauth2?.grant === OAuth2Grant.serviceAccount ? "Not needed: the endpoint's service account acts for the account."
    : "Not needed: the endpoint's application acts for the account.";
}

// importForm uploads a CSV file; the service takes all of it or none, and
// names every bad line, which the form lists.
function importForm(taskId, after) {
  const formMessage = notice();
  const file = h('input', { name: 'file', type: 'file', accept: '.csv,text/csv,text/plain', required: true });
  const form = h('form', { id: 'import-form', class: 'card' },
    h('h2', { text: 'Import accounts from CSV' }), formMessage.el,
    field('CSV file', file, 'Columns: source_login, source_password (source_refresh_token for OAuth 2.0; neither with a master login or an application\'s token), and optionally destination_login, destination_password (or destination_refresh_token). A header row is optional; "," or ";" separate.'),
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
