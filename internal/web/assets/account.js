// An account's page (#/tasks/ID/accounts/ID): its state and progress,
// what each pass did for it, its folders with where each went and the
// messages a server refused, its plan (dry run), and its events, live.

import { request } from './api.js';
import { AccountState, AuthMethod, AuthorizationFlow, EventKind, OAuth2Grant } from './enums.js';
import { h, notice, field, formatTime, formatBytes, formatDuration, dataTable, keepFocus } from './dom.js';
import { EventStream, describeEvent, isFailure, coalesce, throttle, figuresOnly } from './events.js';
import { stateBadge, runningStates } from './tasks.js';
import { accountProgress, testResult, inRun, migrating, takeFigures, copyingFolder, needsCredentials } from './task.js';
import { accountPlanSection } from './plan.js';

const eventPage = 1000;
const maxEvents = 500;

export async function accountPage(main, taskId, accountId, keepAlive) {
  const message = notice();
  const summary = h('section', { id: 'account-summary' });
  const passes = h('section', { id: 'account-passes', 'aria-labelledby': 'account-passes-title' });
  const folders = h('section', { id: 'account-folders', 'aria-labelledby': 'account-folders-title' });
  const scripts = h('section', { id: 'account-scripts', 'aria-labelledby': 'account-scripts-title' });
  const plan = accountPlanSection(taskId, accountId);
  const events = h('ol', { id: 'account-events', class: 'log', role: 'log', 'aria-label': 'Events of this account', tabindex: 0 });
  main.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/tasks', text: 'Tasks' }), ' / ',
      h('a', { href: `#/tasks/${taskId}`, text: `task ${taskId}` }), ` / account ${accountId}`),
    summary, message.el, passes, folders, scripts, plan.section,
    h('section', { 'aria-labelledby': 'account-events-title' }, h('h2', { id: 'account-events-title', text: 'Events' }), events));

  let stopped = false;
  let timer = null;
  let auths = null; // how each side logs in: its endpoint's auth, read once
  // Drawn once, and put back in each redraw, so that what is typed stays.
  const alsoAccept = h('input', { name: 'also_accept', id: 'also-accept', autocomplete: 'off', spellcheck: 'false' });
  let shown = null; // the account as drawn
  const refresh = coalesce(async () => {
    clearTimeout(timer);
    const [task, account, runs, boxes] = await Promise.all([
      request('GET', `/tasks/${taskId}`), request('GET', `/tasks/${taskId}/accounts/${accountId}`),
      request('GET', `/tasks/${taskId}/accounts/${accountId}/passes`), request('GET', `/tasks/${taskId}/accounts/${accountId}/folders`)]);
    auths ??= await Promise.all([task.source_endpoint_id, task.destination_endpoint_id]
      .map((id) => request('GET', `/endpoints/${id}`).then((e) => e.auth, () => null)));
    if (stopped) return;
    shown = account;
    document.title = `${account.source_login} — mailmigrate`;
    keepFocus(summary, () => summary.replaceChildren(...accountSummary(task, account, auths, alsoAccept, message, () => refresh())));
    showPasses(passes, runs);
    showFolders(folders, boxes);
    showScripts(scripts, account.scripts);
    // Events move the page; the poll is for one missed while the account
    // is busy.
    if (inRun(account) || account.state === AccountState.testing) timer = setTimeout(() => refresh().catch(() => {}), 5000);
  });
  await refresh();
  plan.draw().catch((err) => message.set('error', `The plan could not be read: ${err.message}`));

  // The stored events, then the live ones of this account.
  let after = 0;
  const add = (e) => {
    events.append(h('li', { class: isFailure(e) ? 'failure' : '', 'data-kind': e.kind, 'data-seq': e.seq },
      h('time', { datetime: e.time, text: new Date(e.time).toLocaleString() }), ' ', describeEvent(e)));
    while (events.childElementCount > maxEvents) events.firstElementChild.remove();
  };
  for (;;) {
    const page = await request('GET', `/tasks/${taskId}/accounts/${accountId}/events?after=${after}&limit=${eventPage}`);
    page.forEach(add);
    if (page.length > 0) after = page[page.length - 1].seq;
    if (page.length < eventPage) break;
  }
  events.scrollTop = events.scrollHeight;
  const refreshSoon = throttle(() => refresh().catch(() => {}), 1000);
  const stream = new EventStream(taskId, {
    after,
    onEvent: (e) => {
      if (!e.account_id) { // the task's own (a pass started or ended): its state enables the buttons
        refreshSoon.call();
        return;
      }
      if (e.account_id !== accountId) return;
      add(e);
      if (e.kind === EventKind.accountAuthorized) message.set('ok', describeEvent(e));
      events.scrollTop = events.scrollHeight;
      if (takeFigures(shown, e)) summary.querySelector('#account-progress')?.replaceChildren(accountProgress(shown, copyingFolder(e)));
      if (!figuresOnly.has(e.kind)) refreshSoon.call();
    },
    onReconnect: () => refreshSoon.call(),
  });
  keepAlive(() => { stopped = true; clearTimeout(timer); plan.stop(); refreshSoon.stop(); stream.stop(); document.title = 'mailmigrate'; });
}

