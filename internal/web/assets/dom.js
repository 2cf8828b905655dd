// DOM helpers. Everything that comes from a server or a user reaches the
// page as text (textContent, text nodes, attribute values), never as HTML:
// no helper here parses markup.

import { signIn, signedIn } from './api.js';

// h builds an element. props: class, text (textContent), on<event>
// (listeners), value/checked (properties), anything else an attribute.
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'style') throw new Error('inline styles break the CSP: use a class');
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'value' || key === 'checked') el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child)); // strings become text nodes
  }
  return el;
}

// field is a labelled form control; the label names it for screen readers
// and a click on it focuses the control.
let fieldCount = 0;
export function field(labelText, control, hint) {
  fieldCount += 1;
  control.id ||= `field-${fieldCount}`;
  const hintEl = hint ? h('small', { class: 'hint', id: `${control.id}-hint`, text: hint }) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: control.id, text: labelText }), control, hintEl);
}

// dataTable is a table of rows (<tr> elements) under headers. Each cell
// carries its column's header as data-label, which a narrow screen shows
// above the cell when the rows stack as cards.
export function dataTable(id, headers, rows) {
  for (const row of rows) {
    [...row.children].forEach((cell, i) => { if (headers[i]) cell.dataset.label = headers[i]; });
  }
  return h('table', { id, class: 'stack' },
    h('thead', {}, h('tr', {}, headers.map((t) => h('th', { scope: 'col', text: t })))),
    h('tbody', {}, rows));
}

// notice is a message area; set(kind, text) shows text, clear() hides it.
export function notice() {
  const el = h('div', { class: 'notice', role: 'status', hidden: true });
  // show puts nodes of its own (a link, a form) in the notice.
  const show = (kind, ...nodes) => {
    el.className = `notice ${kind}`;
    el.setAttribute('role', kind === 'error' ? 'alert' : 'status');
    el.replaceChildren(...nodes.filter((n) => n !== null));
    el.hidden = false;
  };
  return {
    el,
    show,
    set(kind, text, lines = []) {
      show(kind, h('p', { text }), lines.length ? h('ul', {}, lines.map((line) => h('li', { text: line }))) : null);
    },
    clear() { el.hidden = true; el.replaceChildren(); },
  };
}

