// The page's client of the REST API. Every call goes through request(),
// which sends the API token when there is one and asks for it, or for a
// sign-in with a name and a password, when the service answers 401. The
// token lives in sessionStorage only: it is gone when the tab closes and
// never written anywhere else. A sign-in's session travels in an HttpOnly
// cookie the page cannot read; the page keeps the session's CSRF token,
// which its changes carry.

export const apiBase = '/api/v1';
const tokenKey = 'mailmigrate.apiToken';
const csrfKey = 'mailmigrate.csrfToken';

// fieldLabels name the API's fields as the console's forms label them: a
// 400 answer opens with the field it refuses ("auth.oauth2.tenant must
// be …"), and a person is told of the form's field, never of a path.
export const fieldLabels = {
  role_label: 'Role', role: "The user's role", password: 'Password', also_accept: 'Also accept', expires_in_days: 'Expires in (days)', token_name: 'Token name', host: 'Host', port: 'Port', tls_mode: 'Security', profile: 'Provider',
  'limits.max_message_bytes': 'Largest message', 'limits.daily_download_bytes': 'Daily download per mailbox',
  'limits.daily_upload_bytes': 'Daily upload per mailbox', 'limits.connections': 'Connections to the host',
  'limits.account_connections': 'Connections per mailbox',
  'sieve.port': 'ManageSieve port', 'sieve.tls_mode': 'ManageSieve security',
  'auth.method': 'Accounts log in with', 'auth.master_login': 'The master login', 'auth.master_password': 'The master password',
  'auth.master_form': 'Acts for the account with',
  'auth.oauth2.provider': 'The OAuth provider', 'auth.oauth2.tenant': 'Tenant', 'auth.oauth2.grant': 'Tokens',
  'auth.oauth2.client_id': 'Client (application) id', 'auth.oauth2.client_secret': 'Client secret',
  'auth.oauth2.token_url': 'Token endpoint', 'auth.oauth2.device_url': 'Device authorization endpoint',
  'auth.oauth2.authorization_url': 'Authorization endpoint', 'auth.oauth2.scope': 'Scope', 'auth.oauth2.mechanism': 'Mechanism',
  name: 'Name', source_endpoint_id: 'From (source)', destination_endpoint_id: 'To (destination)',
  'options.include_folders': 'Only folders matching', 'options.exclude_folders': 'Skip folders matching',
  'options.folder_map': 'Rename folders', 'options.max_message_bytes': 'Skip messages larger than',
  'options.since': 'Only messages since', 'options.parallel_accounts': 'Accounts at once',
  'options.gmail_labels': 'Gmail labels', 'options.verify_copies': 'Check the copies',
  source_login: 'Source login', destination_login: 'Destination login', source_password: 'Source password',
  destination_password: 'Destination password', destination_password_same_as_source: 'Destination password',
  url: 'URL', secret: 'Signing secret', calls: 'Calls', to: 'The address', authorization: 'The authorization',
  every_minutes: 'Delta pass every', at: 'Daily at', until: 'No delta pass after', final_at: 'Final pass at', time_zone: 'Time zone',
};

// inWords puts the form's label in place of the API field that opens a
// 400 answer's text, e.g. "auth.oauth2.tenant must be …" → "Tenant must
// be …"; other text stays as it is.
export function inWords(text) {
  const path = /^([a-z_]+(?:\.[a-z_0-9]+)*)(?:\[[^\]]*\])? /.exec(text);
  const label = path && fieldLabels[path[1]];
  const rest = label ? text.slice(path[1].length).replace(/^\[[^\]]*\]/, '') : text;
  // Other fields the words name ("… with every_minutes"): those with a
  // dot or an underscore, which prose never has, in quotes.
  const named = rest.replace(/\b[a-z][a-z0-9]*(?:[._][a-z0-9]+)+\b/g, (name) => (fieldLabels[name] ? `"${fieldLabels[name]}"` : name));
  return label ? label + named : named;
}

// ApiError is a non-2xx answer; the service's plain-text body is the
// message, with a refused field named as the console labels it.
export class ApiError extends Error {
  constructor(status, text) {
    super(status === 400 && text ? inWords(text) : (text || `the service answered ${status}`));
    this.status = status;
  }
}

export function apiToken() {
  return sessionStorage.getItem(tokenKey) || '';
}

// takeTokenFromLink keeps the token of a sign-in link (the console's
// address with #token=… after it, as `mailmigrate serve` prints it) in
// this tab, and takes it out of the address bar and the history. A
// fragment is never sent to a server, so no log ever holds it.
export function takeTokenFromLink() {
  const link = /^#token=([A-Za-z0-9._~+/=-]+)$/.exec(location.hash);
  if (!link) return;
  sessionStorage.setItem(tokenKey, link[1]);
  history.replaceState(null, '', `${location.pathname}${location.search}#/tasks`);
}

let tokenPrompt = async () => null;

// signedIn is what the prompt answers after a sign-in with a name and a
// password, instead of a token: the session's cookie is set.
export const signedIn = Symbol('signed in');

// setTokenPrompt installs the function that asks a person for the token.
export function setTokenPrompt(prompt) {
  tokenPrompt = prompt;
}

// One prompt answers every call that got a 401 at the same time.
let pendingPrompt = null;

