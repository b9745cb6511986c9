// a WebSocket and an EventSource opened during load that never close; after the load event, a
// fetch (200 ms) and a beacon (400 ms)
window.ticks = { ws: 0, sse: 0 };
const ws = new WebSocket('wss://' + location.host + '/ws');
ws.onmessage = () => { window.ticks.ws += 1; };
const es = new EventSource('/sse');
es.onmessage = () => { window.ticks.sse += 1; };
window.addEventListener('load', () => {
  setTimeout(() => { fetch('after.json').then((r) => r.json()); }, 200);
  setTimeout(() => { window.beaconQueued = navigator.sendBeacon('/beacon', 'page=stream'); }, 400);
});