// modal shows a <dialog> built by build(dialog) and resolves with what
// result(dialog) says once it closes (Escape closes it as a cancel).
// The focus goes back to what opened the dialog when it closes (Esc,
// Cancel or its action), not to the page's body, also when a live redraw
// replaced the opener meanwhile: then to the control that stands for it,
// the same action in the same row. A person at the keyboard keeps their
// place.
function modal(build, result) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const stand = standIn(opener);
    const dialog = h('dialog', { class: 'modal' });
    build(dialog);
    dialog.addEventListener('close', () => {
      resolve(result(dialog));
      dialog.remove();
      const back = opener?.isConnected && opener !== document.body ? opener : stand();
      back?.focus({ preventScroll: true });
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

// standIn finds, later, the control that stands for el after a redraw:
// the same action (or id, or label) in the row of the same id.
function standIn(el) {
  if (!(el instanceof HTMLElement)) return () => null;
  const rowId = el.closest('[data-id]')?.dataset.id;
  const attr = ['data-action', 'id', 'aria-label'].find((name) => el.hasAttribute(name));
  if (!attr) return () => null;
  const selector = `[${attr}="${CSS.escape(el.getAttribute(attr))}"]`;
  return () => (rowId === undefined ? document : document.querySelector(`[data-id="${CSS.escape(rowId)}"]`))?.querySelector(selector) ?? null;
}

// confirmAction asks before something that cannot be undone; Cancel has
// the focus, so Enter alone does not delete anything.
export function confirmAction(question, actionLabel = 'Delete') {
  return modal((dialog) => {
    dialog.setAttribute('aria-labelledby', 'confirm-question');
    dialog.append(h('form', { method: 'dialog' },
      h('p', { id: 'confirm-question', text: question }),
      h('div', { class: 'actions' },
        h('button', { id: 'confirm-cancel', value: 'cancel', autofocus: true, text: 'Cancel' }),
        h('button', { id: 'confirm-ok', class: 'danger', value: 'ok', text: actionLabel }))));
  }, (dialog) => dialog.returnValue === 'ok');
}

// askToken asks for a sign-in with a name and a password, or for an API
// token; it resolves with the token, signedIn after a sign-in, or null
// when the person cancels. The inputs are emptied before the dialog goes.
export function askToken(rejected) {
  let token = null;
  return modal((dialog) => {
    const name = h('input', { id: 'signin-name', name: 'username', autocomplete: 'username', required: true });
    const password = h('input', { type: 'password', id: 'signin-password', autocomplete: 'current-password', required: true });
    const refused = h('p', { class: 'error-text', id: 'signin-error', role: 'alert', hidden: true });
    const signInForm = h('form', { id: 'signin-form' },
      h('h2', { text: 'Sign in' }),
      h('p', { text: rejected ? 'The service did not accept that token. Sign in, or enter a token again.'
        : 'This service needs you to sign in, with your name and password or with an API token.' }),
      field('Name', name), field('Password', password), refused,
      h('div', { class: 'actions' }, h('button', { id: 'signin-ok', class: 'primary', text: 'Sign in' })));
    signInForm.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        await signIn(name.value.trim(), password.value);
        token = signedIn;
        dialog.close();
      } catch (err) {
        refused.textContent = `Not signed in: ${err.message}`;
        refused.hidden = false;
      } finally {
        password.value = '';
      }
    });
    const input = h('input', { type: 'password', id: 'token-input', autocomplete: 'off', required: true });
    const tokenForm = h('form', { method: 'dialog', id: 'token-form-dialog' },
      h('h3', { text: 'Or an API token' }),
      h('p', { class: 'hint', text: 'It is kept in this browser tab only, until you close it. A service started without one made its own: ' +
        'the link that `mailmigrate serve` printed signs in, and the token is in the file api-token of its data dir.' }),
      field('API token', input),
      h('div', { class: 'actions' },
        h('button', { type: 'button', id: 'token-cancel', text: 'Cancel', onclick: () => dialog.close() }),
        h('button', { id: 'token-ok', text: 'Use token' })));
    tokenForm.addEventListener('submit', () => { token = input.value.trim() || null; input.value = ''; });
    dialog.append(signInForm, tokenForm);
  }, () => token);
}

// keepFocus runs draw(), which replaces what container shows, and gives
// the focus back to the same control if it was inside: a live update must
// not throw a keyboard user back to the top of the page. The control is
// found again by its row's data-id and its data-action, id or href; when
// it is gone or disabled now (Run, once the pass started), the first one
// enabled in its row (or the container) gets the focus.
export function keepFocus(container, draw) {
  const active = document.activeElement;
  if (!active || active === container || !container.contains(active)) {
    draw();
    return;
  }
  const rowId = active.closest('[data-id]')?.dataset.id;
  const attr = ['data-action', 'id', 'href'].find((name) => active.hasAttribute(name));
  draw();
  if (container.contains(active)) {
    // Moved into the new drawing (the account form below its row): a
    // moved element loses the focus.
    if (document.activeElement !== active) active.focus({ preventScroll: true });
    return;
  }
  const scope = (rowId === undefined ? null : container.querySelector(`[data-id="${CSS.escape(rowId)}"]`)) ?? container;
  const same = attr ? scope.querySelector(`[${attr}="${CSS.escape(active.getAttribute(attr))}"]`) : null;
  const target = same && !same.disabled ? same : scope.querySelector('a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled])');
  target?.focus({ preventScroll: true });
}

// formatTime shows an API timestamp in the reader's local time.
export function formatTime(iso) {
  return iso ? new Date(iso).toLocaleString() : '';
}

// formatBytes shows a byte count for people.
export function formatBytes(n) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = Number(n) || 0;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit += 1; }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

// formatDuration says a span of milliseconds for people.
export function formatDuration(ms) {
  const minutes = Math.round(ms / 60000);
  if (minutes < 1) return `${Math.round(ms / 1000)} s`;
  if (minutes < 120) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

// plural says "1 task", "2 tasks".
export function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

// select is a <select> named name of options ([value, label] pairs), with
// value chosen.
export function select(name, options, value) {
  const el = h('select', { name }, options.map(([v, label]) => h('option', { value: v, text: label })));
  el.value = value;
  return el;
}