function accountSummary(task, account, auths, alsoAccept, message, after) {
  const act = async (verb, done) => {
    try {
      await request('POST', `/tasks/${task.id}/accounts/${account.id}/${verb}`);
      message.set('ok', done);
    } catch (err) {
      message.set('error', `${account.source_login}: ${err.message}`);
    }
    await after();
  };
  const busy = runningStates.has(task.state) && !migrating(task);
  return [
    h('h1', {}, account.source_login, ' ', stateBadge(account.state), needsCredentials(account)),
    h('p', { class: 'wrap', text: `${account.source_login} → ${account.destination_login}, task ${task.name || task.id}` }),
    h('dl', { class: 'facts' },
      h('div', {}, h('dt', { text: 'Progress' }), h('dd', { id: 'account-progress' }, accountProgress(account))),
      h('div', {}, h('dt', { text: 'Last login test' }), h('dd', {}, testResult('source', account.source_test), testResult('destination', account.destination_test))),
      account.started_at ? h('div', {}, h('dt', { text: 'Started' }), h('dd', { text: formatTime(account.started_at) })) : null,
      account.finished_at ? h('div', {}, h('dt', { text: 'Finished' }), h('dd', { text: formatTime(account.finished_at) })) : null,
      account.last_error ? h('div', {}, h('dt', { text: 'Last error' }), h('dd', { class: 'wrap error-text', id: 'account-error', text: account.last_error })) : null),
    h('div', { class: 'actions toolbar' },
      inRun(account) && migrating(task)
        ? h('button', { 'data-action': 'cancel-account', text: 'Cancel', onclick: () => act('cancel', `${account.source_login}: canceled.`) })
        : h('button', { class: 'primary', 'data-action': 'retry', disabled: inRun(account) || busy, text: 'Run again',
          onclick: () => act('run', `${account.source_login}: queued.`) }),
      ['source', 'destination'].map((side, i) => (signInFlow(auths?.[i])
        ? h('button', { 'data-action': `authorize-${side}`, text: `Authorize ${side}`,
          onclick: () => authorize(task, account, side, message, alsoAccept.value) })
        : null))),
    auths?.some(signInFlow) ? field('Also accept a sign-in as', alsoAccept,
      'Other names of this mailbox at the provider, comma-separated, e.g. a tenant\'s own domain; a sign-in as anyone else keeps no token.') : null,
  ].filter(Boolean); // replaceChildren would show a null as "null"
}

// signInFlow says whether a side's accounts get refresh tokens that a
// user's sign-in can fetch: with a code (device) or in the browser.
function signInFlow(auth) {
  return auth?.method === AuthMethod.oauth2 && auth.oauth2.grant === OAuth2Grant.refreshToken &&
    (auth.oauth2.device_url !== '' || auth.oauth2.authorization_url !== '');
}

