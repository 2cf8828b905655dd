// Which of a task's accounts its page shows: a state chosen from chips
// that count each state, a search on logins, an order, and pages of
// pageSize accounts that the service hands out with a cursor. Running
// accounts come first unless the person picks another order. Rows ticked
// on any page make a selection, which bulk actions act on; without one
// they act on what the chips and search choose.

import { h } from './dom.js';
import { AccountState, AccountSort, LoginTestFilter, fieldLimits } from './enums.js';
import { stateLabel } from './tasks.js';

export const pageSize = 50;

const orders = [
  [AccountSort.state, 'Running first, then problems'],
  [AccountSort.login, 'Login A–Z'],
  [AccountSort.loginReversed, 'Login Z–A'],
  [AccountSort.progress, 'Least progress first'],
  [AccountSort.progressReversed, 'Most progress first'],
  [AccountSort.updatedReversed, 'Latest change first'],
  [AccountSort.id, 'Order added'],
];

// accountList keeps the choices; changed() is called when they change and
// the page must be fetched again, ticked() when the selection changes.
export function accountList(taskId, changed, ticked) {
  let state = ''; // '' is every state
  let search = '';
  // cursors[i] is where page i starts; the last is the page shown.
  let cursors = [null];
  // The ticked accounts' ids; a new filter or order clears them.
  const tickedIDs = new Set();
  const restart = () => { cursors = [null]; tickedIDs.clear(); changed(); };

  const chips = h('div', { class: 'chips', id: 'state-chips', role: 'group', 'aria-label': 'Show the accounts in one state' });
  const searchBox = h('input', {
    type: 'search', id: 'account-search', placeholder: 'Search logins', 'aria-label': 'Search logins',
    autocomplete: 'off', spellcheck: 'false', maxlength: fieldLimits.AccountInput.source_login.maxLength,
  });
  let typing = null;
  searchBox.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      if (searchBox.value.trim() === search) return;
      search = searchBox.value.trim();
      restart();
    }, 300);
  });
  const order = h('select', { id: 'account-order', 'aria-label': 'Order of the accounts', onchange: restart },
    orders.map(([value, label]) => h('option', { value, text: label })));
  // The login test's verdict: on a list of thousands, the few whose
  // password is wrong are one choice away.
  const loginTest = h('select', { id: 'account-login-test', 'aria-label': 'Accounts by their last login test', onchange: restart },
    [['', 'Any login test'], [LoginTestFilter.failed, 'Login test failed'], [LoginTestFilter.passed, 'Login test passed'],
      [LoginTestFilter.untested, 'Not tested']].map(([value, label]) => h('option', { value, text: label })));
  // The pager is above the list and below it: on a long page, the next
  // one is a click away from either end.
  const pager = h('nav', { class: 'pager', id: 'account-pager', 'aria-label': 'Pages of accounts' });
  const pagerTop = h('nav', { class: 'pager', id: 'account-pager-top', 'aria-label': 'Pages of accounts, above the list' });

  return {
    controls: h('div', { class: 'list-controls' }, chips, h('div', { class: 'list-search' }, searchBox, loginTest, order)),
    pager,
    pagerTop,

    // path asks for the page shown.
    path() {
      const params = new URLSearchParams({ sort: order.value, limit: String(pageSize) });
      if (state) params.set('state', state);
      if (search) params.set('q', search);
      if (loginTest.value) params.set('login_test', loginTest.value);
      const cursor = cursors[cursors.length - 1];
      if (cursor) params.set('cursor', cursor);
      return `/tasks/${taskId}/accounts?${params}`;
    },

    // filtered says whether the choices leave accounts out.
    filtered() { return state !== '' || search !== '' || loginTest.value !== ''; },

    ticked: tickedIDs,

    // tick adds or removes accounts from the selection. Only the bulk
    // actions are drawn again: the rows keep their boxes as clicked.
    tick(ids, on) {
      for (const id of ids) { if (on) tickedIDs.add(id); else tickedIDs.delete(id); }
      ticked();
    },

    // selection is what a bulk action acts on, as the API takes it, and
    // its words: the ticked accounts, else the accounts the chips and
    // search choose (total of them), else null when nothing is chosen.
    selection(total) {
      if (tickedIDs.size > 0) {
        return { body: { ids: [...tickedIDs] }, count: tickedIDs.size, words: `${tickedIDs.size} selected` };
      }
      if (!this.filtered() || total === 0) return null;
      const body = {};
      if (state) body.state = [state];
      if (search) body.q = search;
      if (loginTest.value) body.login_test = loginTest.value;
      return { body, count: total, words: `${total} that ${total === 1 ? 'matches' : 'match'}` };
    },

    // emptyPage handles a page left empty by accounts that moved on (a
    // state filter while they run): back to the first page, if not on it.
    emptyPage() {
      if (cursors.length === 1) return false;
      cursors = [null];
      return true;
    },

    // showChips draws the state chips from the task's counts.
    showChips(task) {
      const counts = task.accounts;
      const chip = (value, label, n) => h('button', {
        type: 'button', class: 'chip', 'data-state': value || 'all', 'aria-pressed': String(state === value),
        text: `${label} ${n}`, onclick: () => { if (state !== value) { state = value; restart(); } },
      });
      chips.replaceChildren(chip('', 'All', counts.total),
        ...Object.values(AccountState).filter((s) => counts[s] > 0 || s === state).map((s) => chip(s, stateLabel(s), counts[s])));
    },

    // showPager says which accounts the page shows, and pages on.
    showPager(page) {
      const first = (cursors.length - 1) * pageSize + 1;
      const range = page.items.length === 0 ? 'No account'
        : `Accounts ${first}–${first + page.items.length - 1} of ${page.total}${this.filtered() ? ' that match' : ''}`;
      const controls = (rangeId) => [
        h('span', { id: rangeId, class: 'range', text: range }),
        h('button', { type: 'button', 'data-action': 'previous-page', text: 'Previous', disabled: cursors.length === 1,
          onclick: () => { cursors.pop(); changed(); } }),
        h('button', { type: 'button', 'data-action': 'next-page', text: 'Next', disabled: !page.next,
          onclick: () => { cursors.push(page.next); changed(); } })];
      pager.replaceChildren(...controls('account-range'));
      pagerTop.replaceChildren(...controls('account-range-top'));
      pager.hidden = page.total <= pageSize && cursors.length === 1;
      pagerTop.hidden = pager.hidden;
    },
  };
}
