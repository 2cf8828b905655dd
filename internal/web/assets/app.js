// The page's entry point: a hash router (#/tasks, #/tasks/ID,
// #/tasks/ID/accounts/ID, #/endpoints, #/endpoints/ID, #/activity, #/people) that draws one page
// at a time into <main>. Hash routes keep the server simple: it serves one
// page at /.

import { setTokenPrompt, setOutageBanner, serviceDown, takeTokenFromLink } from './api.js';
import { h, askToken } from './dom.js';
import { endpointsPage } from './endpoints.js';
import { tasksPage } from './tasks.js';
import { taskPage } from './task.js';
import { accountPage } from './account.js';
import { activityPage } from './activity.js';
import { peoplePage } from './people.js';

const routes = [
  [/^#\/tasks\/(\d+)\/accounts\/(\d+)$/, (main, m, keepAlive) => accountPage(main, Number(m[1]), Number(m[2]), keepAlive), 'nav-tasks'],
  [/^#\/tasks\/(\d+)$/, (main, m, keepAlive) => taskPage(main, Number(m[1]), keepAlive), 'nav-tasks'],
  [/^#\/endpoints\/(\d+)$/, (main, m) => endpointsPage(main, Number(m[1])), 'nav-endpoints'],
  [/^#\/endpoints$/, (main) => endpointsPage(main), 'nav-endpoints'],
  [/^#\/tasks$/, (main, m, keepAlive) => tasksPage(main, keepAlive), 'nav-tasks'],
  [/^#\/activity$/, (main) => activityPage(main), 'nav-activity'],
  [/^#\/people$/, (main) => peoplePage(main), 'nav-people'],
];

let current = null;

// show draws the page the hash names. Each page gets its own container
// and its own list of things to stop (timers, the event stream): a page
// still loading when the person moves on draws into a detached container
// and is stopped as soon as it registers anything.
async function show() {
  current?.stop();
  const page = { stopped: false, stops: [], stop() { this.stopped = true; this.stops.forEach((stop) => stop()); } };
  current = page;
  const keepAlive = (stop) => (page.stopped ? stop() : page.stops.push(stop));
  const hash = location.hash || '#/tasks';
  const route = routes.find(([pattern]) => pattern.test(hash));
  const view = h('div', { class: 'view', 'aria-busy': 'true' });
  document.getElementById('main').replaceChildren(view);
  for (const link of document.querySelectorAll('header nav a')) {
    if (route && link.id === route[2]) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  try {
    if (!route) {
      view.append(h('h1', { text: 'Page not found' }), h('p', {}, h('a', { href: '#/tasks', text: 'Back to the tasks' })));
      return;
    }
    await route[1](view, hash.match(route[0]), keepAlive);
  } catch (err) {
    view.append(h('div', { class: 'notice error', role: 'alert' }, h('p', { text: `This page could not be loaded: ${err.message}` })));
  } finally {
    view.removeAttribute('aria-busy');
  }
}

takeTokenFromLink();
setTokenPrompt(askToken);

// The outage banner: shown while requests get no answer, gone once one
// does, and with it the errors the outage left in the page's notices.
const outage = h('p', { class: 'outage', id: 'outage', role: 'alert', hidden: true,
  text: 'The mailmigrate service does not answer. The page keeps trying and catches up by itself once it is back.' });
document.body.prepend(outage);
setOutageBanner((down) => {
  if (outage.hidden === !down) return;
  outage.hidden = !down;
  if (down) return;
  for (const stale of document.querySelectorAll('.notice.error')) {
    if (stale.textContent.includes(serviceDown)) stale.hidden = true;
  }
});
window.addEventListener('hashchange', () => {
  show();
  document.getElementById('main').focus({ preventScroll: true });
});
show();
