// install: the worker's own request (precache.json); fetch: every request of a controlled page is
// answered by the worker with its own network fetch (the page's request is from_service_worker)
self.addEventListener('install', (e) => {
  e.waitUntil(caches.open('v1').then((c) => c.add('precache.json')).then(() => self.skipWaiting()));
});
self.addEventListener('activate', (e) => { e.waitUntil(self.clients.claim()); });
self.addEventListener('fetch', (e) => {
  e.respondWith(fetch(e.request));
});