// callbackPath is where the provider sends the browser back to the
// service after a sign-in (httpapi.CallbackPath).
const callbackPath = '/oauth/callback';

// authorize starts an authorization and says where to sign in; the event
// log then says when the token is stored.
async function authorize(task, account, side, message, alsoAccept) {
  const login = side === 'source' ? account.source_login : account.destination_login;
  const also_accept = alsoAccept.split(',').map((name) => name.trim()).filter(Boolean);
  try {
    const started = await request('POST', `/tasks/${task.id}/accounts/${account.id}/authorize`,
      { side, redirect_uri: `${location.origin}${callbackPath}`, also_accept });
    const until = new Date(started.expires_at).toLocaleTimeString();
    if (started.flow === AuthorizationFlow.device) {
      const page = started.verification_uri_complete || started.verification_uri;
      message.set('ok', `Open ${page}, enter the code ${started.user_code} and sign in as ${login} before ${until}. ` +
        'This page says when the token is stored.');
      return;
    }
    message.show('ok',
      h('p', {}, h('a', { id: 'sign-in', href: started.authorization_url, target: '_blank', rel: 'noopener noreferrer', text: `Sign in as ${login}` }),
        ` before ${until}, in a new window. This page says when the token is stored.`),
      pasteAddress(login, message));
  } catch (err) {
    message.set('error', `${login}: ${err.message}`);
  }
}

// pasteAddress finishes a browser authorization whose sign-in ended on an
// address that does not load (a redirect URI registered for another
// machine): the address, pasted, carries the code.
function pasteAddress(login, message) {
  const address = h('input', { name: 'address', type: 'url', required: true, autocomplete: 'off', spellcheck: 'false' });
  return h('form', {
    class: 'paste-address',
    onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        const done = await request('POST', '/authorizations/complete', { address: address.value.trim() });
        message.set('ok', `${done.login}: the ${done.side}'s refresh token is stored; the account can log in`);
      } catch (err) {
        message.set('error', `${login}: ${err.message}`);
      }
    },
  }, h('label', {}, 'If the sign-in ends on a page that does not load, paste its address: ', address), ' ',
  h('button', { type: 'submit', text: 'Finish' }));
}

// showPasses lists what each pass did for the account.
function showPasses(section, runs) {
  const took = (r) => (r.started_at ? formatDuration(Date.parse(r.finished_at) - Date.parse(r.started_at)) : '');
  const content = runs.length === 0 ? h('p', { class: 'muted', text: 'No pass has ended for this account yet.' })
    : h('div', { class: 'table-wrap' }, dataTable('account-pass-list', ['Pass', 'State', 'Finished', 'Took', 'Copied', 'Skipped / failed', 'Source', 'Error'],
      runs.map((r) => h('tr', { 'data-pass': r.pass },
        h('td', { text: String(r.pass) }), h('td', {}, stateBadge(r.state)), h('td', { text: formatTime(r.finished_at) }),
        h('td', { text: took(r) }), h('td', { text: `${r.messages_copied} messages, ${formatBytes(r.bytes_copied)}` }),
        h('td', { text: `${r.messages_skipped} / ${r.messages_failed}` }),
        h('td', { text: r.source_messages === null ? '' : `${r.source_messages} messages, ${formatBytes(r.source_bytes)}` }),
        h('td', { class: 'wrap error-text', text: r.last_error })))));
  section.replaceChildren(h('h2', { id: 'account-passes-title', text: 'Passes' }), content);
}

