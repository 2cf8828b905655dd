// The Endpoints page: the IMAP servers that tasks migrate from and to.
// #/endpoints lists them with a form to add one; #/endpoints/ID puts that
// endpoint in the form for editing.

import { request } from './api.js';
import { h, field, notice, confirmAction, dataTable, select } from './dom.js';
import { flash, takeFlash } from './flash.js';
import { AuthMethod, EndpointProblem, MasterForm, OAuth2Grant, OAuth2Provider, Profile, TLSMode, TokenMechanism, fieldLimits } from './enums.js';

const tlsModes = [
  [TLSMode.ssl, 'SSL/TLS (usually port 993)'],
  [TLSMode.starttls, 'STARTTLS (usually port 143)'],
  [TLSMode.plain, 'None: unencrypted (usually port 143)'],
];
const authMethods = [
  [AuthMethod.password, "Each account's own password"],
  [AuthMethod.master, 'A master (administrator) login for every account'],
  [AuthMethod.oauth2, 'OAuth 2.0 tokens (Microsoft 365, Google)'],
];
const providers = [
  [OAuth2Provider.microsoft365, 'Microsoft 365'],
  [OAuth2Provider.google, 'Google Workspace / Gmail'],
  ['', 'Other: token endpoint and scope below'],
];
const grants = [
  [OAuth2Grant.refreshToken, "Each account's refresh token"],
  [OAuth2Grant.clientCredentials, "The application's own token (app-only)"],
  [OAuth2Grant.serviceAccount, 'A Google service account with domain-wide delegation'],
];
const mechanisms = [[TokenMechanism.xoauth2, 'XOAUTH2'], [TokenMechanism.oauthbearer, 'OAUTHBEARER (RFC 7628)']];
const oauthLimits = fieldLimits.OAuth2Input;
// profiles are the providers an endpoint may be, told from the server first.
const profiles = [
  [Profile.auto, 'Tell from the server (Gmail, Microsoft 365)'],
  [Profile.generic, 'Any other server: no limits beyond what it announces'],
  [Profile.gmail, 'Gmail or Google Workspace (messages up to 35 MB)'],
  [Profile.microsoft365, 'Microsoft 365 (messages up to 35 MB; no folder named Files)'],
  [Profile.exchange, 'Exchange on premises (messages up to 10 MB)'],
];
const masterForms = [
  [MasterForm.authzid, 'SASL PLAIN with the account as authorization identity (Cyrus, Zimbra, Exchange, Dovecot)'],
  [MasterForm.separator, 'LOGIN as account*master (Dovecot)'],
];
const limits = fieldLimits.EndpointInput;
const authLimits = fieldLimits.EndpointAuthInput;

// authText says how the accounts log in to an endpoint.
function authText(auth) {
  if (auth.method === AuthMethod.master) return `master login ${auth.master_login}`;
  if (auth.method === AuthMethod.oauth2) {
    if (auth.oauth2.grant === OAuth2Grant.serviceAccount) return 'OAuth 2.0, a Google service account';
    return auth.oauth2.grant === OAuth2Grant.clientCredentials ? "OAuth 2.0, the application's token" : "OAuth 2.0, each account's refresh token";
  }
  return "each account's password";
}

// endpointName is how the pages name an endpoint.
export function endpointName(endpoint) {
  const address = `${endpoint.host}:${endpoint.port}`;
  return endpoint.role_label ? `${endpoint.role_label} (${address})` : address;
}

