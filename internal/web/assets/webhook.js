// A task's webhook on its page: the URL called, signed with a secret,
// when a pass ends, an account fails or the final pass ends; and its
// delivery log. The secret is write-only: the page never shows it.

import { request } from './api.js';
import { h, field, notice, confirmAction, formatTime, dataTable, select } from './dom.js';
import { WebhookCalls } from './enums.js';

const pendingPoll = 2000;

// webhookSection returns the section, draw(), which reads the webhook and
// its deliveries again, and stop(); the form is filled once, so a refresh never
// wipes what someone is typing.
export function webhookSection(taskId) {
  const message = notice();
  const url = h('input', { type: 'url', name: 'url', placeholder: 'https://hooks.example/mailmigrate', autocomplete: 'off', required: true });
  const secret = h('input', { type: 'password', name: 'secret', autocomplete: 'new-password', minlength: '16' });
  const calls = select('calls', [[WebhookCalls.perPass, 'Once per pass, listing the accounts that did not complete'],
    [WebhookCalls.perAccount, 'Once per pass, and once for each account that fails']], WebhookCalls.perPass);
  const secretHint = 'At least 16 characters; the receiver checks the signature with it.';
  const secretField = field('Signing secret', secret, secretHint);
  const remove = h('button', { type: 'button', 'data-action': 'remove-webhook', text: 'Remove webhook', hidden: true, onclick: removeWebhook });
  const sendTest = h('button', { type: 'button', 'data-action': 'test-webhook', text: 'Send a test', hidden: true, onclick: testWebhook });
  const form = h('form', { id: 'webhook-form', class: 'form' },
    field('URL', url, 'Called with a signed JSON body when a pass ends or the final pass does.'),
    secretField,
    field('Calls', calls, 'A bad day of many failed logins is one call per pass, unless each account is asked for.'),
    h('div', { class: 'actions' }, h('button', { class: 'primary', type: 'submit', text: 'Save webhook' }), sendTest, remove));
  const deliveries = h('div', { class: 'table-wrap', id: 'webhook-deliveries' });
  const mailTo = h('input', { type: 'text', name: 'mail_to', placeholder: 'it@acme.example, boss@acme.example', autocomplete: 'off' });
  const mailHint = h('p', { class: 'hint', id: 'mail-server' });
  const mailForm = h('form', { id: 'mail-form', class: 'form' },
    h('h3', { text: 'Mail' }), mailHint,
    field('Mail the summary and the CSV report to', mailTo, 'Addresses, separated by commas: when a pass ends, and when the final pass does.'),
    h('div', { class: 'actions' }, h('button', { class: 'primary', type: 'submit', text: 'Save recipients' }),
      h('button', { type: 'button', 'data-action': 'remove-mail', text: 'Mail no one', onclick: removeMail })));
  const section = h('section', { id: 'webhook', 'aria-labelledby': 'webhook-title' },
    h('h2', { id: 'webhook-title', text: 'Word when it is done' }), message.el, h('h3', { text: 'Webhook' }), form, deliveries, mailForm);

  const showMail = (m) => {
    mailTo.value = m.to.join(', ');
    mailHint.textContent = m.smtp_configured ? '' : 'The service has no SMTP server: start it with MAILMIGRATE_SMTP_URL to mail.';
  };
  mailForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      showMail(await request('PUT', `/tasks/${taskId}/mail`, { to: mailTo.value.split(',').map((a) => a.trim()).filter(Boolean) }));
      message.set('ok', 'Recipients saved.');
    } catch (err) {
      message.set('error', `Recipients not saved: ${err.message}`);
    }
  });
  async function removeMail() {
    try {
      await request('DELETE', `/tasks/${taskId}/mail`);
      showMail(await request('GET', `/tasks/${taskId}/mail`));
      message.set('ok', 'No one is mailed.');
    } catch (err) {
      message.set('error', `Not changed: ${err.message}`);
    }
  }

  // show puts the stored webhook in the form: its secret only as set.
  let hooked = false;
  const show = (hook) => {
    hooked = Boolean(hook.url);
    url.value = hook.url;
    calls.value = hook.calls;
    remove.hidden = !hook.url;
    sendTest.hidden = !hook.url;
    secret.value = '';
    secret.placeholder = hook.secret_set ? 'set (never shown); type a new one to replace it' : '';
    secret.required = !hook.secret_set;
  };

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      show(await request('PUT', `/tasks/${taskId}/webhook`, { url: url.value.trim(), secret: secret.value, calls: calls.value }));
      message.set('ok', 'Webhook saved.');
    } catch (err) {
      message.set('error', `Webhook not saved: ${err.message}`);
    }
    await draw();
  });

  // testWebhook calls the saved webhook once, now, and says how the
  // receiver answered.
  async function testWebhook() {
    sendTest.disabled = true;
    message.set('', 'Calling the webhook…');
    try {
      const r = await request('POST', `/tasks/${taskId}/webhook/test`);
      if (r.ok) message.set('ok', `The receiver took the test call (HTTP ${r.status}, ${r.took_ms} ms).`);
      else message.set('error', `The test call did not go through: ${r.error}. A pass's calls would be tried again for about 40 minutes, then given up.`);
    } catch (err) {
      message.set('error', `No test call was made: ${err.message}`);
    } finally {
      sendTest.disabled = false;
    }
  }

  async function removeWebhook() {
    if (!await confirmAction('Remove the webhook? It is not called again, and its secret is forgotten.', 'Remove webhook')) return;
    try {
      await request('DELETE', `/tasks/${taskId}/webhook`);
      show({ url: '', secret_set: false });
      message.set('ok', 'Webhook removed.');
    } catch (err) {
      message.set('error', `Not removed: ${err.message}`);
    }
    await draw();
  }

  // While a call is pending, the log is read again now and then: its
  // attempts make no event that would refresh the page.
  let timer = null;
  let stopped = false;
  let filled = false;
  async function draw() {
    clearTimeout(timer);
    if (stopped) return;
    if (!filled) {
      filled = true;
      show(await request('GET', `/tasks/${taskId}/webhook`));
      showMail(await request('GET', `/tasks/${taskId}/mail`));
    }
    if (!hooked) {
      deliveries.replaceChildren();
      return;
    }
    const log = await request('GET', `/tasks/${taskId}/webhook/deliveries`);
    deliveries.replaceChildren(log.length === 0 ? h('p', { class: 'hint', text: 'No call yet.' })
      : dataTable('delivery-list', ['Created', 'Event', 'State', 'Attempts', 'Answer', 'Last error'],
        log.map((d) => h('tr', { 'data-id': d.id, 'data-state': d.state },
          [formatTime(d.created_at), d.kind, d.state, String(d.attempts), d.last_status ? String(d.last_status) : '–', d.last_error || '–']
            .map((text) => h('td', { text }))))));
    if (log.some((d) => d.state === 'pending')) timer = setTimeout(() => draw().catch(() => {}), pendingPoll);
  }
  const stop = () => { stopped = true; clearTimeout(timer); };
  return { section, draw, stop };
}
