// The throughput chart of a task's pass: the bytes its accounts copied per
// stretch of time, drawn as a small inline SVG from the figures that the
// accounts' events carry (no outside script, no request of its own).

import { h, formatBytes, formatDuration } from './dom.js';
import { progressFigures } from './events.js';
import { EventKind } from './enums.js';

const svgNS = 'http://www.w3.org/2000/svg';
const binMs = 5000; // events are grouped by 5 s: account.progress comes at most that often
const maxBars = 60;
const width = 600;
const height = 90;

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(svgNS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  el.append(...children);
  return el;
}

// throughputChart follows a task's events (add) and draws the pass under
// way, or the last one, into its section (draw). A run.started begins a
// new pass and a new chart.
export function throughputChart() {
  const section = h('section', { id: 'throughput', 'aria-labelledby': 'throughput-title', hidden: true });
  let bins = new Map(); // 5 s bin → bytes copied in it
  let start = null; // when the pass started
  let lastEvent = null;
  const copied = new Map(); // account → bytes_copied its last event said

  return {
    section,
    add(event) {
      const time = Date.parse(event.time);
      if (event.kind === EventKind.runStarted) {
        bins = new Map();
        copied.clear();
        start = time;
        lastEvent = null;
        return;
      }
      const figures = progressFigures(event);
      if (!figures || start === null) return;
      const before = copied.get(event.account_id) ?? 0;
      copied.set(event.account_id, figures.bytes_copied);
      // A figure below the last is a new attempt of the account, from zero.
      const delta = figures.bytes_copied >= before ? figures.bytes_copied - before : figures.bytes_copied;
      const bin = Math.floor((time - start) / binMs);
      bins.set(bin, (bins.get(bin) ?? 0) + delta);
      lastEvent = time;
    },
    draw(running, now = Date.now()) {
      const end = running ? now : lastEvent;
      if (start === null || end === null || bins.size === 0) {
        section.hidden = true;
        return;
      }
      const span = Math.max(end - start, binMs);
      const perBar = Math.max(1, Math.ceil(span / binMs / maxBars)); // bins per bar
      const bars = Math.max(1, Math.ceil(span / binMs / perBar));
      const rates = new Array(bars).fill(0);
      for (const [bin, bytes] of bins) rates[Math.min(bars - 1, Math.floor(bin / perBar))] += bytes;
      const seconds = (perBar * binMs) / 1000;
      for (let i = 0; i < bars; i++) rates[i] /= seconds;
      const peak = Math.max(...rates, 1);
      const total = [...bins.values()].reduce((a, b) => a + b, 0);
      const average = total / (span / 1000);
      const barWidth = width / bars;
      const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', preserveAspectRatio: 'none',
        'aria-label': `Throughput over ${formatDuration(span)}: average ${formatBytes(average)}/s, peak ${formatBytes(peak)}/s` },
      // Grid lines at the peak and at half of it, as the scale says.
      ...[1, height / 2].map((y) => svg('line', { class: 'chart-grid', x1: 0, x2: width, y1: y, y2: y })),
      ...rates.map((rate, i) => {
        const barHeight = Math.max(rate > 0 ? 1 : 0, (rate / peak) * (height - 2));
        return svg('rect', { class: 'chart-bar', x: (i * barWidth).toFixed(1), y: (height - barHeight).toFixed(1),
          width: Math.max(barWidth - 1, 1).toFixed(1), height: barHeight.toFixed(1) },
        svg('title', {}, `${formatBytes(rate)}/s`));
      }));
      section.hidden = false;
      section.replaceChildren(
        h('h2', { id: 'throughput-title', text: 'Throughput' }),
        h('p', { class: 'muted', id: 'throughput-figures',
          text: `${formatBytes(total)} in ${formatDuration(span)} · average ${formatBytes(average)}/s · peak ${formatBytes(peak)}/s` }),
        h('div', { class: 'chart-wrap' },
          // The scale: bytes a second up the side, time since the pass
          // began along the bottom.
          h('div', { class: 'chart-axes' },
            h('div', { class: 'axis-y', 'aria-hidden': 'true' },
              h('span', { text: `${formatBytes(peak)}/s` }), h('span', { text: `${formatBytes(peak / 2)}/s` }), h('span', { text: '0' })),
            chart,
            h('div', { class: 'axis-x', 'aria-hidden': 'true' },
              h('span', { text: '0 s' }), h('span', { text: formatDuration(span / 2) }), h('span', { text: formatDuration(span) })))));
    },
  };
}