export async function endpointsPage(main, editId) {
  const message = notice();
  const list = h('div', { class: 'table-wrap' });
  const formSection = h('section', { 'aria-labelledby': 'endpoint-form-title' });
  main.append(h('h1', { text: 'Endpoints' }),
    h('p', { class: 'lead', text: 'The IMAP servers that tasks migrate from and to.' }),
    message.el, list, formSection);
  takeFlash(message);

  async function reload() {
    const endpoints = await request('GET', '/endpoints');
    list.replaceChildren(endpointTable(endpoints, remove));
  }

  async function remove(endpoint) {
    if (!await confirmAction(`Delete endpoint ${endpointName(endpoint)}?`)) return;
    try {
      await request('DELETE', `/endpoints/${endpoint.id}`);
      message.set('ok', `Endpoint ${endpointName(endpoint)} deleted.`);
    } catch (err) {
      const why = err.status === 409 ? `${err.message}. Delete those tasks first, or keep the endpoint.` : err.message;
      message.set('error', `Endpoint ${endpointName(endpoint)} was not deleted: ${why}`);
    }
    await reload();
  }

  const editing = editId === undefined ? null : await request('GET', `/endpoints/${editId}`);
  formSection.append(endpointForm(editing, async (input) => {
    if (editing) {
      await request('PUT', `/endpoints/${editing.id}`, input);
      flash('ok', `Endpoint ${editing.id} saved.`);
      location.hash = '#/endpoints';
      return;
    }
    const created = await request('POST', '/endpoints', input);
    message.set('ok', `Endpoint ${created.id} added.`);
    await reload();
  }));
  await reload();
}

function endpointTable(endpoints, remove) {
  if (endpoints.length === 0) return h('p', { text: 'No endpoint yet: add the old and the new server below.' });
  return dataTable('endpoint-list', ['Role', 'Host', 'Port', 'Security', 'Accounts log in with', ''],
    endpoints.map((endpoint) => h('tr', { 'data-id': endpoint.id },
      h('td', { text: endpoint.role_label || '—' }),
      h('td', { class: 'wrap', text: endpoint.host }),
      h('td', { text: endpoint.sieve.port ? `${endpoint.port}, sieve ${endpoint.sieve.port}` : String(endpoint.port) }),
      h('td', {}, endpoint.tls_mode,
        endpoint.tls_skip_verify ? h('span', { class: 'badge unsafe', title: 'any certificate is accepted', text: 'unsafe: certificate not checked' }) : null,
        endpoint.tls_mode === TLSMode.plain ? h('span', { class: 'badge unsafe', title: 'passwords and mail cross the network unencrypted', text: 'unsafe: unencrypted' }) : null),
      h('td', { class: 'wrap', text: authText(endpoint.auth) }),
      h('td', { class: 'actions' },
        h('a', { class: 'button', href: `#/endpoints/${endpoint.id}`, 'aria-label': `Edit ${endpointName(endpoint)}`, text: 'Edit' }),
        h('button', { class: 'danger', 'aria-label': `Delete ${endpointName(endpoint)}`, text: 'Delete', onclick: () => remove(endpoint) })))));
}

