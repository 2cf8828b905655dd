// The activity page (#/activity): the audit trail, newest first, a page
// at a time: who changed what, from where, and how it ended; and the
// whole trail as CSV.

import { request, downloadLink } from './api.js';
import { h, dataTable, formatTime } from './dom.js';

const pageSize = 100;

export async function activityPage(main) {
  const rows = h('tbody');
  const older = h('button', { id: 'activity-older', text: 'Older entries', hidden: true });
  const table = dataTable('activity-list', ['When', 'Who', 'From', 'What', 'Outcome'], []);
  table.querySelector('tbody').replaceWith(rows);
  let before = 0;
  const more = async () => {
    const entries = await request('GET', `/audit?limit=${pageSize}${before ? `&before=${before}` : ''}`);
    for (const e of entries) rows.append(entryRow(e));
    before = entries.length > 0 ? entries[entries.length - 1].id : before;
    older.hidden = entries.length < pageSize;
    return entries.length;
  };
  older.addEventListener('click', more);
  main.append(
    h('h1', { text: 'Activity' }),
    h('p', { class: 'muted', text: 'Every request that changed something, or tried to: who, from where, what, and how it ended. '
      + 'Requests are kept for the time the service was started with (--audit-retention); no password or token is ever recorded.' }),
    h('p', {}, downloadLink('activity-csv', '/audit.csv', 'audit.csv', 'Download (CSV)')),
    h('div', { class: 'table-wrap' }, table), older);
  if (await more() === 0) main.append(h('p', { class: 'muted', text: 'Nothing has been changed yet.' }));
}

// entryRow is one request of the trail.
function entryRow(e) {
  const refused = e.status >= 400;
  return h('tr', { 'data-id': String(e.id), class: refused ? 'failure' : '' },
    h('td', { text: formatTime(e.at) }),
    h('td', { class: 'wrap', text: e.actor || 'no valid token' }),
    h('td', { text: e.remote }),
    h('td', { class: 'wrap' }, h('div', { text: e.what || `${e.method} ${e.path}` }), h('div', { class: 'muted', text: `${e.method} ${e.path}` })),
    h('td', { class: refused ? 'error-text' : '', text: e.outcome }));
}