// showFolders lists the source folders, where each went, the messages a
// server refused or could not deliver, with its words, and the copies the
// destination holds unlike what was sent.
function showFolders(section, boxes) {
  const content = boxes.length === 0 ? h('p', { class: 'muted', text: 'No folder copied yet.' })
    : h('div', { class: 'table-wrap' }, dataTable('account-folder-list', ['Source folder', 'Destination folder', 'Source', 'Destination', 'Verified', 'Refused or altered'],
      boxes.map((f) => h('tr', { 'data-folder': f.source, class: f.refused.length > 0 || f.altered > 0 ? 'failure' : '' },
        h('td', { class: 'wrap', text: f.source }), h('td', { class: 'wrap', text: f.destination }),
        h('td', { text: `${f.source_messages} (${formatBytes(f.source_bytes)})` }), h('td', { text: String(f.destination_messages) }),
        h('td', { text: f.complete && f.altered === 0 ? `${f.verified} ✓` : f.complete ? String(f.verified) : `${f.verified} (not finished)` }),
        h('td', { class: 'wrap' }, f.refused.length === 0 ? '' : h('ul', { class: 'refusals' },
          f.refused.map((r) => h('li', { class: 'error-text', text: `${refusedMessage(r)}: ${r.side === 'source' ? 'unreadable on the source' : 'refused by the destination'}: ${r.reason}` }))),
        f.altered === 0 ? null : h('div', { class: 'altered' },
          h('p', { class: 'error-text', text: `${f.altered} ${f.altered === 1 ? 'copy' : 'copies'} altered by the destination: there, but unlike the message sent` }),
          h('ul', { class: 'refusals' }, f.altered_examples.map((a) => h('li', { text: `${a.subject ? `"${a.subject}"` : 'A message without a subject'}, UID ${a.uid} (UID ${a.destination_uid} there): ${a.what}` })))),
        f.dropped_keywords.length > 0 ? h('div', { class: 'muted', text: `keywords left out: ${f.dropped_keywords.join(' ')}` }) : null)))));
  section.replaceChildren(h('h2', { id: 'account-folders-title', text: 'Folders' }), content);
}

// showScripts draws what became of the account's Sieve scripts (filters,
// vacation replies) at the last attempt that moved them.
function showScripts(section, scripts) {
  const title = h('h2', { id: 'account-scripts-title', text: 'Sieve scripts' });
  if (!scripts) {
    section.replaceChildren(title, h('p', { class: 'muted',
      text: 'None moved: the endpoints name no ManageSieve service, or no pass has moved them yet.' }));
    return;
  }
  const rows = [
    ...scripts.copied.map((name) => [name, 'copied', '']),
    ...scripts.unchanged.map((name) => [name, 'unchanged', '']),
    ...scripts.refused.map((r) => [r.script, 'refused by the destination', r.reason]),
    ...scripts.unread.map((r) => [r.script, 'copied as it is', r.reason]),
    ...scripts.kept.map((r) => [r.script, "kept: the destination's own", r.reason]),
  ].sort((a, b) => a[0].localeCompare(b[0]));
  const renamed = (name) => scripts.renamed.filter((r) => r.script === name).map((r) => `files into "${r.to}" instead of "${r.from}"`).join('; ');
  const table = rows.length === 0 ? h('p', { class: 'muted', text: 'The source has no script.' })
    : h('div', { class: 'table-wrap' }, dataTable('account-script-list', ['Script', 'What happened', 'Details'],
      rows.map(([name, what, reason]) => h('tr', { 'data-script': name, class: what.startsWith('refused') ? 'failure' : '' },
        h('td', { class: 'wrap' }, name, name === scripts.active ? h('span', { class: 'badge', text: 'active' }) : null),
        h('td', { text: what }),
        h('td', { class: 'wrap' }, reason ? h('span', { class: what.startsWith('refused') ? 'error-text' : '', text: reason }) : null,
          renamed(name) ? h('div', { class: 'muted', text: renamed(name) }) : null)))));
  const error = scripts.error ? [h('p', { class: 'error-text', text: `Not moved: ${scripts.error}` })] : [];
  section.replaceChildren(title, ...error, table);
}

// refusedMessage names a message not copied as a person knows it: its
// subject, date and size, with its UID.
function refusedMessage(r) {
  const facts = [r.date ? formatTime(r.date) : '', r.size ? formatBytes(r.size) : ''].filter(Boolean).join(', ');
  return `${r.subject ? `"${r.subject}"` : 'A message without a subject'}${facts ? ` (${facts})` : ''}, UID ${r.uid}`;
}