// endpointForm adds (endpoint null) or edits an endpoint; save(input)
// stores it and throws the service's error, which the form shows.
function endpointForm(endpoint, save) {
  const formMessage = notice();
  const role = h('input', { name: 'role_label', maxlength: limits.role_label.maxLength, placeholder: 'old provider', value: endpoint?.role_label ?? '' });
  const host = h('input', { name: 'host', required: true, maxlength: limits.host.maxLength, autocomplete: 'off', spellcheck: 'false', placeholder: 'imap.example.com', value: endpoint?.host ?? '' });
  const port = h('input', { name: 'port', type: 'number', min: 0, max: 65535, inputmode: 'numeric', value: endpoint ? String(endpoint.port) : '' });
  const mode = select('tls_mode', tlsModes, endpoint?.tls_mode ?? TLSMode.ssl);
  const profile = select('profile', profiles, endpoint?.profile ?? Profile.auto);
  // Own limits, in MB for bytes; empty: the provider's.
  const ownLimit = (name, value, scale) => h('input', { name, type: 'number', min: 0, step: 'any', inputmode: 'numeric', placeholder: 'the provider\'s',
    value: value ? String(value / scale) : '' });
  const own = endpoint?.limits ?? {};
  const maxMessage = ownLimit('max_message_mb', own.max_message_bytes, 1e6);
  const dailyDownload = ownLimit('daily_download_mb', own.daily_download_bytes, 1e6);
  const dailyUpload = ownLimit('daily_upload_mb', own.daily_upload_bytes, 1e6);
  const connections = ownLimit('connections', own.connections, 1);
  const accountConnections = ownLimit('account_connections', own.account_connections, 1);
  const limitFields = h('details', { class: 'limits', open: Object.values(own).some((v) => v > 0) },
    h('summary', { text: 'Limits of your own (instead of the provider\'s)' }),
    field('Largest message, MB', maxMessage, 'As a destination. Gmail 35, Microsoft 365 35 (a tenant may allow up to 150), Exchange 10.'),
    field('Daily download per mailbox, MB', dailyDownload, 'Over any 24 hours; beyond it the account pauses until it has room. Gmail 2500.'),
    field('Daily upload per mailbox, MB', dailyUpload, 'Gmail 500: a large mailbox moving into Gmail takes days.'),
    field('Connections to the host', connections, 'Every account of every task together; a running account holds 1 to its source and 2 to its destination.'),
    field('Connections per mailbox', accountConnections, 'Gmail 15, Microsoft 365 20, Exchange 16.'));
  // ManageSieve, where the accounts' filters and vacation replies live;
  // port empty: none, and scripts do not move.
  const sievePort = h('input', { name: 'sieve_port', type: 'number', min: 0, max: 65535, inputmode: 'numeric', placeholder: 'none',
    value: endpoint?.sieve.port ? String(endpoint.sieve.port) : '' });
  const sieveMode = select('sieve_tls_mode', tlsModes, endpoint?.sieve.tls_mode ?? TLSMode.starttls);
  const sieveFields = h('details', { class: 'limits sieve', open: (endpoint?.sieve.port ?? 0) > 0 },
    h('summary', { text: 'Sieve scripts (ManageSieve)' }),
    field('ManageSieve port', sievePort, "Usually 4190. When both servers of a task have one, each account's filters and vacation reply move after its messages, with the folders they file into renamed as the task renames them. Empty: none."),
    field('ManageSieve security', sieveMode, 'Usually STARTTLS, whatever the IMAP port uses.'));
  const skipVerify = h('input', { id: 'endpoint-skip-verify', name: 'tls_skip_verify', type: 'checkbox', checked: endpoint?.tls_skip_verify ?? false });
  const authMethod = select('auth_method', authMethods, endpoint?.auth.method ?? AuthMethod.password);
  const masterLogin = h('input', { name: 'master_login', maxlength: authLimits.master_login.maxLength, autocomplete: 'off', spellcheck: 'false', placeholder: 'admin', value: endpoint?.auth.master_login ?? '' });
  // Write-only: a stored master password is never shown; empty keeps it.
  const passwordStored = endpoint?.auth.master_password_set ?? false;
  const masterPassword = h('input', { name: 'master_password', type: 'password', autocomplete: 'new-password', maxlength: authLimits.master_password.maxLength,
    placeholder: passwordStored ? 'unchanged' : '' });
  const masterForm = select('master_form', masterForms, endpoint?.auth.master_form ?? MasterForm.authzid);
  const masterFields = h('fieldset', { class: 'master-login' },
    h('legend', { text: 'Master login' }),
    field('Login', masterLogin),
    field('Password', masterPassword, passwordStored ? 'Empty: keep the stored password.' : 'Never shown again once saved.'),
    field('Acts for the account with', masterForm));
  const oauth = endpoint?.auth.oauth2;
  // The provider is not stored: an edit shows the endpoint's own URL and scope.
  const provider = select('oauth2_provider', providers, oauth ? '' : OAuth2Provider.microsoft365);
  const tenant = h('input', { name: 'oauth2_tenant', maxlength: oauthLimits.tenant.maxLength, autocomplete: 'off', spellcheck: 'false', placeholder: 'contoso.onmicrosoft.com' });
  const grant = select('oauth2_grant', grants, oauth?.grant ?? OAuth2Grant.refreshToken);
  const clientId = h('input', { name: 'oauth2_client_id', maxlength: oauthLimits.client_id.maxLength, autocomplete: 'off', spellcheck: 'false', value: oauth?.client_id ?? '' });
  const secretStored = oauth?.client_secret_set ?? false;
  const clientSecret = h('input', { name: 'oauth2_client_secret', type: 'password', autocomplete: 'new-password', maxlength: oauthLimits.client_secret.maxLength,
    placeholder: secretStored ? 'unchanged' : '' });
  const tokenURL = h('input', { name: 'oauth2_token_url', type: 'url', maxlength: oauthLimits.token_url.maxLength, autocomplete: 'off', spellcheck: 'false', value: oauth?.token_url ?? '' });
  const deviceURL = h('input', { name: 'oauth2_device_url', type: 'url', maxlength: oauthLimits.device_url.maxLength, autocomplete: 'off', spellcheck: 'false', value: oauth?.device_url ?? '' });
  const authorizationURL = h('input', { name: 'oauth2_authorization_url', type: 'url', maxlength: oauthLimits.authorization_url.maxLength, autocomplete: 'off', spellcheck: 'false', value: oauth?.authorization_url ?? '' });
  const scope = h('input', { name: 'oauth2_scope', maxlength: oauthLimits.scope.maxLength, autocomplete: 'off', spellcheck: 'false', value: oauth?.scope ?? '' });
  const mechanism = select('oauth2_mechanism', mechanisms, oauth?.mechanism ?? TokenMechanism.xoauth2);
  const tenantField = field('Tenant', tenant, "Microsoft 365's tenant id or domain; empty: any organization (refresh tokens only).");
  const oauthFields = h('fieldset', { class: 'master-login oauth2' },
    h('legend', { text: 'OAuth 2.0 application' }),
    field('Provider', provider, 'Fills in the token endpoint and scope the provider documents.'),
    tenantField,
    field('Tokens', grant),
    field('Client (application) id', clientId),
    field('Client secret', clientSecret, secretStored ? 'Empty: keep the stored secret.' : 'Never shown again once saved; needed for app-only.'),
    field('Token endpoint', tokenURL, 'Empty with a provider: its own.'),
    field('Device authorization endpoint', deviceURL, "For Authorize on an account's page, with a code; empty with Microsoft 365: its own."),
    field('Authorization endpoint', authorizationURL, "For Authorize on an account's page, in the browser; empty with Google or Microsoft 365: its own."),
    field('Scope', scope, 'Space-separated; empty with a provider: its own.'),
    field('Mechanism', mechanism));
  const showAuth = () => {
    const master = authMethod.value === AuthMethod.master;
    const oauth2 = authMethod.value === AuthMethod.oauth2;
    masterFields.hidden = !master;
    masterLogin.required = master;
    masterPassword.required = master && !passwordStored;
    oauthFields.hidden = !oauth2;
    tenantField.hidden = provider.value !== OAuth2Provider.microsoft365;
    tokenURL.required = oauth2 && provider.value === '';
    clientSecret.required = oauth2 && grant.value !== OAuth2Grant.refreshToken && !secretStored;
    clientId.required = oauth2 && grant.value !== OAuth2Grant.serviceAccount;
  };
  for (const el of [provider, grant]) el.addEventListener('change', showAuth);
  authMethod.addEventListener('change', showAuth);
  showAuth();
  const title = endpoint ? `Edit endpoint ${endpoint.id}` : 'Add an endpoint';
  const checkResult = h('div', { id: 'endpoint-check', class: 'check-result', role: 'status', hidden: true });
  const form = h('form', { id: 'endpoint-form', class: 'card' },
    h('h2', { id: 'endpoint-form-title', text: title }),
    formMessage.el,
    field('Role', role, 'Free text, e.g. "old provider" or "new provider".'),
    field('Host', host),
    field('Port', port, 'Empty: the usual port of the security mode.'),
    field('Security', mode),
    h('div', { class: 'field check unsafe-choice' },
      skipVerify,
      h('label', { for: skipVerify.id, text: 'Accept any certificate' }),
      h('small', { class: 'hint', text: 'Unsafe: anyone on the network path could read the passwords. Only for a self-signed server you trust.' })),
    field('Provider', profile, 'Its limits where the server does not announce them: the largest message it takes, daily bytes and connections per mailbox, folder names it refuses.'),
    limitFields,
    sieveFields,
    field('Accounts log in with', authMethod, 'A master login or an application\'s token needs no password per account.'),
    masterFields,
    oauthFields,
    h('div', { class: 'actions' },
      h('button', { class: 'primary', text: endpoint ? 'Save' : 'Add endpoint' }),
      h('button', { type: 'button', 'data-action': 'check', text: 'Test connection', onclick: () => testConnection() }),
      endpoint ? h('a', { class: 'button', href: '#/endpoints', text: 'Cancel' }) : null),
    checkResult);
  const input = () => ({
    role_label: role.value.trim(), host: host.value.trim(), port: Number(port.value) || 0,
    tls_mode: mode.value, tls_skip_verify: skipVerify.checked, profile: profile.value,
    limits: {
      max_message_bytes: Math.round(Number(maxMessage.value) * 1e6), daily_download_bytes: Math.round(Number(dailyDownload.value) * 1e6),
      daily_upload_bytes: Math.round(Number(dailyUpload.value) * 1e6), connections: Math.round(Number(connections.value)),
      account_connections: Math.round(Number(accountConnections.value)),
    },
    sieve: { port: Math.round(Number(sievePort.value)) || 0, tls_mode: sieveMode.value },
    auth: authInput(),
  });
  function authInput() {
    switch (authMethod.value) {
      case AuthMethod.master:
        return { method: AuthMethod.master, master_login: masterLogin.value.trim(), master_password: masterPassword.value, master_form: masterForm.value };
      case AuthMethod.oauth2:
        return {
          method: AuthMethod.oauth2,
          oauth2: {
            provider: provider.value, tenant: provider.value === OAuth2Provider.microsoft365 ? tenant.value.trim() : '',
            grant: grant.value, client_id: clientId.value.trim(), client_secret: clientSecret.value,
            token_url: tokenURL.value.trim(), device_url: deviceURL.value.trim(),
            authorization_url: authorizationURL.value.trim(), scope: scope.value.trim(), mechanism: mechanism.value,
          },
        };
    }
    return { method: AuthMethod.password };
  }

  // testConnection checks the server as the form holds it, saved or not.
  async function testConnection() {
    formMessage.clear();
    if (!host.reportValidity()) return;
    checkResult.hidden = false;
    checkResult.setAttribute('aria-busy', 'true');
    checkResult.replaceChildren(h('p', { text: `Connecting to ${host.value.trim()}…` }));
    try {
      showCheck(checkResult, await request('POST', '/endpoint-checks', input()));
    } catch (err) {
      checkResult.replaceChildren(h('p', { class: 'error-text', text: `The check did not run: ${err.message}` }));
    }
    checkResult.removeAttribute('aria-busy');
  }

  form.addEventListener('submit', async (submit) => {
    submit.preventDefault();
    formMessage.clear();
    try {
      await save(input());
      // Saved: the secrets leave the page. Refused, they stay, with the
      // rest of what was typed, to be mended.
      masterPassword.value = '';
      clientSecret.value = '';
      if (!endpoint) { form.reset(); showAuth(); }
      checkResult.hidden = true;
    } catch (err) {
      formMessage.set('error', `Not saved: ${err.message}`);
    }
  });
  return form;
}

