// a WebSocket and an EventSource opened during load that never close (on e.test, a host of their
// own: their connections carry nothing else); after the load event, a fetch (200 ms) and a
// beacon (400 ms)
window.ticks = { ws: 0, sse: 0 };
// two sockets that fail before they open, as a page's socket to a server that is down or moved:
// one answered 404 (no such endpoint on e.test), one refused (nothing listens on a.test:2)
window.failed = [];
for (const url of ['wss://e.test:{PORT}/gone', 'wss://a.test:2/ws']) {
  new WebSocket(url).onerror = () => { window.failed.push(url); };
}
const ws = new WebSocket('wss://e.test:{PORT}/ws');
ws.onmessage = () => { window.ticks.ws += 1; };
const es = new EventSource('https://e.test:{PORT}/sse');
es.onmessage = () => { window.ticks.sse += 1; };
window.addEventListener('load', () => {
  setTimeout(() => { fetch('after.json').then((r) => r.json()); }, 200);
  setTimeout(() => { window.beaconQueued = navigator.sendBeacon('/beacon', 'page=stream'); }, 400);
});