function promptForToken(rejected) {
  pendingPrompt ||= tokenPrompt(rejected).finally(() => { pendingPrompt = null; });
  return pendingPrompt;
}

// authHeaders are the headers that carry the token, if any, or else the
// signed-in session's CSRF token.
export function authHeaders() {
  const token = apiToken();
  if (token) return { Authorization: `Bearer ${token}` };
  const csrf = sessionStorage.getItem(csrfKey);
  return csrf ? { 'X-CSRF-Token': csrf } : {};
}

// signIn opens a console session as name; it resolves with who signed in,
// or fails in the service's words.
export async function signIn(name, password) {
  const resp = await fetch('/signin', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name, password }) });
  if (!resp.ok) throw new ApiError(resp.status, (await resp.text()).trim() || resp.statusText);
  const session = await resp.json();
  sessionStorage.removeItem(tokenKey);
  sessionStorage.setItem(csrfKey, session.csrf_token);
  return session;
}

// signOut ends the console session, forgets the tab's token, and shows
// the sign-in again.
export async function signOut() {
  await fetch('/signout', { method: 'POST' });
  sessionStorage.removeItem(csrfKey);
  sessionStorage.removeItem(tokenKey);
  location.reload();
}

// serviceDown is the error of a request that got no answer.
export const serviceDown = 'the service does not answer';

let outageBanner = () => {};

// setOutageBanner installs the function that shows (true) or hides
// (false) the banner saying the service does not answer.
export function setOutageBanner(show) {
  outageBanner = show;
}

// fetchWithToken is fetch on an API path that handles 401 by asking for
// the token and trying again; it gives up when the person cancels. A
// network failure (the service down or unreachable) shows the outage
// banner until a request gets an answer again, and fails in words.
export async function fetchWithToken(path, init = {}) {
  for (;;) {
    const sent = apiToken();
    let resp;
    try {
      resp = await fetch(apiBase + path, { ...init, headers: { ...init.headers, ...authHeaders() } });
    } catch (err) {
      if (err.name === 'AbortError') throw err;
      outageBanner(true);
      throw new ApiError(0, serviceDown);
    }
    outageBanner(resp.status === 502 || resp.status === 503 || resp.status === 504);
    if (resp.status !== 401) return resp;
    const token = await promptForToken(sent !== '');
    if (token === null) throw new ApiError(401, 'the service needs an API token or a sign-in');
    if (token !== signedIn) sessionStorage.setItem(tokenKey, token);
  }
}

// downloadLink is a link that downloads the file at path (under the API)
// as filename. A plain link cannot send the API token, so when there is
// one the file is fetched and handed over as a blob.
export function downloadLink(id, path, filename, text) {
  const a = document.createElement('a');
  Object.assign(a, { className: 'button', id, href: apiBase + path, download: filename, textContent: text });
  a.addEventListener('click', async (click) => {
    if (!apiToken()) return;
    click.preventDefault();
    const resp = await fetchWithToken(path);
    const url = URL.createObjectURL(await resp.blob());
    const save = Object.assign(document.createElement('a'), { href: url, download: filename });
    save.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });
  return a;
}

// request sends a JSON body (or text with another content type) and
// returns the decoded JSON answer, or null when there is none.
export async function request(method, path, body, contentType = 'application/json') {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = contentType;
    init.body = contentType === 'application/json' ? JSON.stringify(body) : body;
  }
  const resp = await fetchWithToken(path, init);
  const text = await resp.text();
  if (!resp.ok) throw new ApiError(resp.status, text.trim());
  return text ? JSON.parse(text) : null;
}

// requestPage gets one page of a listing that pages with a cursor: its
// items, how many there are in all (X-Total-Count), and the cursor of the
// next page from the Link header, or null after the last.
export async function requestPage(path) {
  const resp = await fetchWithToken(path);
  const text = await resp.text();
  if (!resp.ok) throw new ApiError(resp.status, text.trim());
  const link = /<([^>]*)>;\s*rel="next"/.exec(resp.headers.get('Link') || '');
  const next = link ? new URL(link[1], location.href).searchParams.get('cursor') : null;
  return { items: JSON.parse(text), total: Number(resp.headers.get('X-Total-Count')), next };
}

// openEventSocket opens the live event stream of a task (of every task
// when taskId is null), starting after seq, or with live only at the
// events committed from now on. A browser's WebSocket cannot send headers:
// the token rides as the subprotocol after `bearer`, as the service
// documents, not in the URL, which ends up in logs and histories.
export function openEventSocket(taskId, after, live = false) {
  const url = new URL(`${apiBase}/events/ws`, location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  if (taskId !== null) url.searchParams.set('task_id', String(taskId));
  url.searchParams.set('after', String(after));
  if (live) url.searchParams.set('live', 'true');
  const token = apiToken();
  if (!token) return new WebSocket(url.href);
  if (isHTTPToken(token)) return new WebSocket(url.href, ['bearer', token]);
  // A subprotocol must be an HTTP token: one with / or = (base64) cannot
  // be carried there, and is sent as the parameter the service accepts.
  url.searchParams.set('access_token', token);
  return new WebSocket(url.href);
}

function isHTTPToken(text) {
  return /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(text);
}
