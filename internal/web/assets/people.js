// The people page (#/people): who this tab is signed in as, and with which
// role; their API tokens, a new one (its secret shown once) and revoking;
// and, for an admin, the users: adding one (their first token shown once,
// to hand over) and deleting one.

import { request, signOut } from './api.js';
import { h, field, notice, dataTable, formatTime, confirmAction, select } from './dom.js';

const roleWords = {
  viewer: 'reads everything but secrets, changes nothing',
  operator: 'also runs tasks, accounts, passes and schedules, with the endpoints that exist',
  admin: 'may do everything: endpoints, users and everyone\'s tokens too',
};

export async function peoplePage(main) {
  const me = await request('GET', '/me');
  const message = notice();
  const inSession = me.user_id && !me.token_id;
  main.append(
    h('h1', { text: 'People' }),
    h('p', { id: 'people-me' }, 'Signed in as ', h('strong', { text: me.name }), `, ${me.role}: ${roleWords[me.role]}. `,
      inSession ? h('button', { 'data-action': 'sign-out', text: 'Sign out', onclick: signOut }) : null),
    message.el);
  if (me.user_id) main.append(passwordForm(me, message));
  const tokens = h('div', { id: 'tokens' });
  main.append(h('h2', { text: me.role === 'admin' ? 'API tokens' : 'Your API tokens' }), tokens);
  const drawTokens = async () => tokens.replaceChildren(tokenTable(await request('GET', '/tokens'), me, message, drawTokens));
  await drawTokens();
  if (me.user_id) main.append(newTokenForm(message, drawTokens));
  if (me.role !== 'admin') return;
  const users = h('div', { id: 'users' });
  main.append(h('h2', { text: 'Users' }), users);
  const drawUsers = async () => users.replaceChildren(userTable(await request('GET', '/users'), message, drawUsers, drawTokens));
  await drawUsers();
  main.append(newUserForm(message, drawUsers, drawTokens));
}

// shownOnce shows a token's secret in the notice, once.
function shownOnce(message, what, token) {
  message.show('ok', h('p', { text: `${what} Copy the token now: it is not shown again.` }),
    h('p', {}, h('code', { id: 'new-token-secret', text: token.secret })),
    h('p', { class: 'hint', text: 'Sign in to the console with it, or set it as MAILMIGRATE_API_TOKEN for the command line.' }));
}

function tokenTable(list, me, message, redraw) {
  if (list.length === 0) return h('p', { class: 'muted', text: 'No token yet.' });
  const rows = list.map((t) => h('tr', { 'data-id': String(t.id), class: t.revoked_at ? 'muted' : '' },
    h('td', { text: `${t.id}: ${t.name}` }),
    h('td', { text: t.user_id ? t.user_name : 'the service\'s own' }),
    h('td', { text: formatTime(t.created_at) }),
    h('td', { text: t.revoked_at ? `revoked ${formatTime(t.revoked_at)}` : (t.expires_at ? formatTime(t.expires_at) : 'never') }),
    h('td', {}, t.revoked_at || (t.id === me.token_id) ? null : h('button', { 'data-action': 'revoke', text: 'Revoke', onclick: async () => {
      if (!await confirmAction(`Revoke token ${t.id} (${t.name})? Whoever uses it is refused from now on.`, 'Revoke')) return;
      try {
        await request('DELETE', `/tokens/${t.id}`);
        message.set('ok', `Token ${t.id} revoked.`);
      } catch (err) {
        message.set('error', `Not revoked: ${err.message}`);
      }
      await redraw();
    } }))));
  return h('div', { class: 'table-wrap' }, dataTable('token-list', ['Token', 'User', 'Made', 'Expires', ''], rows));
}

function newTokenForm(message, redraw) {
  const name = h('input', { name: 'name', required: true, maxlength: '100', autocomplete: 'off', placeholder: 'laptop CLI' });
  const days = h('input', { type: 'number', name: 'expires_in_days', min: '1', max: '366', value: '90' });
  const form = h('form', { id: 'token-form', class: 'form' },
    h('h3', { text: 'New token' }),
    field('Name', name, 'What it is for.'),
    field('Expires in (days)', days),
    h('div', { class: 'actions' }, h('button', { class: 'primary', text: 'Make token' })));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const token = await request('POST', '/tokens', { name: name.value, expires_in_days: Number(days.value) });
      form.reset();
      shownOnce(message, `Token ${token.id} (${token.name}) made, with your role.`, token);
    } catch (err) {
      message.set('error', `Not made: ${err.message}`);
    }
    await redraw();
  });
  return form;
}

// passwordForm sets the password the user signs in to the console with.
function passwordForm(me, message) {
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'new-password', required: true, minlength: '12' });
  const form = h('form', { id: 'password-form', class: 'form' },
    h('h3', { text: 'Your password' }),
    field('New password', password, 'At least 12 characters; it signs you in to this console, with your name.'),
    h('div', { class: 'actions' }, h('button', { class: 'primary', text: 'Set password' })));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await request('PUT', `/users/${me.user_id}/password`, { password: password.value });
      message.set('ok', 'Password set: sign in with your name and it.');
    } catch (err) {
      message.set('error', `Password not set: ${err.message}`);
    } finally {
      password.value = '';
    }
  });
  return form;
}

function userTable(list, message, redraw, redrawTokens) {
  if (list.length === 0) return h('p', { class: 'muted', text: 'No user yet: the service\'s own token is the only one.' });
  const rows = list.map((u) => h('tr', { 'data-id': String(u.id) },
    h('td', { text: u.name }),
    h('td', { text: u.role }),
    h('td', { text: formatTime(u.created_at) }),
    h('td', {}, h('button', { 'data-action': 'delete', class: 'danger', text: 'Delete', onclick: async () => {
      if (!await confirmAction(`Delete ${u.name}? Every token of theirs is refused from now on.`)) return;
      try {
        await request('DELETE', `/users/${u.id}`);
        message.set('ok', `${u.name} deleted, with their tokens.`);
      } catch (err) {
        message.set('error', `Not deleted: ${err.message}`);
      }
      await redraw();
      await redrawTokens();
    } }))));
  return h('div', { class: 'table-wrap' }, dataTable('user-list', ['Name', 'Role', 'Added', ''], rows));
}

function newUserForm(message, redraw, redrawTokens) {
  const name = h('input', { name: 'name', required: true, maxlength: '100', autocomplete: 'off', placeholder: 'ann@example.com' });
  const role = select('role', Object.keys(roleWords).map((r) => [r, `${r}: ${roleWords[r]}`]), 'viewer');
  const form = h('form', { id: 'user-form', class: 'form' },
    h('h3', { text: 'Add a user' }),
    field('Name', name, 'Who they are, e.g. their address.'),
    field('Role', role),
    h('div', { class: 'actions' }, h('button', { class: 'primary', text: 'Add user' })));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const made = await request('POST', '/users', { name: name.value, role: role.value });
      form.reset();
      shownOnce(message, `${made.user.name} added as ${made.user.role}. Hand them their first token.`, made.token);
    } catch (err) {
      message.set('error', `Not added: ${err.message}`);
    }
    await redraw();
    await redrawTokens();
  });
  return form;
}
