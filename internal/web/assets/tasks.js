// The Tasks page: every task with its state and progress, the buttons to
// run, test, cancel and delete it, and the form that creates one.

import { request } from './api.js';
import { h, field, notice, confirmAction, plural, dataTable, keepFocus, select } from './dom.js';
import { endpointName } from './endpoints.js';
import { EventStream, latestSeqSeen, throttle, coalesce, figuresOnly } from './events.js';
import { takeFlash } from './flash.js';
import { runningStates, fieldLimits, GmailLabels, VerifyCopies } from './enums.js';

// runningStates are the states in which a task is busy (docs/design.md#task-states).
export { runningStates };

// stateLabel is a task or account state in words.
export function stateLabel(state) {
  return state.replaceAll('_', ' ');
}

export function stateBadge(state) {
  return h('span', { class: `badge state-${state}`, text: stateLabel(state) });
}

// finishedAccounts counts the accounts a pass is done with.
export function finishedAccounts(counts) {
  return counts.completed + counts.completed_with_errors + counts.failed + counts.canceled;
}

// taskActions are the Run, Test, Cancel and Delete buttons of a task;
// after(verb, ok) runs once the service has answered, ok when it agreed.
export function taskActions(task, message, after) {
  const busy = runningStates.has(task.state);
  const testing = task.tests.running;
  const empty = task.accounts.total === 0;
  // A login test runs beside whatever else the task does: it blocks
  // nothing but a second test.
  const disabled = { run: busy || empty, test: testing || empty, cancel: !busy && !testing };
  const act = (verb, label) => h('button', {
    class: verb === 'run' ? 'primary' : '',
    'data-action': verb,
    'aria-label': `${label} ${task.name || `task ${task.id}`}`,
    disabled: disabled[verb],
    title: verb !== 'cancel' && empty ? 'Add accounts first' : verb === 'test' && testing ? 'A login test is under way' : undefined,
    text: label,
    onclick: () => taskAction(task, verb, message, after),
  });
  return [act('run', 'Run'), act('test', 'Test logins'), act('cancel', testing && !busy ? 'Cancel login test' : 'Cancel pass'),
    h('button', { class: 'danger', 'data-action': 'delete', 'aria-label': `Delete ${task.name || `task ${task.id}`}`,
      disabled: busy, text: 'Delete', onclick: () => deleteTask(task, message, after) })];
}

const actionDone = { run: 'Pass started', test: 'Login test started', cancel: 'Canceling the pass' };

// confirmFrom is the number of accounts from which Run, Test logins and
// Cancel on the whole task ask first: a slip on a task of thousands of
// mailboxes starts (or stops) hours of work and thousands of logins; on a
// handful it costs nothing.
const confirmFrom = 20;

// confirmQuestion is what taskAction asks before acting on every account.
function confirmQuestion(task, verb) {
  const name = task.name || `task ${task.id}`;
  const n = plural(task.accounts.total, 'account', 'accounts');
  switch (verb) {
    case 'run': return [`Run ${name}: its ${n}? Each copies only what is new.`, 'Run'];
    case 'test': return [`Test the logins of the ${n} of ${name}? Each logs in to both servers once.`, 'Test logins'];
    default: return [`Cancel what ${name} is doing? Running accounts stop between messages; what they copied stays.`, 'Cancel it'];
  }
}

async function taskAction(task, verb, message, after) {
  if (task.accounts.total >= confirmFrom) {
    const [question, label] = confirmQuestion(task, verb);
    if (!await confirmAction(question, label)) return;
  }
  let ok = false;
  try {
    await request('POST', `/tasks/${task.id}/${verb}`);
    const done = verb === 'cancel' && !runningStates.has(task.state) ? 'Canceling the login test' : actionDone[verb];
    message.set('ok', `${done}: ${task.name || `task ${task.id}`}.`);
    ok = true;
  } catch (err) {
    message.set('error', `${task.name || `Task ${task.id}`}: ${err.message}`);
  }
  await after(verb, ok);
}

async function deleteTask(task, message, after) {
  const name = task.name || `task ${task.id}`;
  if (!await confirmAction(`Delete task ${name} and its ${plural(task.accounts.total, 'account', 'accounts')}?`)) return;
  let ok = false;
  try {
    await request('DELETE', `/tasks/${task.id}`);
    message.set('ok', `Task ${name} deleted.`);
    ok = true;
  } catch (err) {
    message.set('error', `Task ${name} was not deleted: ${err.message}`);
  }
  await after('delete', ok);
}

// pollWhileBusy is how often a page asks again while a task is busy: the
// events say what changes, this only catches what a dropped connection
// or a missed event would hide.
export const pollWhileBusy = 5000;