// showCheck draws an endpoint check: what works, or what is wrong and
// what to do, then the server's greeting, certificate and capabilities.
function showCheck(el, check) {
  const facts = [];
  if (check.tls) {
    const t = check.tls;
    facts.push(`${t.version}, certificate of ${t.subject || '(no name)'} issued by ${t.issuer || '(no name)'}, ` +
      `valid until ${new Date(t.not_after).toLocaleDateString()}${t.verified ? ', trusted' : ', not trusted'}`);
  }
  if (check.greeting) facts.push(`Greeting: ${check.greeting}`);
  if (check.capabilities.length) facts.push(`Capabilities before login: ${check.capabilities.join(' ')}`);
  el.className = `check-result notice ${check.ok ? 'ok' : 'error'}`;
  // replaceChildren would write a null as the text "null": leave them out.
  el.replaceChildren(...[
    h('p', { 'data-kind': check.problem_kind, text: check.ok ? `${check.address} works as configured (${check.took_ms} ms).` : check.problem }),
    check.ok ? null : h('p', { class: 'advice', text: check.advice }),
    check.problem_kind === EndpointProblem.untrustedCertificate ? h('p', { class: 'muted', text: 'The "Accept any certificate" box is above.' }) : null,
    h('ul', {}, [...check.notes, ...facts].map((line) => h('li', { text: line }))),
  ].filter(Boolean));
}
