// a WebSocket and an EventSource opened during load that never close (on e.test, a host of their
// own: their connections carry nothing else); after the load event, a fetch (200 ms) and a
// beacon (400 ms)
window.ticks = { ws: 0, sse: 0 };
const ws = new WebSocket('wss://e.test:{PORT}/ws');
ws.onmessage = () => { window.ticks.ws += 1; };
const es = new EventSource('https://e.test:{PORT}/sse');
es.onmessage = () => { window.ticks.sse += 1; };
window.addEventListener('load', () => {
  setTimeout(() => { fetch('after.json').then((r) => r.json()); }, 200);
  setTimeout(() => { window.beaconQueued = navigator.sendBeacon('/beacon', 'page=stream'); }, 400);
});