export async function tasksPage(main, keepAlive) {
  const message = notice();
  const list = h('div', { class: 'table-wrap' });
  const formSection = h('section');
  const streamState = h('span', { id: 'stream-state', class: 'muted', text: 'connecting…' });
  main.append(h('h1', {}, 'Tasks ', streamState), message.el, list, formSection);
  takeFlash(message);
  const endpoints = await request('GET', '/endpoints');
  const byId = new Map(endpoints.map((e) => [e.id, e]));

  // The list follows the events of every task, a refresh at most once a
  // second; while a task is busy it also asks every few seconds, in case
  // an event was missed.
  let timer = null;
  let stopped = false;
  const reload = coalesce(async () => {
    clearTimeout(timer);
    const tasks = await request('GET', '/tasks');
    if (stopped) return;
    keepFocus(list, () => list.replaceChildren(taskTable(tasks, byId, message, reload)));
    if (tasks.some((t) => runningStates.has(t.state) || t.tests.running)) timer = setTimeout(() => reload().catch(() => {}), pollWhileBusy);
  });
  const live = throttle(() => reload().catch(() => {}), 1000);
  keepAlive(() => { stopped = true; clearTimeout(timer); live.stop(); });
  formSection.append(newTaskForm(endpoints));
  // Events after the last one this tab has seen, or in a fresh tab only
  // those from now on: the list loaded next shows everything before.
  const stream = new EventStream(null, {
    after: latestSeqSeen(),
    liveOnly: true,
    onEvent: (event) => { if (!figuresOnly.has(event.kind)) live.call(); },
    onStatus: (text) => { streamState.textContent = text; },
    onReconnect: () => live.call(),
  });
  keepAlive(() => stream.stop());
  await reload();
}

function taskTable(tasks, endpointsById, message, reload) {
  if (tasks.length === 0) return h('p', { text: 'No task yet: create one below.' });
  const name = (id) => (endpointsById.has(id) ? endpointName(endpointsById.get(id)) : `endpoint ${id}`);
  return dataTable('task-list', ['Task', 'From → to', 'State', 'Accounts done', ''],
    tasks.map((task) => h('tr', { 'data-id': task.id },
      h('td', {}, h('a', { href: `#/tasks/${task.id}`, text: task.name || `Task ${task.id}` })),
      h('td', { class: 'wrap', text: `${name(task.source_endpoint_id)} → ${name(task.destination_endpoint_id)}` }),
      h('td', {}, stateBadge(task.state)),
      h('td', {}, accountsProgress(task.accounts)),
      h('td', { class: 'actions' }, taskActions(task, message, reload)))));
}

// accountsProgress is a bar of the accounts whose attempt ended, out of all of
// them; canceled ones did not end their attempt, so a canceled task's bar is
// not full.
export function accountsProgress(counts) {
  const done = counts.completed + counts.completed_with_errors + counts.failed;
  const words = [`${done} of ${counts.total}`];
  if (counts.failed) words.push(`${counts.failed} failed`);
  if (counts.canceled) words.push(`${counts.canceled} canceled`);
  const label = words.join(' · ');
  return h('div', { class: 'progress' },
    h('progress', { max: Math.max(counts.total, 1), value: done, 'aria-label': `accounts done: ${label}` }),
    h('span', { text: label }));
}

// newTaskForm creates a task and opens its page.
function newTaskForm(endpoints) {
  if (endpoints.length === 0) {
    return h('p', { class: 'card' }, 'To create a task, first ', h('a', { href: '#/endpoints', text: 'add the old and the new server' }), '.');
  }
  return taskForm(endpoints, null, (created) => { location.hash = `#/tasks/${created.id}`; });
}

// taskForm creates a task (task null) or changes one's name, servers and
// options (its settings), then calls saved with the answer.
export function taskForm(endpoints, task, saved) {
  const formMessage = notice();
  const endpointSelect = (name) => h('select', { name, required: true },
    endpoints.map((e) => h('option', { value: String(e.id), text: endpointName(e) })));
  const name = h('input', { name: 'name', maxlength: fieldLimits.TaskInput.name.maxLength, placeholder: 'acme cut-over' });
  const source = endpointSelect('source_endpoint_id');
  const destination = endpointSelect('destination_endpoint_id');
  if (endpoints.length > 1) destination.value = String(endpoints[1].id);
  const o = task?.options ?? {};
  const include = h('textarea', { name: 'include_folders', rows: 2, spellcheck: 'false' });
  const exclude = h('textarea', { name: 'exclude_folders', rows: 2, spellcheck: 'false', placeholder: '^Trash$' });
  const folderMap = h('textarea', { name: 'folder_map', rows: 2, spellcheck: 'false', placeholder: 'Sent Items = Sent' });
  const maxBytes = h('input', { name: 'max_message_bytes', type: 'number', min: 0, inputmode: 'numeric' });
  const since = h('input', { name: 'since', type: 'date' });
  const parallel = h('input', { name: 'parallel_accounts', type: 'number', min: 0, max: fieldLimits.TaskOptions.parallel_accounts.maximum, inputmode: 'numeric', placeholder: '4' });
  const mirror = h('input', { name: 'mirror_deletions', type: 'checkbox' });
  const refuseBlocked = h('input', { name: 'refuse_blocked', type: 'checkbox' });
  const gmail = select('gmail_labels', gmailPolicies, gmailPolicies[0][0]);
  const verify = select('verify_copies', verifyDepths, verifyDepths[0][0]);
  if (task) {
    name.value = task.name;
    source.value = String(task.source_endpoint_id);
    destination.value = String(task.destination_endpoint_id);
    include.value = (o.include_folders ?? []).join('\n');
    exclude.value = (o.exclude_folders ?? []).join('\n');
    folderMap.value = Object.entries(o.folder_map ?? {}).map(([from, to]) => `${from} = ${to}`).join('\n');
    maxBytes.value = o.max_message_bytes ? String(o.max_message_bytes) : '';
    since.value = o.since ?? '';
    parallel.value = o.parallel_accounts ? String(o.parallel_accounts) : '';
    mirror.checked = Boolean(o.mirror_deletions);
    refuseBlocked.checked = Boolean(o.refuse_blocked);
    gmail.value = o.gmail_labels || gmailPolicies[0][0];
    verify.value = o.verify_copies || verifyDepths[0][0];
  }
  const form = h('form', { id: task ? 'task-settings-form' : 'task-form', class: 'card' },
    task ? null : h('h2', { text: 'New task' }),
    formMessage.el,
    field('Name', name),
    field('From (source)', source),
    field('To (destination)', destination),
    h('details', { open: Boolean(task) },
      h('summary', { text: 'Options' }),
      field('Only folders matching', include, 'Regular expressions, one per line. Empty: every folder.'),
      field('Skip folders matching', exclude, 'Regular expressions, one per line.'),
      field('Rename folders', folderMap, 'One per line: source name = destination name.'),
      field('Skip messages larger than (bytes)', maxBytes, 'Empty: no limit.'),
      field('Only messages since', since, 'Empty: all messages.'),
      field('Accounts at once', parallel, 'Empty: 4.'),
      field('Mirror deletions', mirror, 'Expunge from the destination what this task copied and the source has since expunged. Nothing else is touched.'),
      field('Leave out blocked accounts', refuseBlocked, 'Passes, by hand or by schedule, leave out the accounts whose plan found a blocking problem (quota, folder collision).'),
      field('Gmail labels', gmail, 'Leaving Gmail: All Mail, Starred and Important are never copied as folders, and archived mail goes to Archive. Other sources ignore this.'),
      field('Check the copies', verify, 'Reading each copy back finds a destination that rewrites mail; counting only is for one known to re-encode every message.')),
    h('div', { class: 'actions' }, h('button', { class: 'primary', text: task ? 'Save settings' : 'Create task' })));
  form.addEventListener('submit', async (submit) => {
    submit.preventDefault();
    formMessage.clear();
    try {
      const options = {
        include_folders: lines(include.value), exclude_folders: lines(exclude.value),
        folder_map: folderRenames(folderMap.value), max_message_bytes: Number(maxBytes.value) || 0,
        since: since.value, parallel_accounts: Number(parallel.value) || 0, mirror_deletions: mirror.checked,
        gmail_labels: gmail.value, refuse_blocked: refuseBlocked.checked, verify_copies: verify.value,
      };
      const body = {
        name: name.value.trim(), source_endpoint_id: Number(source.value),
        destination_endpoint_id: Number(destination.value), options,
      };
      const answer = await request(task ? 'PUT' : 'POST', task ? `/tasks/${task.id}` : '/tasks', body);
      if (task) formMessage.set('ok', 'Settings saved: the next pass uses them.');
      await saved(answer);
    } catch (err) {
      formMessage.set('error', `Not ${task ? 'saved' : 'created'}: ${err.message}`);
    }
  });
  return form;
}

// gmailPolicies are the choices of a Gmail source's labels, the default first.
const gmailPolicies = [
  [GmailLabels.firstLabel, 'Each message once: Drafts, INBOX, its first label, Sent or Archive'],
  [GmailLabels.keywords, 'Each message once: Drafts, INBOX, Sent or Archive, labels kept as keywords'],
  [GmailLabels.folders, 'A copy per label folder'],
];

// verifyDepths are the ways the copies a pass makes are checked, the
// default first.
const verifyDepths = [
  [VerifyCopies.headers, 'Read each copy back: its size and header must be what was sent'],
  [VerifyCopies.counts, 'Count the copies only (a destination that re-encodes mail)'],
  [VerifyCopies.full, 'Read each copy back whole: every byte must be what was sent (reads each copy once more)'],
];

function lines(text) {
  return text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

// folderRenames reads "source = destination" lines; a line without "="
// is refused with its number rather than guessed.
function folderRenames(text) {
  const renames = {};
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const at = line.indexOf('=');
    if (at < 0) throw new Error(`rename line ${i + 1} needs "source = destination"`);
    renames[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  });
  return renames;
}
